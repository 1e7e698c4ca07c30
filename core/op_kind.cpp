#include "core/op_kind.h"

namespace cumo {

namespace {
struct OpRow {
  std::string_view name;
  int arity;
};
constexpr OpRow kOps[] = {
#define CUMO_OP(Enum, Name, Category, Arity) {Name, Arity},
#include "core/op_kind.def"
};
} // namespace

std::string_view opName(OpKind op) { return kOps[int(op)].name; }
int opArity(OpKind op) { return kOps[int(op)].arity; }

} // namespace cumo
