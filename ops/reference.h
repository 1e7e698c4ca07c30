// The reference semantics of the elementwise ops and reductions: a dispatch
// by op kind (generated from element_fn.def) over the element functions of
// portable_ops.h, which the CUDA code generator hands to NVRTC as well, so
// both executors compute each op with the same code.
#pragma once

#include "core/error.h"
#include "core/op_kind.h"
#include "ops/element_fn.h"
#include "ops/portable_ops.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace cumo::ref {

template <class T> constexpr bool kIsInt = std::is_integral_v<T>;
template <class T> constexpr bool kIsComplex = kIsComplexC<T>;
/// The float C types: float, double, half, bfloat16.
template <class T>
constexpr bool kIsFloatC = std::is_floating_point_v<T> || kIsNarrowFloatC<T>;

/// Whether the element function of a domain has an overload for T.
template <class T> constexpr bool admits(ElementDomain d) {
  switch (d) {
  case ElementDomain::Float: return kIsFloatC<T>;
  case ElementDomain::Int: return kIsInt<T>;
  case ElementDomain::Real: return !kIsComplex<T>;
  case ElementDomain::Complex: return kIsComplex<T>;
  case ElementDomain::Inexact: return !kIsInt<T>;
  case ElementDomain::Number: return true;
  }
  return false;
}

/// Whether `unary<T>` computes `op` (the ops answering a complex
/// operand's real class go through unaryToReal instead).
template <class T> constexpr bool unaryKeepsType(OpKind op) {
  return !(kIsComplex<T> && answersRealPart(op));
}

// The dispatches below are generated from element_fn.def: each case calls
// the op's cumo_ops function where the table says T has an overload.

template <class T> inline T unary(OpKind op, T a) {
  switch (op) {
  case OpKind::Copy: return a;
#define CUMO_UNARY_FN(Enum, Function, Domain)                                  \
  case OpKind::Enum:                                                           \
    if constexpr (admits<T>(ElementDomain::Domain) &&                          \
                  unaryKeepsType<T>(OpKind::Enum))                             \
      return cumo_ops::Function(a);                                            \
    break;
#include "ops/element_fn.def"
  default: break;
  }
  throw Error(ErrorKind::Internal, "[reference] not a unary op for this type");
}

/// abs, real, imag and arg of a complex value, in its part type.
template <class C>
inline typename RealPartOf<C>::type unaryToReal(OpKind op, C a) {
  if constexpr (kIsComplex<C>) {
    switch (op) {
    case OpKind::Abs: return cumo_ops::abs(a);
    case OpKind::Real: return cumo_ops::real_part(a);
    case OpKind::Imag: return cumo_ops::imag_part(a);
    case OpKind::Arg: return cumo_ops::arg(a);
    default: break;
    }
  }
  throw Error(ErrorKind::Internal, "[reference] not a complex-to-real op");
}

template <class T> inline T binary(OpKind op, T a, T b) {
  switch (op) {
#define CUMO_BINARY_FN(Enum, Function, Domain)                                 \
  case OpKind::Enum:                                                           \
    if constexpr (admits<T>(ElementDomain::Domain) &&                          \
                  OpKind::Enum != OpKind::MakeComplex)                         \
      return cumo_ops::Function(a, b);                                         \
    break;
#include "ops/element_fn.def"
  default: break;
  }
  throw Error(ErrorKind::Internal, "[reference] not a binary op for this type");
}

/// make_complex: a complex value from two of its part type.
template <class C>
inline C makeComplex(typename RealPartOf<C>::type re,
                     typename RealPartOf<C>::type im) {
  return cumo_ops::make_complex(re, im);
}

template <class T> inline bool compare(OpKind op, T a, T b) {
  switch (op) {
  case OpKind::Eq: return a == b;
  case OpKind::Ne: return a != b;
  default: break;
  }
  if constexpr (!kIsComplex<T>) { // complex values are not ordered
    switch (op) {
    case OpKind::Gt: return a > b;
    case OpKind::Ge: return a >= b;
    case OpKind::Lt: return a < b;
    case OpKind::Le: return a <= b;
    default: break;
    }
  }
  throw Error(ErrorKind::Internal, "[reference] not a comparison");
}

/// A predicate of one operand (isnan), answering Bit.
template <class T> inline bool predicate(OpKind op, T a) {
  switch (op) {
#define CUMO_PREDICATE_FN(Enum, Function, Domain)                              \
  case OpKind::Enum:                                                           \
    if constexpr (admits<T>(ElementDomain::Domain))                            \
      return cumo_ops::Function(a);                                            \
    break;
#include "ops/element_fn.def"
  default: break;
  }
  throw Error(ErrorKind::Internal, "[reference] not a predicate for this type");
}

/// A conversion as a store into an array of type To converts: floats to
/// integers truncate (see cumo_ops::float_to_int), integers wrap, a
/// sixteen-bit float widens exactly and rounds to nearest even on the way
/// in, a real value becomes a complex one with no imaginary part. Bit is
/// not a C type of its own: a conversion to Bit is cumo_ops::nonzero(v),
/// which callers apply where the dtype says Bit. A complex value converted
/// to a real type keeps its real part (the ops refuse that conversion
/// before it can happen; CastError).
template <class To, class From> inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>)
    return v;
  else if constexpr (kIsComplex<From> && !kIsComplex<To>)
    return convert<To>(v.re);
  else if constexpr (kIsNarrowFloatC<From> && std::is_integral_v<To>)
    return convert<To>(float(v));
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if constexpr (std::is_unsigned_v<To>)
      return To(cumo_ops::float_to_uint(v));
    else
      return To(cumo_ops::float_to_int(v));
  } else
    return To(v);
}

/// One step of a reduction's accumulation.
template <class A> inline A reduceStep(OpKind op, A acc, A v) {
  switch (op) {
  case OpKind::Sum:
  case OpKind::Mean: return cumo_ops::wadd(acc, v);
  case OpKind::Prod: return cumo_ops::wmul(acc, v);
  default: break;
  }
  if constexpr (!kIsComplex<A>) { // complex values have no maximum
    switch (op) {
    case OpKind::Max: return cumo_ops::reduce_max(acc, v);
    case OpKind::Min: return cumo_ops::reduce_min(acc, v);
    default: break;
    }
  }
  if constexpr (!kIsComplex<A> && !kIsInt<A>) {
    if (op == OpKind::QuantizeScale) // the division by 127 comes at the end
      return cumo_ops::reduce_absmax(acc, v);
  }
  throw Error(ErrorKind::Internal, "[reference] not a reduction");
}

template <class A> inline A reduceIdentity(OpKind op) {
  switch (op) {
  case OpKind::Prod: return A(1);
  case OpKind::Max:
    if constexpr (kIsInt<A>) return std::numeric_limits<A>::lowest();
    else return A(std::numeric_limits<double>::quiet_NaN()); // NaN is skipped
  case OpKind::Min:
    if constexpr (kIsInt<A>) return std::numeric_limits<A>::max();
    else return A(std::numeric_limits<double>::quiet_NaN());
  default: return A(0);
  }
}

} // namespace cumo::ref
