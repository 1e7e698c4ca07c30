// The reference semantics of the elementwise ops and reductions: a dispatch
// by op kind over the element functions of portable_ops.h, which the CUDA
// code generator hands to NVRTC as well, so both executors compute each op
// with the same code.
#pragma once

#include "core/error.h"
#include "core/op_kind.h"
#include "ops/portable_ops.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace cumo::ref {

template <class T> constexpr bool kIsInt = std::is_integral_v<T>;

template <class T> inline T unary(OpKind op, T a) {
  switch (op) {
  case OpKind::Copy: return a;
  case OpKind::Neg: return cumo_ops::wneg(a);
  case OpKind::Abs: return cumo_ops::abs(a);
  case OpKind::Sqrt:
    if constexpr (!kIsInt<T>) return std::sqrt(a);
    break;
  case OpKind::Exp:
    if constexpr (!kIsInt<T>) return std::exp(a);
    break;
  case OpKind::Log:
    if constexpr (!kIsInt<T>) return std::log(a);
    break;
  default: break;
  }
  throw Error(ErrorKind::Internal, "[reference] not a unary op for this type");
}

template <class T> inline T binary(OpKind op, T a, T b) {
  switch (op) {
  case OpKind::Add: return cumo_ops::wadd(a, b);
  case OpKind::Sub: return cumo_ops::wsub(a, b);
  case OpKind::Mul: return cumo_ops::wmul(a, b);
  case OpKind::Div: return cumo_ops::div(a, b);
  case OpKind::Mod: return cumo_ops::mod(a, b);
  case OpKind::Pow: return cumo_ops::pow(a, b);
  case OpKind::Maximum: return cumo_ops::maximum(a, b);
  case OpKind::Minimum: return cumo_ops::minimum(a, b);
  default: break;
  }
  throw Error(ErrorKind::Internal, "[reference] not a binary op");
}

template <class T> inline bool compare(OpKind op, T a, T b) {
  switch (op) {
  case OpKind::Eq: return a == b;
  case OpKind::Ne: return a != b;
  case OpKind::Gt: return a > b;
  case OpKind::Ge: return a >= b;
  case OpKind::Lt: return a < b;
  case OpKind::Le: return a <= b;
  default: break;
  }
  throw Error(ErrorKind::Internal, "[reference] not a comparison");
}

/// A conversion as a store into an array of type To converts: floats to
/// integers truncate (see cumo_ops::float_to_int), integers wrap. Bit is
/// not a C type of its own: a conversion to Bit is `v != 0`, which callers
/// apply where the dtype says Bit.
template <class To, class From> inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>)
    return v;
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if constexpr (std::is_unsigned_v<To>)
      return To(cumo_ops::float_to_uint(double(v)));
    else
      return To(cumo_ops::float_to_int(double(v)));
  } else
    return To(v);
}

/// One step of a reduction's accumulation.
template <class A> inline A reduceStep(OpKind op, A acc, A v) {
  switch (op) {
  case OpKind::Sum:
  case OpKind::Mean: return cumo_ops::wadd(acc, v);
  case OpKind::Prod: return cumo_ops::wmul(acc, v);
  case OpKind::Max: return cumo_ops::reduce_max(acc, v);
  case OpKind::Min: return cumo_ops::reduce_min(acc, v);
  default: break;
  }
  throw Error(ErrorKind::Internal, "[reference] not a reduction");
}

template <class A> inline A reduceIdentity(OpKind op) {
  switch (op) {
  case OpKind::Prod: return A(1);
  case OpKind::Max:
    if constexpr (kIsInt<A>) return std::numeric_limits<A>::lowest();
    else return std::numeric_limits<A>::quiet_NaN(); // NaN is skipped
  case OpKind::Min:
    if constexpr (kIsInt<A>) return std::numeric_limits<A>::max();
    else return std::numeric_limits<A>::quiet_NaN();
  default: return A(0);
  }
}

} // namespace cumo::ref
