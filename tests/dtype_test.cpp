// The element types of core/element_types.h and their element functions in
// ops/portable_ops.h: binary16 and bfloat16 conversions (exhaustively
// against an exact reference: round to nearest even from float and from
// double, saturation, subnormals, NaN), the promotion table rows of the new
// classes, and the complex functions against std::complex.
#include "core/dtype.h"
#include "core/scalar.h"
#include "ops/index_dtype.h"
#include "ops/portable_ops.h"
#include "ops/reference.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace cumo;
using cumo_ops::bfloat16;
using cumo_ops::dcomplex;
using cumo_ops::half;
using cumo_ops::scomplex;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

double widen(half h) { return double(h); }
double widen(bfloat16 b) { return double(b); }

/// Every finite non-negative value of a narrow type, ascending, with its
/// bits (the positive patterns below the infinity are in value order).
template <class T> std::vector<std::pair<double, uint16_t>> ladder(uint16_t inf) {
  std::vector<std::pair<double, uint16_t>> v;
  for (uint32_t b = 0; b < inf; ++b)
    v.push_back({widen(T::of_bits(uint16_t(b))), uint16_t(b)});
  return v;
}

/// The bits round-to-nearest-even gives `x` in a type whose non-negative
/// finite values are `vals`, and whose largest finite value's next step
/// (the first value that rounds to infinity) is `overflow`. Exact: the
/// differences of neighbours within a factor of two are exact (Sterbenz).
uint16_t reference(double x, const std::vector<std::pair<double, uint16_t>> &vals,
                   double overflow, uint16_t inf) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (a >= overflow)
    return sign | inf;
  auto hi = std::lower_bound(vals.begin(), vals.end(), std::make_pair(a, uint16_t(0)),
                             [](auto &p, auto &q) { return p.first < q.first; });
  if (hi == vals.end())
    return sign | vals.back().second; // between max and the overflow point
  if (hi->first == a)
    return sign | hi->second;
  auto lo = hi - 1;
  double dl = a - lo->first, dh = hi->first - a;
  if (dl < dh)
    return sign | lo->second;
  if (dh < dl)
    return sign | hi->second;
  return sign | ((lo->second & 1) ? hi->second : lo->second);
}

template <class T> void checkConversions(uint16_t inf, double overflow) {
  auto vals = ladder<T>(inf);
  std::mt19937_64 rng(12345);
  // Every value round-trips, and so does its negation.
  for (auto &[v, bits] : vals) {
    CHECK(T(float(v)).bits == bits);
    CHECK(T(v).bits == bits);
    CHECK(T(-v).bits == uint16_t(bits | 0x8000));
  }
  // Every midpoint (exact in double) goes to the even neighbour, and a hair
  // either side goes to the nearer one: from double directly, and from
  // float where the midpoint is a float.
  for (size_t i = 0; i + 1 < vals.size(); ++i) {
    double lo = vals[i].first, hi = vals[i + 1].first, mid = (lo + hi) / 2;
    uint16_t even = (vals[i].second & 1) ? vals[i + 1].second : vals[i].second;
    CHECK(T(mid).bits == even);
    CHECK(T(float(mid)).bits == even);
    CHECK(T(std::nextafter(mid, kInf)).bits == vals[i + 1].second);
    CHECK(T(std::nextafter(mid, -kInf)).bits == vals[i].second);
  }
  // Random doubles and floats over the whole range, against the reference;
  // the float path agrees with the double path on every float.
  for (int i = 0; i < 200000; ++i) {
    uint64_t r = rng();
    double d;
    std::memcpy(&d, &r, 8);
    if (std::isnan(d))
      continue;
    // Concentrate on the narrow type's range.
    int exponent;
    d = std::ldexp(std::frexp(d, &exponent), int(r % 300) - 150);
    CHECK(T(d).bits == reference(d, vals, overflow, inf));
    float f = float(d);
    CHECK(T(f).bits == reference(double(f), vals, overflow, inf));
    uint32_t fb = uint32_t(r >> 7);
    std::memcpy(&f, &fb, 4);
    if (!std::isnan(f))
      CHECK(T(f).bits == T(double(f)).bits);
  }
  // Infinities saturate, NaN stays NaN (quiet).
  CHECK(T(kInf).bits == inf);
  CHECK(T(-kInf).bits == uint16_t(inf | 0x8000));
  CHECK(std::isnan(widen(T(std::nan("")))));
  CHECK(std::isnan(widen(T(std::numeric_limits<float>::signaling_NaN()))));
  CHECK(std::signbit(widen(T(-0.0))));
}

} // namespace

