// The element function table (element_fn.def) as lookups: which cumo_ops
// function computes an elementwise op and which element types it takes.
// The CPU reference and the CUDA code generator both read it.
#pragma once

#include "core/dtype.h"
#include "core/op_kind.h"

#include <optional>
#include <string_view>

namespace cumo {

/// The C element types an element function has overloads for.
enum class ElementDomain : uint8_t { Float, Int, Real, Complex, Inexact, Number };

/// Whether values of `t` are in `d` (Bit is an integer type here).
inline bool inDomain(ElementDomain d, DType t) {
  switch (d) {
  case ElementDomain::Float: return isFloat(t);
  case ElementDomain::Int: return !isFloat(t) && !isComplex(t);
  case ElementDomain::Real: return !isComplex(t);
  case ElementDomain::Complex: return isComplex(t);
  case ElementDomain::Inexact: return isFloat(t) || isComplex(t);
  case ElementDomain::Number: return true;
  }
  return false;
}

/// Unary ops whose function answers the real class for a complex operand
/// (abs, real, imag, arg); every other function answers its operand's type.
constexpr bool answersRealPart(OpKind op) {
  return op == OpKind::Abs || op == OpKind::Real || op == OpKind::Imag ||
         op == OpKind::Arg;
}

/// The name of the cumo_ops function computing `op`, or "" for ops the
/// table does not hold (Copy, Cast, two-operand comparisons).
constexpr std::string_view elementFunction(OpKind op) {
  switch (op) {
#define CUMO_UNARY_FN(Enum, Function, Domain)                                  \
  case OpKind::Enum: return #Function;
#define CUMO_BINARY_FN(Enum, Function, Domain)                                 \
  case OpKind::Enum: return #Function;
#define CUMO_PREDICATE_FN(Enum, Function, Domain)                              \
  case OpKind::Enum: return #Function;
#include "ops/element_fn.def"
  default: return "";
  }
}

/// The element types the function of `op` takes, or nullopt for ops the
/// table does not hold.
constexpr std::optional<ElementDomain> elementDomain(OpKind op) {
  switch (op) {
#define CUMO_UNARY_FN(Enum, Function, Domain)                                  \
  case OpKind::Enum: return ElementDomain::Domain;
#define CUMO_BINARY_FN(Enum, Function, Domain)                                 \
  case OpKind::Enum: return ElementDomain::Domain;
#define CUMO_PREDICATE_FN(Enum, Function, Domain)                              \
  case OpKind::Enum: return ElementDomain::Domain;
#include "ops/element_fn.def"
  default: return std::nullopt;
  }
}

} // namespace cumo
