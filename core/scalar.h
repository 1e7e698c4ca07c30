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
  /// A Ruby Complex is kept as its real part `f` and imaginary part `im`.
  enum class Kind : uint8_t { Int, Float, Complex } kind = Kind::Int;
  int64_t i = 0;
  double f = 0.0;
  double im = 0.0;

  static Scalar ofInt(int64_t v) { return {Kind::Int, v, double(v), 0.0}; }
  static Scalar ofFloat(double v) { return {Kind::Float, int64_t(0), v, 0.0}; }
  static Scalar ofComplex(double re, double imag) {
    return {Kind::Complex, int64_t(0), re, imag};
  }
  /// Float or Complex: a value with a fraction, as opposed to an Integer.
  bool isFloat() const { return kind != Kind::Int; }
  bool isComplex() const { return kind == Kind::Complex; }
  /// The value (the real part of a complex one) as a double.
  double asDouble() const { return isFloat() ? f : double(i); }
  /// A real 1 (gemm's alpha or beta that scales nothing).
  bool isOne() const { return !isComplex() && asDouble() == 1.0; }
  ScalarKind scalarKind() const {
    switch (kind) {
    case Kind::Int: return ScalarKind::Integer;
    case Kind::Float: return ScalarKind::Float;
    case Kind::Complex: return ScalarKind::Complex;
    }
    return ScalarKind::Float;
  }
  bool operator==(const Scalar &o) const {
    auto same = [](double a, double b) {
      return std::isnan(a) ? std::isnan(b) : a == b;
    };
    return kind == o.kind && i == o.i && same(f, o.f) && same(im, o.im);
  }

  /// The value converted to the C type of a dtype, as a store into an array
  /// of that dtype converts it (floats to integers truncate; out of range
  /// wraps like C's conversion to the unsigned type of the same width; a
  /// double rounds to a sixteen-bit float to nearest even; a real value is
  /// a complex one with no imaginary part). A complex value converted to a
  /// real type keeps its real part: callers refuse that conversion first.
  template <class T> T as() const {
    if constexpr (kIsComplexC<T>) {
      using R = typename RealPartOf<T>::type;
      return isFloat() ? T(R(f), R(im)) : T(R(i), R(0));
    } else if constexpr (kIsNarrowFloatC<T>)
      return isFloat() ? T(f) : T(i);
    else if constexpr (std::is_floating_point_v<T>)
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