TEST_CASE("binary16: round to nearest even from float and double, exhaustively") {
  checkConversions<half>(0x7c00, 65520.0);
  // The spec's values.
  CHECK(widen(half(2049.0)) == 2048.0);
  CHECK(widen(half(50257.0)) == 50272.0);
  CHECK(widen(half(100000.0)) == kInf);
  CHECK(widen(half(79800)) == kInf);
  CHECK(widen(half(1.0e38)) == kInf);
  CHECK(widen(half(257.0)) == 257.0);
  CHECK(widen(half(65519.99)) == 65504.0);
  CHECK(widen(half(int64_t(1) << 62)) == kInf);
  CHECK(half::of_bits(1).bits == half(5.960464477539063e-08).bits);
  CHECK(half(std::ldexp(1.0, -25)).bits == 0); // the tie below the subnormals
}

TEST_CASE("bfloat16: round to nearest even from float and double, exhaustively") {
  // The first value past the largest finite (0x7f7f) that rounds up.
  checkConversions<bfloat16>(0x7f80, std::ldexp(255.5, 120));
  CHECK(widen(bfloat16(1.0e38)) == 9.969209968386869e+37);
  CHECK(widen(bfloat16(257.0)) == 256.0);
  CHECK(widen(bfloat16(79800)) == 79872.0);
  CHECK(widen(bfloat16(1000)) == 1000.0);
  CHECK(widen(bfloat16(3.4e38)) == kInf);
  // A double just above a bfloat16 tie rounds up; through float it would
  // land on the tie and go to even.
  double x = 1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  CHECK(widen(bfloat16(x)) == 1.0078125);
  CHECK(widen(bfloat16(float(x))) == 1.0);
  CHECK(widen(bfloat16(std::ldexp(1.0, -133))) == std::ldexp(1.0, -133));
}

TEST_CASE("Scalar::as and ref::convert round the narrow types and fill complex") {
  CHECK(widen(Scalar::ofFloat(2049.0).as<half>()) == 2048.0);
  CHECK(widen(Scalar::ofInt(79800).as<bfloat16>()) == 79872.0);
  scomplex z = Scalar::ofComplex(1.5, -2.0).as<scomplex>();
  CHECK((z.re == 1.5f && z.im == -2.0f));
  dcomplex w = Scalar::ofInt(3).as<dcomplex>();
  CHECK((w.re == 3.0 && w.im == 0.0));
  CHECK(ref::convert<int>(half(-2.75)) == -2);
  CHECK(ref::convert<unsigned char>(bfloat16(300.0)) == 44); // 300 -> 300, wraps
  CHECK(widen(ref::convert<half>(bfloat16(2049.0))) == 2048.0);
  CHECK(ref::convert<dcomplex>(half(0.5)).re == 0.5);
  CHECK(ref::convert<scomplex>(dcomplex(0.1, 0.2)).im == 0.2f);
  CHECK(ref::convert<double>(dcomplex(0.1, 0.2)) == 0.1); // real part
}

