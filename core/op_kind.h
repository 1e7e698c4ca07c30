// The table of op kinds (op_kind.def) as an enum with its names and
// categories.
#pragma once

#include <cstdint>
#include <string_view>

namespace cumo {

enum class OpKind : uint8_t {
#define CUMO_OP(Enum, Name, Category, Arity) Enum,
#include "core/op_kind.def"
};

enum class OpCategory : uint8_t {
  Source,
  Unary,
  Binary,
  Compare,
  View,
  Reshape,
  Reduce,
  Update,
  Opaque,
};

std::string_view opName(OpKind op);
int opArity(OpKind op);

namespace detail {
/// Each op's category, in the header: recording, hashing and planning ask
/// it of every node (an out-of-line call was 1.6% of the CG loop's host
/// time).
inline constexpr OpCategory kOpCategories[] = {
#define CUMO_OP(Enum, Name, Category, Arity) OpCategory::Category,
#include "core/op_kind.def"
};
} // namespace detail

inline OpCategory opCategory(OpKind op) { return detail::kOpCategories[int(op)]; }

/// Computed per element from inputs at the same coordinates (broadcast).
inline bool isElementwise(OpKind op) {
  auto c = opCategory(op);
  return c == OpCategory::Unary || c == OpCategory::Binary ||
         c == OpCategory::Compare;
}
/// QuantizeScale answers max|x| / kQuantizeLevels: the int8 grid of
/// quantize_symmetric runs from -127 to 127.
constexpr int kQuantizeLevels = 127;

inline bool isReduction(OpKind op) {
  return opCategory(op) == OpCategory::Reduce;
}
inline bool isOpaque(OpKind op) { return opCategory(op) == OpCategory::Opaque; }

} // namespace cumo
