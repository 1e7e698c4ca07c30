// ops/math.h on the CPU executor: NMath's choice of class, the result
// classes and the refusals of each op (with their ErrorKind and the op's
// name), and the element functions of ops/portable_ops.h at the edges C
// leaves undefined or Numo defines its own way (shifts past the width,
// NaN in maximum and clip, signed zeros, frexp of infinities).
#include "ops/element_fn.h"
#include "ops/math.h"
#include "ops/portable_ops.h"

#include "test_helpers.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>

using namespace cumo;
using namespace cumo::test;

namespace {

/// The op raises `kind` with a message starting "[name] ".
template <class F> void checkRefused(ErrorKind kind, const char *name, F &&fn) {
  auto e = errorOf(fn);
  REQUIRE(e);
  CHECK(e->kind() == kind);
  CHECK(e->message().rfind(std::string("[") + name + "] ", 0) == 0);
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

} // namespace

TEST_CASE("NMath picks the class from every argument") {
  using D = DType;
  CHECK(nmathClass("sqrt", {D::SFloat}) == D::SFloat);
  CHECK(nmathClass("sqrt", {D::Int8}) == D::DFloat);
  CHECK(nmathClass("sqrt", {D::UInt64}) == D::DFloat);
  // A Ruby Float is a DFloat: it doubles an SFloat call.
  CHECK(nmathClass("atan2", {D::SFloat, D::DFloat}) == D::DFloat);
  // A Ruby Integer (Int32) or an integer array keeps it single.
  CHECK(nmathClass("atan2", {D::SFloat, D::Int32}) == D::SFloat);
  CHECK(nmathClass("atan2", {D::Int64, D::SFloat}) == D::SFloat);
  CHECK(nmathClass("hypot", {D::Int16, D::UInt8}) == D::DFloat);
  CHECK(nmathClass("hypot", {D::Bit, D::Int32}) == D::DFloat);
  checkRefused(ErrorKind::Type, "sqrt", [] { nmathClass("sqrt", {D::Bit}); });
}

TEST_CASE("math functions convert their arguments to the class") {
  H i = upload(DType::Int32, {3}, values<int>({1, 4, 9}));
  H s = wrap(mathOp(OpKind::Sqrt, DType::SFloat, {op(*i)}));
  CHECK(s->dtype() == DType::SFloat);
  CHECK(read<double>(*s) == values<double>({1, 2, 3}));
  H a = upload(DType::DFloat, {2, 1}, values<double>({3, 5}));
  H h = wrap(mathOp(OpKind::Hypot, DType::DFloat, {op(*a), op(4.0)}));
  CHECK(h->shape() == llvm::ArrayRef<int64_t>({2, 1}));
  CHECK(read<double>(*h) == values<double>({5, std::hypot(5.0, 4.0)}));
  H l = wrap(mathOp(OpKind::Ldexp, DType::DFloat, {op(*a), op(-1.5)}));
  CHECK(read<double>(*l) == values<double>({1.5, 2.5})); // exponent -1
  auto [m, e] = frexpOp(DType::SFloat, op(*i));
  CHECK(m->dtype() == DType::SFloat);
  CHECK(e->dtype() == DType::Int32);
  H hm = wrap(m), he = wrap(e);
  CHECK(read<double>(*hm) == values<double>({0.5, 0.5, 0.5625}));
  CHECK(read<int>(*he) == values<int>({1, 3, 4}));
  checkRefused(ErrorKind::Type, "sin", [&] { mathOp(OpKind::Sin, DType::Int32, {op(*i)}); });
  checkRefused(ErrorKind::Shape, "atan2", [&] {
    H b = upload(DType::DFloat, {3}, values<double>({1, 2, 3}));
    H c = upload(DType::DFloat, {2}, values<double>({1, 2}));
    mathOp(OpKind::Atan2, DType::DFloat, {op(*b), op(*c)});
  });
}

TEST_CASE("a call Numo's class does not have raises NoMethodError") {
  H f = upload(DType::DFloat, {2}, values<double>({1, 2}));
  H i = upload(DType::Int32, {2}, values<int>({1, 2}));
  H bit = upload(DType::Bit, {2}, values<int>({1, 0}));
  checkRefused(ErrorKind::NoMethod, "bit_and", [&] { bitwiseOp(OpKind::BitAnd, op(*f), opInt(1)); });
  checkRefused(ErrorKind::NoMethod, "bit_or", [&] { bitwiseOp(OpKind::BitOr, op(*i), op(0.5)); });
  checkRefused(ErrorKind::NoMethod, "left_shift",
               [&] { bitwiseOp(OpKind::LeftShift, op(*bit), opInt(1)); });
  checkRefused(ErrorKind::NoMethod, "bit_not", [&] { bitNotOp(*f); });
  checkRefused(ErrorKind::NoMethod, "isnan", [&] { predicateOp(OpKind::IsNan, *i); });
  checkRefused(ErrorKind::NoMethod, "floor", [&] { roundOp(OpKind::Floor, *bit); });
  checkRefused(ErrorKind::NoMethod, "sign", [&] { signOp(*bit); });
  checkRefused(ErrorKind::NoMethod, "square", [&] { squareOp(*bit); });
  checkRefused(ErrorKind::NoMethod, "clip", [&] {
    Operand lo = opInt(0);
    clipOp(*bit, &lo, nullptr);
  });
  checkRefused(ErrorKind::NoMethod, "copysign", [&] { copysignOp(op(*i), opInt(-1)); });
  checkRefused(ErrorKind::NoMethod, "maximum",
               [&] { extremumOp(OpKind::Fmax, DType::Bit, op(*bit), op(*bit)); });
}

TEST_CASE("result classes of the elementwise ops") {
  H i8 = upload(DType::Int8, {2}, values<int>({3, -4}));
  H u8 = upload(DType::UInt8, {2}, values<int>({5, 6}));
  H bit = upload(DType::Bit, {2}, values<int>({1, 0}));
  H f = upload(DType::SFloat, {2}, values<double>({1.5, -2}));
  CHECK(bitwiseOp(OpKind::BitAnd, op(*i8), op(*u8))->dtype() == DType::Int8);
  CHECK(bitwiseOp(OpKind::BitAnd, op(*bit), op(*i8))->dtype() == DType::Bit);
  CHECK(bitwiseOp(OpKind::BitAnd, opInt(3), op(*bit))->dtype() == DType::Bit);
  CHECK(bitwiseOp(OpKind::BitAnd, op(*i8), op(*bit))->dtype() == DType::Int8);
  CHECK(bitNotOp(*bit)->dtype() == DType::Bit);
  CHECK(predicateOp(OpKind::IsFinite, *f)->dtype() == DType::Bit);
  CHECK(copysignOp(op(*i8), op(*f))->dtype() == DType::SFloat);
  CHECK(reciprocalOp(*f)->dtype() == DType::SFloat);
  auto [q, r] = divmodOp(op(*i8), op(2.0));
  CHECK(q->dtype() == DType::DFloat);
  CHECK(r->dtype() == DType::DFloat);
  // Integer rounding is a handle onto the same storage (Numo's view).
  auto same = roundOp(OpKind::Round, *i8);
  CHECK(&same->storage() == &i8->storage());
  CHECK(roundOp(OpKind::Round, *f)->dtype() == DType::SFloat);
}

TEST_CASE("clip checks numeric bounds in the class") {
  H a = upload(DType::Int32, {4}, values<int>({0, 3, 6, 9}));
  Operand lo = op(2.7), hi = op(2.2); // Int32: clip(2, 2)
  H c = wrap(clipOp(*a, &lo, &hi));
  CHECK(read<int>(*c) == values<int>({2, 2, 2, 2}));
  Operand lo2 = opInt(5), hi2 = opInt(4);
  checkRefused(ErrorKind::Operation, "clip", [&] { clipOp(*a, &lo2, &hi2); });
  checkRefused(ErrorKind::Argument, "clip", [&] { clipOp(*a, nullptr, nullptr); });
  H u = upload(DType::UInt8, {1}, values<int>({1}));
  Operand neg = opInt(-1), five = opInt(5); // -1 is 255 in UInt8
  checkRefused(ErrorKind::Operation, "clip", [&] { clipOp(*u, &neg, &five); });
}

TEST_CASE("element functions at the edges") {
  using namespace cumo_ops;
  // Shifts past the width shift everything out (C: undefined).
  CHECK(left_shift(1, 32) == 0);
  CHECK(left_shift(1, -1) == 0);
  CHECK(right_shift(-5, 40) == -1);
  CHECK(right_shift(5, 40) == 0);
  CHECK(right_shift((signed char)-128, (signed char)7) == -1);
  CHECK(left_shift((signed char)64, (signed char)1) == -128);
  CHECK(right_shift(0xffffffffu, 31u) == 1u);
  CHECK(left_shift((unsigned long long)1, 64ull) == 0ull);
  // Numo's maximum (skips NaN) and maximum(nan: true) (answers it).
  CHECK(maximum_skipnan(kNaN, 1.0) == 1.0);
  CHECK(maximum_skipnan(1.0, kNaN) == 1.0);
  CHECK(std::isnan(maximum(1.0, kNaN)));
  CHECK(std::isnan(minimum(kNaN, 1.0)));
  CHECK(std::signbit(maximum(-0.0, 0.0))); // x >= y answers x
  CHECK(std::signbit(maximum_skipnan(-0.0, 0.0)));
  // clip keeps a NaN element; a NaN bound clips nothing.
  CHECK(std::isnan(clip_upper(clip_lower(kNaN, 0.0), 1.0)));
  CHECK(clip_lower(-3.0, kNaN) == -3.0);
  // sign: 0 for both zeros, NaN stays; unsigned 0 or 1.
  CHECK(!std::signbit(sign(-0.0)));
  CHECK(std::isnan(sign(kNaN)));
  CHECK(sign((unsigned char)200) == 1);
  CHECK(sign((short)-7) == -1);
  // rounding: round ties away from zero, rint to even.
  CHECK(m_round(2.5) == 3.0);
  CHECK(m_round(-0.5f) == -1.0f);
  CHECK(m_rint(2.5) == 2.0);
  CHECK(m_rint(-0.5f) == -0.0f);
  // frexp of infinities and NaN: the value, exponent 0.
  CHECK(m_frexp(kInf) == kInf);
  CHECK(m_frexp_exp(kInf) == 0.0);
  CHECK(m_frexp_exp(float(kNaN)) == 0.0f);
  CHECK(m_frexp_exp(1e-310) == -1029.0);
  // ldexp's exponent truncates and saturates; NaN answers NaN.
  CHECK(m_ldexp(1.0, 3.9) == 8.0);
  CHECK(m_ldexp(1.0, 1e300) == kInf);
  CHECK(m_ldexp(1.0f, -1e30f) == 0.0f);
  CHECK(std::isnan(m_ldexp(1.0, kNaN)));
  // predicates
  CHECK(m_isinf(-kInf));
  CHECK(!m_isinf(kNaN));
  CHECK(!m_isfinite(float(kNaN)));
  CHECK(m_isfinite(std::numeric_limits<float>::max()));
  CHECK(m_signbit(-0.0));
  CHECK(m_isneginf(-kInf));
  CHECK(!m_isposinf(-kInf));
  CHECK(m_sinc(0.0f) == 1.0f);
  CHECK(m_modf(-kInf) == 0.0);
  CHECK(std::signbit(m_modf(-kInf)));
}

namespace {

/// quantize_symmetric's element as the spec states it: the quotient
/// rounded ties away from zero, held to [-127, 127], 0 without a scale.
template <class T> T quantizeByDivision(T x, T scale) {
  if (!(scale > T(0)) || !std::isfinite(scale))
    return T(0);
  T q = std::round(x / scale); // NaN stays NaN (a NaN x; a row's scale is then NaN too)
  return q > T(127) ? T(127) : (q < T(-127) ? T(-127) : q);
}

/// quantize_symmetric_element against quantizeByDivision over rows of
/// random values and over the values around every tie of the row's scale
/// (the quotients k + 0.5 and their neighbours), at scales from subnormal
/// to near the largest finite.
template <class T> void checkQuantizeAgainstDivision() {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(std::numeric_limits<T>::min_exponent - 20,
                                              std::numeric_limits<T>::max_exponent - 9);
  size_t checked = 0, mismatched = 0;
  auto check = [&](T x, T scale) {
    ++checked;
    T fast = cumo_ops::quantize_symmetric_element(x, scale);
    T exact = quantizeByDivision(x, scale);
    if (!(fast == exact) && !(std::isnan(fast) && std::isnan(exact))) {
      if (++mismatched <= 5)
        FAIL_CHECK("x " << x << " scale " << scale << ": " << fast << " != " << exact);
    }
  };
  for (int row = 0; row < 4000; ++row) {
    T absmax = T(std::ldexp(0.5 + 0.5 * std::abs(unit(rng)), exponent(rng)));
    T scale = absmax / T(127);
    for (int i = 0; i < 64; ++i)
      check(T(unit(rng)) * absmax, scale);
    for (int k = -128; k < 128; ++k) {
      T tie = T((k + 0.5) * double(scale));
      for (T x : {tie, std::nextafter(tie, T(0)), std::nextafter(tie, T(1e30)),
                  std::nextafter(tie, T(-1e30))})
        check(x, scale);
    }
  }
  // Scales that are exact powers of two make exact ties.
  for (int e = -20; e < 20; ++e) {
    T scale = T(std::ldexp(1.0, e));
    for (int k = -130; k < 130; ++k)
      check(T((k + 0.5) * double(scale)), scale);
  }
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  for (T scale : {T(0), -T(1), inf, nan, std::numeric_limits<T>::denorm_min(),
                  std::numeric_limits<T>::max()})
    for (T x : {T(0), T(1), -T(3.5), inf, nan, std::numeric_limits<T>::max()})
      check(x, scale);
  CHECK(mismatched == 0);
  CHECK(checked > 1000000);
}

} // namespace

// The check a faster quotient in quantize_symmetric_element must pass (one
// by the row's reciprocal was tried and is described there); with a window
// of 1e-9 instead of its 2^-14 it failed here.
TEST_CASE("quantize_symmetric_element answers round(x / scale) held to 127 at every tie") {
  checkQuantizeAgainstDivision<float>();
  checkQuantizeAgainstDivision<double>();
  // The spec's ties: away from zero.
  CHECK(cumo_ops::quantize_symmetric_element(2.5f, 1.0f) == 3.0f);
  CHECK(cumo_ops::quantize_symmetric_element(-2.5, 1.0) == -3.0);
  CHECK(cumo_ops::quantize_symmetric_element(300.0f, 1.0f) == 127.0f);
}

TEST_CASE("quantized_to_int converts every quantized value, and NaN to 0") {
  for (int k = -4194304; k <= 4194304; k += (k > -200 && k < 200) ? 1 : 4093)
    CHECK(cumo_ops::quantized_to_int(float(k)) == k);
  CHECK(cumo_ops::quantized_to_int(-0.0f) == 0);
  CHECK(cumo_ops::quantized_to_int(std::nanf("")) == 0);
}

TEST_CASE("the element function table covers every elementwise op") {
  for (int i = 0; i <= int(OpKind::Update); ++i) {
    OpKind k = OpKind(i);
    CAPTURE(opName(k));
    OpCategory c = opCategory(k);
    bool twoOperandCompare = c == OpCategory::Compare && opArity(k) == 2;
    bool needsFunction = (c == OpCategory::Unary && k != OpKind::Copy &&
                          k != OpKind::Cast) ||
                         c == OpCategory::Binary ||
                         (c == OpCategory::Compare && !twoOperandCompare);
    CHECK(needsFunction == !elementFunction(k).empty());
    CHECK(needsFunction == elementDomain(k).has_value());
  }
}