TEST_CASE("float_to_int and float_to_uint from a float agree with the double path") {
  // The float overloads take a single-precision path inside 32 bits and
  // the double's outside; both must give what the double path gives, at
  // the boundaries (2^31, 2^32, 2^63, 2^64, either sign), NaN and the
  // infinities, and over a sweep of bit patterns.
  auto same = [](float v) {
    CHECK_MESSAGE(cumo_ops::float_to_int(v) == cumo_ops::float_to_int(double(v)), v);
    CHECK_MESSAGE(cumo_ops::float_to_uint(v) == cumo_ops::float_to_uint(double(v)), v);
  };
  for (float base : {0.f, 1.f, 127.f, 128.f, 2147483648.f, 4294967296.f, 9223372036854775808.f,
                     18446744073709551616.f, std::numeric_limits<float>::max()})
    for (float at : {base, std::nextafter(base, 0.f), std::nextafter(base, float(kInf))})
      for (float v : {at, -at})
        same(v);
  for (float v : {float(kInf), float(-kInf), std::nanf(""), -0.f, 0.5f, -0.5f, -127.9f, 126.99f})
    same(v);
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 65521)
    same(std::bit_cast<float>(uint32_t(bits)));
  CHECK(cumo_ops::float_to_int(-2147483648.f) == -2147483648LL);
  CHECK(cumo_ops::float_to_int(3.0e9f) == 3000000000LL);
  CHECK(int8_t(cumo_ops::float_to_int(-127.9f)) == -127);
  CHECK(cumo_ops::float_to_int(std::nanf("")) == 0);
  CHECK(cumo_ops::float_to_uint(-1.f) == 0xffffffffffffffffULL);
}

TEST_CASE("promotion of the new classes") {
  using D = DType;
  CHECK(promote(D::HFloat, D::BFloat) == D::SFloat);
  CHECK(promote(D::BFloat, D::HFloat) == D::SFloat);
  for (D i : {D::Bit, D::Int8, D::Int16, D::Int32, D::Int64, D::UInt8, D::UInt16,
              D::UInt32, D::UInt64}) {
    CAPTURE(nameOf(i));
    CHECK(promote(D::HFloat, i) == D::HFloat);
    CHECK(promote(i, D::BFloat) == D::BFloat);
    CHECK(promote(D::SComplex, i) == D::SComplex);
    CHECK(promote(i, D::DComplex) == D::DComplex);
  }
  CHECK(promote(D::HFloat, D::SFloat) == D::SFloat);
  CHECK(promote(D::DFloat, D::BFloat) == D::DFloat);
  CHECK(promote(D::SComplex, D::SFloat) == D::SComplex);
  CHECK(promote(D::SComplex, D::HFloat) == D::SComplex);
  CHECK(promote(D::DFloat, D::SComplex) == D::DComplex);
  CHECK(promote(D::SComplex, D::DComplex) == D::DComplex);
  CHECK(promote(D::DComplex, D::Int8) == D::DComplex);

  using S = ScalarKind;
  CHECK(promoteWithScalar(D::HFloat, S::Float) == D::HFloat);
  CHECK(promoteWithScalar(D::BFloat, S::Integer) == D::BFloat);
  CHECK(promoteWithScalar(D::SFloat, S::Complex) == D::SComplex);
  CHECK(promoteWithScalar(D::HFloat, S::Complex) == D::SComplex);
  CHECK(promoteWithScalar(D::DFloat, S::Complex) == D::DComplex);
  CHECK(promoteWithScalar(D::Int32, S::Complex) == D::DComplex);
  CHECK(promoteWithScalar(D::SComplex, S::Float) == D::SComplex);
  CHECK(promoteWithScalar(D::SComplex, S::Complex) == D::SComplex);
  CHECK(dtypeOfScalar(S::Complex) == D::DComplex);

  CHECK(accumulatorOf(D::HFloat) == D::SFloat);
  CHECK(accumulatorOf(D::BFloat) == D::SFloat);
  CHECK(accumulatorOf(D::SComplex) == D::SComplex);
  CHECK(realTypeOf(D::DComplex) == D::DFloat);
  CHECK(sizeOf(D::HFloat) == 2);
  CHECK(sizeOf(D::SComplex) == 8);
  CHECK(sizeOf(D::DComplex) == 16);
  CHECK(alignof(dcomplex) == 16);
}

