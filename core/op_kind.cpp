#include "core/op_kind.h"

namespace cumo {

namespace {
struct OpRow {
  std::string_view name;
  OpCategory category;
  int arity;
};
constexpr OpRow kOps[] = {
#define CUMO_OP(Enum, Name, Category, Arity) {Name, OpCategory::Category, Arity},
#include "core/op_kind.def"
};
} // namespace

std::string_view opName(OpKind op) { return kOps[int(op)].name; }
OpCategory opCategory(OpKind op) { return kOps[int(op)].category; }
int opArity(OpKind op) { return kOps[int(op)].arity; }

} // namespace cumo
