// A host-side value of one element, as a Ruby number becomes on its way in:
// kept exactly (an Integer stays an int64, a Float a double) until it is
// converted to the dtype of the op it meets.
#pragma once

#include "core/dtype.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace cumo {

struct Scalar {
  enum class Kind : uint8_t { Int, Float } kind = Kind::Int;
  int64_t i = 0;
  double f = 0.0;

  static Scalar ofInt(int64_t v) { return {Kind::Int, v, double(v)}; }
  static Scalar ofFloat(double v) { return {Kind::Float, int64_t(0), v}; }
  bool isFloat() const { return kind == Kind::Float; }
  double asDouble() const { return isFloat() ? f : double(i); }
  ScalarKind scalarKind() const {
    return isFloat() ? ScalarKind::Float : ScalarKind::Integer;
  }
  bool operator==(const Scalar &o) const {
    return kind == o.kind && i == o.i &&
           (std::isnan(f) ? std::isnan(o.f) : f == o.f);
  }

  /// The value converted to the C type of a dtype, as a store into an array
  /// of that dtype converts it (floats to integers truncate; out of range
  /// wraps like C's conversion to the unsigned type of the same width).
  template <class T> T as() const {
    if constexpr (std::is_floating_point_v<T>)
      return isFloat() ? T(f) : T(i);
    else if (isFloat())
      return floatToInt<T>(f);
    else
      return T(i);
  }

private:
  template <class T> static T floatToInt(double v) {
    if (std::isnan(v))
      return T(0);
    // Going through int64 keeps the conversion defined for every value a
    // test can produce; values beyond int64 saturate.
    if (v >= 9.2233720368547758e18)
      return T(INT64_MAX);
    if (v <= -9.2233720368547758e18)
      return T(INT64_MIN);
    return T(int64_t(v));
  }
};

} // namespace cumo