TEST_CASE("half element functions compute in single precision and round back") {
  CHECK(widen(cumo_ops::wadd(half(2048.0), half(1.0))) == 2048.0);
  CHECK(widen(cumo_ops::wadd(half(2048.0), half(3.0))) == 2052.0);
  CHECK(widen(cumo_ops::div(half(1.0), half(3.0))) == widen(half(1.0f / 3.0f)));
  CHECK(widen(cumo_ops::m_sqrt(half(2.0))) == widen(half(std::sqrt(2.0f))));
  CHECK(widen(cumo_ops::wmul(bfloat16(256.0), bfloat16(256.0))) == 65536.0);
  CHECK(widen(cumo_ops::wmul(half(256.0), half(256.0))) == kInf);
  CHECK(cumo_ops::m_isnan(cumo_ops::div(half(0.0), half(0.0))));
  CHECK(half(1.0) < half(2.0));
  CHECK(half(2049.0) == half(2048.0));
  CHECK(widen(cumo_ops::reduce_max(half(std::nan("")), half(3.0))) == 3.0);
  CHECK(widen(ref::reduceIdentity<half>(OpKind::Prod)) == 1.0);
  CHECK(std::isnan(widen(ref::reduceIdentity<bfloat16>(OpKind::Max))));
}

namespace {

template <class C> std::complex<double> toStd(C z) { return {double(z.re), double(z.im)}; }

void checkClose(std::complex<double> want, std::complex<double> got, double tol,
                const std::string &what) {
  INFO(what, ": want ", want, ", got ", got);
  CHECK(std::abs(want - got) <= tol * std::max(1.0, std::abs(want)));
}

} // namespace

TEST_CASE("complex arithmetic and math against std::complex") {
  const std::complex<double> zs[] = {{0.5, 0.25}, {-1.5, 2.0}, {2.0, -0.75},
                                     {-0.3, -0.4}, {3.0, 0.1}};
  for (auto s : zs) {
    dcomplex z(s.real(), s.imag());
    scomplex f(float(s.real()), float(s.imag()));
    std::complex<double> sf(double(f.re), double(f.im));
    std::complex<double> t(0.75, -1.25);
    dcomplex u(t.real(), t.imag());
    checkClose(s + t, toStd(cumo_ops::wadd(z, u)), 0, "add");
    checkClose(s * t, toStd(cumo_ops::wmul(z, u)), 1e-15, "mul");
    checkClose(s / t, toStd(cumo_ops::div(z, u)), 1e-15, "div");
    checkClose(std::pow(s, t), toStd(cumo_ops::pow(z, u)), 1e-13, "pow");
    checkClose(s * s * s, toStd(cumo_ops::pow(z, dcomplex(3.0, 0.0))), 1e-15, "pow 3");
    checkClose(1.0 / (s * s), toStd(cumo_ops::pow(z, dcomplex(-2.0, 0.0))), 1e-14, "pow -2");
    CHECK(cumo_ops::abs(z) == std::hypot(s.real(), s.imag()));
    CHECK(cumo_ops::arg(z) == std::atan2(s.imag(), s.real()));
    checkClose(std::conj(s), toStd(cumo_ops::conj(z)), 0, "conj");
#define CUMO_CHECK_FN(FN, STD)                                                   \
  checkClose(STD, toStd(cumo_ops::FN(z)), 1e-13, #FN);                           \
  checkClose(STD, toStd(cumo_ops::FN(f)), 3e-5, #FN " (single)");
    CUMO_CHECK_FN(m_sqrt, std::sqrt(s))
    CUMO_CHECK_FN(m_exp, std::exp(s))
    CUMO_CHECK_FN(m_log, std::log(s))
    CUMO_CHECK_FN(m_log10, std::log10(s))
    CUMO_CHECK_FN(m_log2, std::log(s) / std::log(2.0))
    CUMO_CHECK_FN(m_exp2, std::exp(s * std::log(2.0)))
    CUMO_CHECK_FN(m_exp10, std::pow(10.0, s))
    CUMO_CHECK_FN(m_cbrt, std::pow(s, 1.0 / 3))
    CUMO_CHECK_FN(m_sin, std::sin(s))
    CUMO_CHECK_FN(m_cos, std::cos(s))
    CUMO_CHECK_FN(m_tan, std::tan(s))
    CUMO_CHECK_FN(m_sinh, std::sinh(s))
    CUMO_CHECK_FN(m_cosh, std::cosh(s))
    CUMO_CHECK_FN(m_tanh, std::tanh(s))
    CUMO_CHECK_FN(m_asin, std::asin(s))
    CUMO_CHECK_FN(m_acos, std::acos(s))
    CUMO_CHECK_FN(m_atan, std::atan(s))
    CUMO_CHECK_FN(m_asinh, std::asinh(s))
    CUMO_CHECK_FN(m_acosh, std::acosh(s))
    CUMO_CHECK_FN(m_atanh, std::atanh(s))
    CUMO_CHECK_FN(m_sinc, std::sin(s) / s)
#undef CUMO_CHECK_FN
    (void)sf;
  }
  // tan and tanh far from the axis take the other branch of Numo's formula.
  checkClose(std::tan(std::complex<double>(0.3, 5.0)),
             toStd(cumo_ops::m_tan(dcomplex(0.3, 5.0))), 1e-13, "tan, |Im| > 1");
  checkClose(std::tanh(std::complex<double>(-4.0, 0.7)),
             toStd(cumo_ops::m_tanh(dcomplex(-4.0, 0.7))), 1e-13, "tanh, |Re| > 1");
  // Exact cases.
  dcomplex sq = cumo_ops::pow(dcomplex(1.0, 2.0), dcomplex(2.0, 0.0));
  CHECK((sq.re == -3.0 && sq.im == 4.0));
  dcomplex one = cumo_ops::pow(dcomplex(0.0, 0.0), dcomplex(0.0, 0.0));
  CHECK((one.re == 1.0 && one.im == 0.0));
  dcomplex r = cumo_ops::m_sqrt(dcomplex(-4.0, 0.0));
  CHECK((r.re == 0.0 && r.im == 2.0));
  CHECK(cumo_ops::nonzero(scomplex(0.0f, -1.0f)));
  CHECK_FALSE(cumo_ops::nonzero(dcomplex(0.0, 0.0)));
  CHECK(dcomplex(1.0, 2.0) == dcomplex(1.0, 2.0));
  CHECK(dcomplex(1.0, 2.0) != dcomplex(1.0, -2.0));
}

TEST_CASE("complex generators: both parts drawn, the real part as the real class's") {
  for (unsigned long long i = 0; i < 1000; ++i) {
    scomplex s = cumo_ops::rand_scomplex(0, 0, 1, 2, 77 + i, 5);
    CHECK(s.re == cumo_ops::rand_float(0.0f, 1.0f, 77 + i, 5));
    CHECK((s.im >= 0.0f && s.im < 2.0f));
    dcomplex d = cumo_ops::rand_dcomplex(-1, 0, 1, 1, 77 + i, 5);
    CHECK(d.re == cumo_ops::rand_double(-1.0, 1.0, 77 + i, 5));
    CHECK((d.im >= 0.0 && d.im < 1.0));
  }
  dcomplex q = cumo_ops::seq_dcomplex(1, 1, 0, 1, 2);
  CHECK((q.re == 1.0 && q.im == 3.0));
}

TEST_CASE("an index result is Int32 while every index fits, then Int64") {
  // The largest index of n elements is n - 1: 2**31 elements end at
  // INT32_MAX, one more would wrap (Numo keeps Int32 to 2**32 - 1).
  CHECK(indexResultType(0) == DType::Int32);
  CHECK(indexResultType(1) == DType::Int32);
  CHECK(indexResultType(int64_t(1) << 31) == DType::Int32);
  CHECK(indexResultType((int64_t(1) << 31) + 1) == DType::Int64);
  CHECK(indexResultType((int64_t(1) << 32) - 1) == DType::Int64);
  CHECK(indexResultType(int64_t(1) << 40) == DType::Int64);
}
