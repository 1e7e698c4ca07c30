// Element functions written once for both executors. The CPU executor
// includes this file; the CUDA code generator hands the same text to NVRTC
// as a header, so a fused kernel computes exactly what the CPU reference
// computes (integer division, modulo, powers, casts, NaN-propagating
// max/min, and the random generator).
//
// Only what both compilers accept goes here: no std library, overloads
// per C type instead of templates with traits, math functions by their C
// names (NVRTC provides float and double overloads of each).
#ifndef CUMO_PORTABLE_OPS_H
#define CUMO_PORTABLE_OPS_H

// The storage types (half, bfloat16, scomplex, dcomplex) and CUMO_HD come
// from core/element_types.h, which the build embeds ahead of this text for
// NVRTC.
#if !defined(__CUDACC_RTC__)
#include "core/element_types.h"
#endif
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#include <math.h>
#endif

namespace cumo_ops {

// Wrapping integer arithmetic: done in the unsigned type of the same width,
// where both languages define the wrap.
#define CUMO_WRAPPING(T, U)                                                    \
  CUMO_HD T wadd(T a, T b) { return (T)((U)a + (U)b); }                        \
  CUMO_HD T wsub(T a, T b) { return (T)((U)a - (U)b); }                        \
  CUMO_HD T wmul(T a, T b) { return (T)((U)a * (U)b); }                        \
  CUMO_HD T wneg(T a) { return (T)((U)0 - (U)a); }
CUMO_WRAPPING(signed char, unsigned char)
CUMO_WRAPPING(short, unsigned short)
CUMO_WRAPPING(int, unsigned int)
CUMO_WRAPPING(long, unsigned long)
CUMO_WRAPPING(long long, unsigned long long)
CUMO_WRAPPING(unsigned char, unsigned char)
CUMO_WRAPPING(unsigned short, unsigned short)
CUMO_WRAPPING(unsigned int, unsigned int)
CUMO_WRAPPING(unsigned long, unsigned long)
CUMO_WRAPPING(unsigned long long, unsigned long long)
#undef CUMO_WRAPPING
CUMO_HD float wadd(float a, float b) { return a + b; }
CUMO_HD float wsub(float a, float b) { return a - b; }
CUMO_HD float wmul(float a, float b) { return a * b; }
CUMO_HD float wneg(float a) { return -a; }
CUMO_HD double wadd(double a, double b) { return a + b; }
CUMO_HD double wsub(double a, double b) { return a - b; }
CUMO_HD double wmul(double a, double b) { return a * b; }
CUMO_HD double wneg(double a) { return -a; }

// Division truncates toward zero and the remainder takes the dividend's
// sign, as C and Numo compute them (not Ruby's floored %). By zero both
// answer 0, since a kernel cannot raise; MIN / -1 wraps to MIN.
#define CUMO_SIGNED_DIV(T)                                                     \
  CUMO_HD T div(T a, T b) {                                                    \
    if (b == 0) return 0;                                                      \
    if (b == (T)-1) return wneg(a);                                            \
    return (T)(a / b);                                                         \
  }                                                                            \
  CUMO_HD T mod(T a, T b) {                                                    \
    if (b == 0 || b == (T)-1) return 0;                                        \
    return (T)(a % b);                                                         \
  }
#define CUMO_UNSIGNED_DIV(T)                                                   \
  CUMO_HD T div(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }              \
  CUMO_HD T mod(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }
CUMO_SIGNED_DIV(signed char)
CUMO_SIGNED_DIV(short)
CUMO_SIGNED_DIV(int)
CUMO_SIGNED_DIV(long)
CUMO_SIGNED_DIV(long long)
CUMO_UNSIGNED_DIV(unsigned char)
CUMO_UNSIGNED_DIV(unsigned short)
CUMO_UNSIGNED_DIV(unsigned int)
CUMO_UNSIGNED_DIV(unsigned long)
CUMO_UNSIGNED_DIV(unsigned long long)
#undef CUMO_SIGNED_DIV
#undef CUMO_UNSIGNED_DIV
CUMO_HD float div(float a, float b) { return a / b; }
CUMO_HD double div(double a, double b) { return a / b; }
CUMO_HD float mod(float a, float b) { return fmodf(a, b); }
CUMO_HD double mod(double a, double b) { return fmod(a, b); }

// Integer powers by repeated squaring, wrapping; a negative exponent gives
// 0, whatever the base, as Numo's pow_int does.
#define CUMO_INT_POW(T, U, SIGNED)                                             \
  CUMO_HD T pow(T a, T b) {                                                    \
    if (SIGNED && b < (T)0)                                                    \
      return (T)0;                                                             \
    U base = (U)a, result = 1;                                                 \
    for (U e = (U)b; e; e >>= 1) {                                             \
      if (e & 1) result = (U)(result * base);                                  \
      base = (U)(base * base);                                                 \
    }                                                                          \
    return (T)result;                                                          \
  }
CUMO_INT_POW(signed char, unsigned char, 1)
CUMO_INT_POW(short, unsigned short, 1)
CUMO_INT_POW(int, unsigned int, 1)
CUMO_INT_POW(long, unsigned long, 1)
CUMO_INT_POW(long long, unsigned long long, 1)
CUMO_INT_POW(unsigned char, unsigned char, 0)
CUMO_INT_POW(unsigned short, unsigned short, 0)
CUMO_INT_POW(unsigned int, unsigned int, 0)
CUMO_INT_POW(unsigned long, unsigned long, 0)
CUMO_INT_POW(unsigned long long, unsigned long long, 0)
#undef CUMO_INT_POW
CUMO_HD float pow(float a, float b) { return powf(a, b); }
CUMO_HD double pow(double a, double b) { return ::pow(a, b); }

// Absolute values and NaN-propagating maximum and minimum.
#define CUMO_INT_MISC(T, SIGNED)                                               \
  CUMO_HD T abs(T a) { return (SIGNED && a < (T)0) ? wneg(a) : a; }           \
  CUMO_HD T maximum(T a, T b) { return a > b ? a : b; }                        \
  CUMO_HD T minimum(T a, T b) { return a < b ? a : b; }
CUMO_INT_MISC(signed char, 1)
CUMO_INT_MISC(short, 1)
CUMO_INT_MISC(int, 1)
CUMO_INT_MISC(long, 1)
CUMO_INT_MISC(long long, 1)
CUMO_INT_MISC(unsigned char, 0)
CUMO_INT_MISC(unsigned short, 0)
CUMO_INT_MISC(unsigned int, 0)
CUMO_INT_MISC(unsigned long, 0)
CUMO_INT_MISC(unsigned long long, 0)
#undef CUMO_INT_MISC
// Floats: maximum and minimum propagate NaN, as Numo's maximum(nan: true)
// (f_maximum_nan: x when x >= y or x is NaN, else y); the _skipnan forms
// are Numo's default maximum and minimum, which answer the other operand
// where one is NaN (f_maximum).
#define CUMO_FLOAT_MISC(T, ABS)                                                \
  CUMO_HD T abs(T a) { return ABS(a); }                                        \
  CUMO_HD T maximum(T a, T b) { return (a >= b || a != a) ? a : b; }           \
  CUMO_HD T minimum(T a, T b) { return (a <= b || a != a) ? a : b; }           \
  CUMO_HD T maximum_skipnan(T a, T b) { return (a >= b || b != b) ? a : b; }   \
  CUMO_HD T minimum_skipnan(T a, T b) { return (a <= b || b != b) ? a : b; }
CUMO_FLOAT_MISC(float, fabsf)
CUMO_FLOAT_MISC(double, fabs)
#undef CUMO_FLOAT_MISC

// Integers: no NaN, so both forms are one; sign answers -1, 0 or 1.
#define CUMO_INT_MINMAX(T)                                                     \
  CUMO_HD T maximum_skipnan(T a, T b) { return a >= b ? a : b; }               \
  CUMO_HD T minimum_skipnan(T a, T b) { return a <= b ? a : b; }
#define CUMO_SIGNED_SIGN(T)                                                    \
  CUMO_INT_MINMAX(T)                                                           \
  CUMO_HD T sign(T a) { return a == (T)0 ? (T)0 : (a < (T)0 ? (T)-1 : (T)1); }
#define CUMO_UNSIGNED_SIGN(T)                                                  \
  CUMO_INT_MINMAX(T)                                                           \
  CUMO_HD T sign(T a) { return a == (T)0 ? (T)0 : (T)1; }
CUMO_SIGNED_SIGN(signed char)
CUMO_SIGNED_SIGN(short)
CUMO_SIGNED_SIGN(int)
CUMO_SIGNED_SIGN(long)
CUMO_SIGNED_SIGN(long long)
CUMO_UNSIGNED_SIGN(unsigned char)
CUMO_UNSIGNED_SIGN(unsigned short)
CUMO_UNSIGNED_SIGN(unsigned int)
CUMO_UNSIGNED_SIGN(unsigned long)
CUMO_UNSIGNED_SIGN(unsigned long long)
#undef CUMO_SIGNED_SIGN
#undef CUMO_UNSIGNED_SIGN
#undef CUMO_INT_MINMAX
// Numo's m_sign: 0 for either zero, NaN stays NaN.
CUMO_HD float sign(float a) {
  return a == 0.0f ? 0.0f : (a > 0.0f ? 1.0f : (a < 0.0f ? -1.0f : a));
}
CUMO_HD double sign(double a) {
  return a == 0.0 ? 0.0 : (a > 0.0 ? 1.0 : (a < 0.0 ? -1.0 : a));
}

// clip(min, max) as Numo's loop computes it, one bound at a time: a NaN
// element stays NaN, and a NaN bound clips nothing.
#define CUMO_CLIP(T)                                                           \
  CUMO_HD T clip_lower(T x, T lo) { return x < lo ? lo : x; }                  \
  CUMO_HD T clip_upper(T x, T hi) { return x > hi ? hi : x; }
CUMO_CLIP(signed char)
CUMO_CLIP(short)
CUMO_CLIP(int)
CUMO_CLIP(long)
CUMO_CLIP(long long)
CUMO_CLIP(unsigned char)
CUMO_CLIP(unsigned short)
CUMO_CLIP(unsigned int)
CUMO_CLIP(unsigned long)
CUMO_CLIP(unsigned long long)
CUMO_CLIP(float)
CUMO_CLIP(double)
#undef CUMO_CLIP

// Bitwise operations of the integer types (Bit's 0 and 1 among them).
// Shifts are done in the unsigned type of the same width; a count outside
// 0 ... bits-1 (C leaves it undefined) shifts everything out: 0 to the
// left, the sign to the right, as numpy defines it.
#define CUMO_BITWISE(T, U, SHIFTED_OUT)                                        \
  CUMO_HD T bit_and(T a, T b) { return (T)(a & b); }                           \
  CUMO_HD T bit_or(T a, T b) { return (T)(a | b); }                            \
  CUMO_HD T bit_xor(T a, T b) { return (T)(a ^ b); }                           \
  CUMO_HD T bit_not(T a) { return (T)~a; }                                     \
  CUMO_HD T left_shift(T a, T b) {                                             \
    return (U)b < (U)(sizeof(T) * 8) ? (T)((U)a << (U)b) : (T)0;               \
  }                                                                            \
  CUMO_HD T right_shift(T a, T b) {                                            \
    return (U)b < (U)(sizeof(T) * 8) ? (T)(a >> (U)b) : (T)(SHIFTED_OUT);      \
  }
CUMO_BITWISE(signed char, unsigned char, a < 0 ? -1 : 0)
CUMO_BITWISE(short, unsigned short, a < 0 ? -1 : 0)
CUMO_BITWISE(int, unsigned int, a < 0 ? -1 : 0)
CUMO_BITWISE(long, unsigned long, a < 0 ? -1 : 0)
CUMO_BITWISE(long long, unsigned long long, a < 0 ? -1 : 0)
CUMO_BITWISE(unsigned char, unsigned char, 0)
CUMO_BITWISE(unsigned short, unsigned short, 0)
CUMO_BITWISE(unsigned int, unsigned int, 0)
CUMO_BITWISE(unsigned long, unsigned long, 0)
CUMO_BITWISE(unsigned long long, unsigned long long, 0)
#undef CUMO_BITWISE

// Positions of index arrays whose values are on the device (ops/
// device_index.h), in Int64; the other integer types only complete the
// table's domain. index_normalize answers index i along an axis of n
// (negative from the end), or -1 when it is out of range: a kernel cannot
// raise, so the gather or write that reads the position flags it.
// index_add sums two terms of a position and stays -1 once either term is
// negative (an out-of-range index times its axis's stride).
#define CUMO_INDEX_POSITION(T, U)                                              \
  CUMO_HD T index_normalize(T i, T n) {                                        \
    const T p = i < 0 ? (T)((U)i + (U)n) : i;                                  \
    return (p >= 0 && p < n) ? p : (T)-1;                                      \
  }                                                                            \
  CUMO_HD T index_add(T a, T b) {                                              \
    return (a < 0 || b < 0) ? (T)-1 : (T)((U)a + (U)b);                        \
  }
#define CUMO_UNSIGNED_INDEX_POSITION(T)                                        \
  CUMO_HD T index_normalize(T i, T n) { return i < n ? i : (T)-1; }            \
  CUMO_HD T index_add(T a, T b) { return (T)(a + b); }
CUMO_INDEX_POSITION(signed char, unsigned char)
CUMO_INDEX_POSITION(short, unsigned short)
CUMO_INDEX_POSITION(int, unsigned int)
CUMO_INDEX_POSITION(long, unsigned long)
CUMO_INDEX_POSITION(long long, unsigned long long)
CUMO_UNSIGNED_INDEX_POSITION(unsigned char)
CUMO_UNSIGNED_INDEX_POSITION(unsigned short)
CUMO_UNSIGNED_INDEX_POSITION(unsigned int)
CUMO_UNSIGNED_INDEX_POSITION(unsigned long)
CUMO_UNSIGNED_INDEX_POSITION(unsigned long long)
#undef CUMO_INDEX_POSITION
#undef CUMO_UNSIGNED_INDEX_POSITION

// Math of the float classes, each computed in its own precision (sinf for
// SFloat, sin for DFloat) by the C functions both compilers provide; the
// last bit may differ between glibc and CUDA's library.
#define CUMO_MATH1(NAME, FN)                                                   \
  CUMO_HD float m_##NAME(float x) { return FN##f(x); }                         \
  CUMO_HD double m_##NAME(double x) { return FN(x); }
#define CUMO_MATH2(NAME, FN)                                                   \
  CUMO_HD float m_##NAME(float x, float y) { return FN##f(x, y); }             \
  CUMO_HD double m_##NAME(double x, double y) { return FN(x, y); }
CUMO_MATH1(sqrt, sqrt)
CUMO_MATH1(cbrt, cbrt)
CUMO_MATH1(exp, exp)
CUMO_MATH1(exp2, exp2)
CUMO_MATH1(exp10, exp10)
CUMO_MATH1(expm1, expm1)
CUMO_MATH1(log, log)
CUMO_MATH1(log2, log2)
CUMO_MATH1(log10, log10)
CUMO_MATH1(log1p, log1p)
CUMO_MATH1(sin, sin)
CUMO_MATH1(cos, cos)
CUMO_MATH1(tan, tan)
CUMO_MATH1(asin, asin)
CUMO_MATH1(acos, acos)
CUMO_MATH1(atan, atan)
CUMO_MATH1(sinh, sinh)
CUMO_MATH1(cosh, cosh)
CUMO_MATH1(tanh, tanh)
CUMO_MATH1(asinh, asinh)
CUMO_MATH1(acosh, acosh)
CUMO_MATH1(atanh, atanh)
CUMO_MATH1(erf, erf)
CUMO_MATH1(erfc, erfc)
CUMO_MATH1(floor, floor)
CUMO_MATH1(ceil, ceil)
CUMO_MATH1(round, round)
CUMO_MATH1(rint, rint)
CUMO_MATH1(trunc, trunc)
CUMO_MATH2(atan2, atan2)
CUMO_MATH2(hypot, hypot)
CUMO_MATH2(copysign, copysign)
#undef CUMO_MATH1
#undef CUMO_MATH2

// The activations, as the spec's Fused Operations define them (a sixteen-
// bit float computes each in single precision and rounds once, as every
// element function of one does):
//   gelu       0.5 * x * (1 + erf(x / sqrt(2))), as PyTorch's approximate='none'
//   gelu_tanh  0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//   silu       x / (1 + exp(-x)): one division, not x * sigmoid(x)
//   sigmoid    1 / (1 + exp(-x)) for x >= 0, and exp(x) / (1 + exp(x))
//              below, which keeps exp's argument negative (no overflow)
//   softplus   log(1 + exp(x)), the sum before the logarithm; x itself
//              where exp(x) overflows
// -Infinity answers NaN in gelu, gelu_tanh and silu (infinity times zero).
#define CUMO_ACTIVATIONS(T, SQRT1_2, BETA, EXP, LOG, ERF, TANH)                \
  CUMO_HD T m_gelu(T x) { return (T)0.5 * x * ((T)1 + ERF(x * (T)SQRT1_2)); }  \
  CUMO_HD T m_gelu_tanh(T x) {                                                 \
    T inner = (T)BETA * (x + (T)0.044715 * (x * x * x));                       \
    return (T)0.5 * x * ((T)1 + TANH(inner));                                  \
  }                                                                            \
  CUMO_HD T m_silu(T x) { return x / ((T)1 + EXP(-x)); }                       \
  CUMO_HD T m_sigmoid(T x) {                                                   \
    if (x >= (T)0)                                                             \
      return (T)1 / ((T)1 + EXP(-x));                                          \
    T e = EXP(x);                                                              \
    return e / ((T)1 + e);                                                     \
  }                                                                            \
  CUMO_HD T m_softplus(T x) {                                                  \
    T e = EXP(x);                                                              \
    bool overflowed = e == e && e - e != e - e; /* inf - inf is NaN */         \
    return overflowed ? x : LOG((T)1 + e);                                     \
  }
CUMO_ACTIVATIONS(float, 0.70710678118654752440, 0.79788456080286535588, expf, logf,
                 erff, tanhf)
CUMO_ACTIVATIONS(double, 0.70710678118654752440, 0.79788456080286535588, exp, log,
                 erf, tanh)
#undef CUMO_ACTIVATIONS

// A divisor that a row's elements share (its deviation, root mean square,
// sum of exponentials): quotient(x, divisor<A>(d)) is x / d, the same bits.
// Why: on the device a float division is a reciprocal estimate refined by
// a Newton step, a product, one correction, a range check and a branch to
// a slow path, about ten instructions an element, and the BFloat row ops
// were bound by their instructions (ncu, H100). divisor<float> refines the
// reciprocal once; quotient then takes the division's last three
// operations, in its order, where x and d keep every intermediate a normal
// number, and the division itself elsewhere (zeros, tiny or huge values,
// NaN and infinity). Those are the instructions the compiler's division
// runs on its fast path, so the bits are the division's; the gpu suite's
// device_arithmetic test checks it for every significand of x.
template <class A> struct divisor {
  A d;
  CUMO_HD explicit divisor(A v) : d(v) {}
  CUMO_HD A divide(A x) const { return x / d; }
};
#if defined(__CUDA_ARCH__)
template <> struct divisor<float> {
  float d, r;
  bool fast;
  __device__ explicit divisor(float v) : d(v) {
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(v));
    r = fmaf(y, fmaf(-v, y, 1.0f), y);
    const float m = fabsf(v);
    fast = m >= 0x1p-40f && m < 0x1p40f;
  }
  __device__ float divide(float x) const {
    const float m = fabsf(x);
    if (fast && m >= 0x1p-64f && m < 0x1p64f) {
      const float q = x * r;
      return fmaf(fmaf(-q, d, x), r, q);
    }
    return x / d;
  }
};
#endif
template <class A> CUMO_HD A quotient(A x, A d) { return x / d; }
template <class A> CUMO_HD A quotient(A x, const divisor<A> &d) { return d.divide(x); }

// The fused row operations' per-element formulas (ops/row_ops.h), in the
// accumulator class A, written as the spec writes them: a division by the
// row's sqrt(var + eps), not a multiplication by its reciprocal. D is A,
// or divisor<A> for the same division (above).
template <class A, class D>
CUMO_HD A layer_norm_element(A x, A mean, const D &sd, A gamma, A beta) {
  return quotient(x - mean, sd) * gamma + beta;
}
template <class A, class D> CUMO_HD A rms_norm_element(A x, const D &rms, A gamma) {
  return quotient(x, rms) * gamma;
}

// sinc(x) = sin(x) / x, and 1 at 0 (Numo's m_sinc).
CUMO_HD float m_sinc(float x) { return x == 0.0f ? 1.0f : sinf(x) / x; }
CUMO_HD double m_sinc(double x) { return x == 0.0 ? 1.0 : sin(x) / x; }

// ldexp takes its exponent in the array's class, as Numo casts both
// arguments to it: truncated toward zero, and beyond +-100000 (where every
// finite x has already overflowed or vanished) held there, since C leaves
// the conversion of a huge or NaN float to int undefined. A NaN exponent
// answers NaN.
CUMO_HD int ldexp_exponent(double e) {
  return e >= 100000.0 ? 100000 : (e <= -100000.0 ? -100000 : (int)e);
}
CUMO_HD float m_ldexp(float x, float e) {
  return e != e ? e : ldexpf(x, ldexp_exponent((double)e));
}
CUMO_HD double m_ldexp(double x, double e) {
  return e != e ? e : ldexp(x, ldexp_exponent(e));
}

// frexp: the mantissa in [0.5, 1) and the exponent, which is answered in
// the float class (the op converts it to Int32). Infinities and NaN keep
// their value with exponent 0, as both libraries do for the mantissa.
CUMO_HD float m_frexp(float x) { int e; return frexpf(x, &e); }
CUMO_HD double m_frexp(double x) { int e; return frexp(x, &e); }
CUMO_HD float m_frexp_exp(float x) {
  int e = 0;
  frexpf(x, &e);
  return (fabsf(x) <= 3.40282347e+38f) ? (float)e : 0.0f;
}
CUMO_HD double m_frexp_exp(double x) {
  int e = 0;
  frexp(x, &e);
  return (fabs(x) <= 1.7976931348623157e+308) ? (double)e : 0.0;
}

// modf's fractional part (its integral part is trunc).
CUMO_HD float m_modf(float x) { float i; return modff(x, &i); }
CUMO_HD double m_modf(double x) { double i; return modf(x, &i); }

// Predicates of the float classes, by comparison only (no macros from
// either library's headers).
#define CUMO_FLOAT_PREDICATES(T, MAX, COPYSIGN)                                \
  CUMO_HD bool m_isnan(T x) { return x != x; }                                 \
  CUMO_HD bool m_isinf(T x) { return x > MAX || x < -MAX; }                    \
  CUMO_HD bool m_isfinite(T x) { return x <= MAX && x >= -MAX; }               \
  CUMO_HD bool m_signbit(T x) { return COPYSIGN((T)1, x) < (T)0; }             \
  CUMO_HD bool m_isposinf(T x) { return x > MAX; }                             \
  CUMO_HD bool m_isneginf(T x) { return x < -MAX; }
CUMO_FLOAT_PREDICATES(float, 3.40282347e+38f, copysignf)
CUMO_FLOAT_PREDICATES(double, 1.7976931348623157e+308, copysign)
#undef CUMO_FLOAT_PREDICATES

// An integer-valued float of at most 2^22 in magnitude (a quantized
// element) as an int: its bits after adding 1.5 * 2^23, where the device's
// float-to-integer conversion runs at a quarter of an addition's rate and
// float_to_int's at an eighth (64-bit). NaN gives 0, as float_to_int's.
CUMO_HD int quantized_to_int(float v) {
  if (v != v)
    return 0;
  return (int)(f32_bits(v + 12582912.f) - 0x4B400000u);
}

// quantize_symmetric's element: x / scale rounded with ties away from zero
// (C's round, Ruby's Float#round), held to [-127, 127]; 0 where the row
// has no usable scale (all zeros, or an infinity or a NaN in it).
//
// The float quotient is divisor<float>'s: the bits of the division (the
// gpu suite's device_arithmetic test checks every significand). A row
// kernel builds the scale's divisor once a row and calls
// quantize_symmetric_by (fusion/cuda_rowwise_codegen.cpp); the compiler
// does not merge the divisors that quantize_symmetric_element builds for
// each element (their reciprocal is inline assembly).
//
// History: x times the row's reciprocal, with the division taken only
// within 2^-14 of a half-integer (where the two could round apart), was
// slower on an H100 (SFloat 4096 x 4096: 46.7 us against 45.4; 32768 x
// 1024: 90.6 against 83.1, 2026-12-05); the test of this function in
// tests/math_test.cpp is the check any such path must pass. Rounding in
// additions (a + 2^23 - 2^23, a tie that went down put up) instead of
// round() was slower too (H100, 2026-12-08, bench/kernel_times: BFloat
// 32768 x 1024 85.6 us against 79.7, 4096 x 4096 42.4 against 39.4), and
// the divisor made no difference (85.0 with the division an element).
CUMO_HD float quantize_symmetric_by(float x, float scale, const divisor<float> &by) {
  if (!(scale > 0.f) || !m_isfinite(scale))
    return 0.f;
  float q = m_round(quotient(x, by));
  return q > 127.f ? 127.f : (q < -127.f ? -127.f : q); /* kQuantizeLevels */
}
CUMO_HD float quantize_symmetric_element(float x, float scale) {
  return quantize_symmetric_by(x, scale, divisor<float>(scale));
}
CUMO_HD double quantize_symmetric_element(double x, double scale) {
  if (!(scale > 0.0) || !m_isfinite(scale))
    return 0.0;
  double q = m_round(x / scale);
  return q > 127.0 ? 127.0 : (q < -127.0 ? -127.0 : q); /* kQuantizeLevels */
}

// The largest |v| folded, NaN once one was seen (identity 0). It also
// combines two partial results, which are never negative.
#define CUMO_REDUCE_ABSMAX(T)                                                  \
  CUMO_HD T reduce_absmax(T acc, T v) {                                        \
    if (acc != acc)                                                            \
      return acc;                                                              \
    if (v != v)                                                                \
      return v;                                                                \
    T m = v < (T)0 ? -v : v;                                                   \
    return m > acc ? m : acc;                                                  \
  }
CUMO_REDUCE_ABSMAX(float)
CUMO_REDUCE_ABSMAX(double)
#undef CUMO_REDUCE_ABSMAX

// max and min as reductions: NaN is skipped, as Numo's max and min skip it
// by default, so the answer is NaN only when every element is NaN (the
// float identity is NaN).
#define CUMO_REDUCE_MINMAX(T)                                                  \
  CUMO_HD T reduce_max(T acc, T v) {                                           \
    return (v != v) ? acc : ((acc != acc || v > acc) ? v : acc);               \
  }                                                                            \
  CUMO_HD T reduce_min(T acc, T v) {                                           \
    return (v != v) ? acc : ((acc != acc || v < acc) ? v : acc);               \
  }
CUMO_REDUCE_MINMAX(signed char)
CUMO_REDUCE_MINMAX(short)
CUMO_REDUCE_MINMAX(int)
CUMO_REDUCE_MINMAX(long)
CUMO_REDUCE_MINMAX(long long)
CUMO_REDUCE_MINMAX(unsigned char)
CUMO_REDUCE_MINMAX(unsigned short)
CUMO_REDUCE_MINMAX(unsigned int)
CUMO_REDUCE_MINMAX(unsigned long)
CUMO_REDUCE_MINMAX(unsigned long long)
CUMO_REDUCE_MINMAX(float)
CUMO_REDUCE_MINMAX(double)
#undef CUMO_REDUCE_MINMAX

// A float converted to an integer type truncates toward zero; NaN gives 0
// and values past int64's range saturate at its ends before narrowing
// (C leaves all three undefined).
CUMO_HD long long float_to_int(double v) {
#if defined(__CUDA_ARCH__)
  // Two instructions on the device: see float_to_int(float) below.
  long long r;
  asm("cvt.rzi.s64.f64 %0, %1;" : "=l"(r) : "d"(v));
  return v != v ? 0 : r;
#else
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return (long long)0x7fffffffffffffffLL;
  if (v <= -9.2233720368547758e18) return (long long)(-0x7fffffffffffffffLL - 1);
  return (long long)v;
#endif
}
CUMO_HD unsigned long long float_to_uint(double v) {
  // Unsigned targets take negative values through int64 and wrap, as
  // Numo's conversion does; values past int64 saturate there too.
#if defined(__CUDA_ARCH__)
  unsigned long long r;
  if (v >= 9.2233720368547758e18)
    asm("cvt.rzi.u64.f64 %0, %1;" : "=l"(r) : "d"(v));
  else
    r = (unsigned long long)float_to_int(v);
  return r;
#else
  if (v != v) return 0;
  if (v >= 1.8446744073709552e19) return 0xffffffffffffffffULL;
  if (v >= 9.2233720368547758e18) return (unsigned long long)v;
  return (unsigned long long)float_to_int(v);
#endif
}
// The same conversions from a single-precision float: on the host within
// 32 bits in single precision and outside through the double's path (float
// widens to it exactly).
CUMO_HD long long float_to_int(float v) {
#if defined(__CUDA_ARCH__)
  // cvt.rzi.s64.f32 truncates and clamps to int64's range (PTX ISA, cvt:
  // float-to-integer conversions saturate by default); NaN it turns into
  // int64's smallest value (H100, tests/codegen_test.cpp's "float to
  // integer casts at the edges"), so it is tested apart. The host path
  // below, with its fallback through doubles, held quantize_symmetric's
  // Int8 cast to 80 registers, where a plain (int) took 48 (ptxas sm_90),
  // and its kernel to 45.4 us at SFloat 4096 x 4096 against 42.0 with the
  // cvt (H100, 2026-12-05).
  long long r;
  asm("cvt.rzi.s64.f32 %0, %1;" : "=l"(r) : "f"(v));
  return v != v ? 0 : r;
#else
  if (v >= -2147483648.f && v < 2147483648.f)
    return (int)v;
  return float_to_int((double)v);
#endif
}
CUMO_HD unsigned long long float_to_uint(float v) {
#if defined(__CUDA_ARCH__)
  // Past int64's range the unsigned conversion (clamped at 2^64 - 1);
  // below, the signed one, wrapped as the host path wraps it.
  unsigned long long r;
  if (v >= 9.2233720368547758e18f)
    asm("cvt.rzi.u64.f32 %0, %1;" : "=l"(r) : "f"(v));
  else
    r = (unsigned long long)float_to_int(v);
  return r;
#else
  if (v >= -2147483648.f && v < 2147483648.f)
    return (unsigned long long)(long long)(int)v;
  return float_to_uint((double)v);
#endif
}

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011): a counter-based generator, so element i of a rand array is
// a pure function of (seed, counter + i) and any executor, in any order,
// draws the same numbers.
struct Philox4 {
  unsigned int v[4];
};
CUMO_HD unsigned int mulhi32(unsigned int a, unsigned int b) {
  return (unsigned int)(((unsigned long long)a * b) >> 32);
}
CUMO_HD Philox4 philox4x32(unsigned long long counter, unsigned long long key) {
  unsigned int c0 = (unsigned int)counter, c1 = (unsigned int)(counter >> 32);
  unsigned int c2 = 0, c3 = 0;
  unsigned int k0 = (unsigned int)key, k1 = (unsigned int)(key >> 32);
  for (int round = 0; round < 10; ++round) {
    unsigned int hi0 = mulhi32(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    unsigned int hi1 = mulhi32(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    unsigned int n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  Philox4 r = {{c0, c1, c2, c3}};
  return r;
}
/// Uniform in [0, 1) with 24 random bits (single precision).
CUMO_HD float uniform_float(unsigned long long counter, unsigned long long key) {
  return (float)(philox4x32(counter, key).v[0] >> 8) * (1.0f / 16777216.0f);
}
/// Uniform in [0, 1) with 53 random bits (double precision).
CUMO_HD double uniform_double(unsigned long long counter, unsigned long long key) {
  Philox4 r = philox4x32(counter, key);
  unsigned long long bits = ((unsigned long long)(r.v[0] >> 5) << 26) | (r.v[1] >> 6);
  return (double)bits * (1.0 / 9007199254740992.0);
}
/// Uniform 64 random bits.
CUMO_HD unsigned long long uniform_bits(unsigned long long counter,
                                        unsigned long long key) {
  Philox4 r = philox4x32(counter, key);
  return ((unsigned long long)r.v[0] << 32) | r.v[1];
}

// Generators: element i of seq and rand, for the dtypes' computation types.
CUMO_HD double seq_double(double start, double step, long long i) {
  return start + step * (double)i;
}
CUMO_HD long long seq_int(long long start, long long step, long long i) {
  return (long long)((unsigned long long)start +
                     (unsigned long long)step * (unsigned long long)i);
}
CUMO_HD float rand_float(float low, float high, unsigned long long counter,
                         unsigned long long key) {
  return low + (high - low) * uniform_float(counter, key);
}
CUMO_HD double rand_double(double low, double high, unsigned long long counter,
                           unsigned long long key) {
  return low + (high - low) * uniform_double(counter, key);
}
CUMO_HD long long rand_int(long long low, long long high,
                           unsigned long long counter, unsigned long long key) {
  unsigned long long span = (unsigned long long)high - (unsigned long long)low;
  if (high <= low)
    return low;
  return (long long)((unsigned long long)low + uniform_bits(counter, key) % span);
}

// ---- binary16 and bfloat16 -------------------------------------------------
// Every element function of a sixteen-bit float widens its operands to
// single precision (exactly), computes there, and rounds the result back
// to nearest even: a fused chain rounds each intermediate as the unfused
// op would store it.

CUMO_HD float to_f32(half a) { return (float)a; }
CUMO_HD float to_f32(bfloat16 a) { return (float)a; }

#define CUMO_NARROW_UNARY(T, F)                                                \
  CUMO_HD T F(T a) { return T(F((float)a)); }
#define CUMO_NARROW_BINARY(T, F)                                               \
  CUMO_HD T F(T a, T b) { return T(F((float)a, (float)b)); }
#define CUMO_NARROW_PREDICATE(T, F)                                            \
  CUMO_HD bool F(T a) { return F((float)a); }
#define CUMO_NARROW_COMPARE(T, OP)                                             \
  CUMO_HD bool operator OP(T a, T b) { return (float)a OP (float)b; }
#define CUMO_NARROW_FUNCTIONS(T)                                               \
  CUMO_NARROW_UNARY(T, wneg)                                                   \
  CUMO_NARROW_UNARY(T, abs)                                                    \
  CUMO_NARROW_UNARY(T, sign)                                                   \
  CUMO_NARROW_UNARY(T, m_floor)                                                \
  CUMO_NARROW_UNARY(T, m_ceil)                                                 \
  CUMO_NARROW_UNARY(T, m_round)                                                \
  CUMO_NARROW_UNARY(T, m_rint)                                                 \
  CUMO_NARROW_UNARY(T, m_trunc)                                                \
  CUMO_NARROW_UNARY(T, m_sqrt)                                                 \
  CUMO_NARROW_UNARY(T, m_cbrt)                                                 \
  CUMO_NARROW_UNARY(T, m_exp)                                                  \
  CUMO_NARROW_UNARY(T, m_exp2)                                                 \
  CUMO_NARROW_UNARY(T, m_exp10)                                                \
  CUMO_NARROW_UNARY(T, m_expm1)                                                \
  CUMO_NARROW_UNARY(T, m_log)                                                  \
  CUMO_NARROW_UNARY(T, m_log2)                                                 \
  CUMO_NARROW_UNARY(T, m_log10)                                                \
  CUMO_NARROW_UNARY(T, m_log1p)                                                \
  CUMO_NARROW_UNARY(T, m_sin)                                                  \
  CUMO_NARROW_UNARY(T, m_cos)                                                  \
  CUMO_NARROW_UNARY(T, m_tan)                                                  \
  CUMO_NARROW_UNARY(T, m_asin)                                                 \
  CUMO_NARROW_UNARY(T, m_acos)                                                 \
  CUMO_NARROW_UNARY(T, m_atan)                                                 \
  CUMO_NARROW_UNARY(T, m_sinh)                                                 \
  CUMO_NARROW_UNARY(T, m_cosh)                                                 \
  CUMO_NARROW_UNARY(T, m_tanh)                                                 \
  CUMO_NARROW_UNARY(T, m_asinh)                                                \
  CUMO_NARROW_UNARY(T, m_acosh)                                                \
  CUMO_NARROW_UNARY(T, m_atanh)                                                \
  CUMO_NARROW_UNARY(T, m_erf)                                                  \
  CUMO_NARROW_UNARY(T, m_erfc)                                                 \
  CUMO_NARROW_UNARY(T, m_gelu)                                                 \
  CUMO_NARROW_UNARY(T, m_gelu_tanh)                                            \
  CUMO_NARROW_UNARY(T, m_silu)                                                 \
  CUMO_NARROW_UNARY(T, m_sigmoid)                                              \
  CUMO_NARROW_UNARY(T, m_softplus)                                             \
  CUMO_NARROW_UNARY(T, m_sinc)                                                 \
  CUMO_NARROW_UNARY(T, m_frexp)                                                \
  CUMO_NARROW_UNARY(T, m_frexp_exp)                                            \
  CUMO_NARROW_UNARY(T, m_modf)                                                 \
  CUMO_NARROW_BINARY(T, div)                                                   \
  CUMO_NARROW_BINARY(T, mod)                                                   \
  CUMO_NARROW_BINARY(T, pow)                                                   \
  CUMO_NARROW_BINARY(T, maximum)                                               \
  CUMO_NARROW_BINARY(T, minimum)                                               \
  CUMO_NARROW_BINARY(T, maximum_skipnan)                                       \
  CUMO_NARROW_BINARY(T, minimum_skipnan)                                       \
  CUMO_NARROW_BINARY(T, clip_lower)                                            \
  CUMO_NARROW_BINARY(T, clip_upper)                                            \
  CUMO_NARROW_BINARY(T, m_atan2)                                               \
  CUMO_NARROW_BINARY(T, m_hypot)                                               \
  CUMO_NARROW_BINARY(T, m_ldexp)                                               \
  CUMO_NARROW_BINARY(T, m_copysign)                                            \
  CUMO_NARROW_BINARY(T, quantize_symmetric_element)                            \
  CUMO_NARROW_BINARY(T, reduce_absmax)                                         \
  CUMO_NARROW_BINARY(T, reduce_max)                                            \
  CUMO_NARROW_BINARY(T, reduce_min)                                            \
  CUMO_NARROW_PREDICATE(T, m_isnan)                                            \
  CUMO_NARROW_PREDICATE(T, m_isinf)                                            \
  CUMO_NARROW_PREDICATE(T, m_isfinite)                                         \
  CUMO_NARROW_PREDICATE(T, m_signbit)                                          \
  CUMO_NARROW_PREDICATE(T, m_isposinf)                                         \
  CUMO_NARROW_PREDICATE(T, m_isneginf)                                         \
  CUMO_NARROW_COMPARE(T, ==)                                                   \
  CUMO_NARROW_COMPARE(T, !=)                                                   \
  CUMO_NARROW_COMPARE(T, <)                                                    \
  CUMO_NARROW_COMPARE(T, >)                                                    \
  CUMO_NARROW_COMPARE(T, <=)                                                   \
  CUMO_NARROW_COMPARE(T, >=)                                                   \
  CUMO_HD bool nonzero(T a) { return (float)a != 0.0f; }
CUMO_NARROW_FUNCTIONS(half)
CUMO_NARROW_FUNCTIONS(bfloat16)

// Sum, difference and product: on the device the class's own instruction
// where it has one (binary16 from sm_53, bfloat16 from sm_90), one op
// where the float path is a widening, the float op and a rounding with its
// NaN test (ptxas, sm_90: a BFloat written-out layer_norm 5296 -> 3888
// instructions). The same bits: the float op rounds the exact result to 24
// bits, and rounding that again to p bits is the exact result's rounding
// whenever 24 >= 2p + 2 (p = 11 and 8), subnormals included (float holds
// every binary16 result exactly and has bfloat16's range); a NaN comes out
// as the device's one NaN either way (the float op answers its canonical
// NaN, which both roundings keep as 0x7fff). device_arithmetic's test
// compares every pair of bit patterns on the GPU. On the host, and for
// other archs, the float path.
#define CUMO_FLOAT_PATH_ARITHMETIC(T, F, OP)                                   \
  CUMO_HD T F(T a, T b) { return T(F((float)a, (float)b)); }
#define CUMO_DEVICE_ARITHMETIC(T, F, OP, TYPE)                                 \
  CUMO_HD T F(T a, T b) {                                                      \
    unsigned short r;                                                          \
    asm(OP ".rn." TYPE " %0, %1, %2;" : "=h"(r) : "h"(a.bits), "h"(b.bits));   \
    return T::of_bits(r);                                                      \
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
#define CUMO_HALF_ARITHMETIC(F, OP) CUMO_DEVICE_ARITHMETIC(half, F, OP, "f16")
#else
#define CUMO_HALF_ARITHMETIC(F, OP) CUMO_FLOAT_PATH_ARITHMETIC(half, F, OP)
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CUMO_BFLOAT16_ARITHMETIC(F, OP) CUMO_DEVICE_ARITHMETIC(bfloat16, F, OP, "bf16")
#else
#define CUMO_BFLOAT16_ARITHMETIC(F, OP) CUMO_FLOAT_PATH_ARITHMETIC(bfloat16, F, OP)
#endif
CUMO_HALF_ARITHMETIC(wadd, "add")
CUMO_HALF_ARITHMETIC(wsub, "sub")
CUMO_HALF_ARITHMETIC(wmul, "mul")
CUMO_BFLOAT16_ARITHMETIC(wadd, "add")
CUMO_BFLOAT16_ARITHMETIC(wsub, "sub")
CUMO_BFLOAT16_ARITHMETIC(wmul, "mul")
#undef CUMO_HALF_ARITHMETIC
#undef CUMO_BFLOAT16_ARITHMETIC
#undef CUMO_DEVICE_ARITHMETIC
#undef CUMO_FLOAT_PATH_ARITHMETIC
#undef CUMO_NARROW_FUNCTIONS
#undef CUMO_NARROW_UNARY
#undef CUMO_NARROW_BINARY
#undef CUMO_NARROW_PREDICATE
#undef CUMO_NARROW_COMPARE

// A value's truth as a conversion to Bit takes it: nonzero.
#define CUMO_NONZERO(T)                                                        \
  CUMO_HD bool nonzero(T a) { return a != (T)0; }
CUMO_NONZERO(signed char)
CUMO_NONZERO(short)
CUMO_NONZERO(int)
CUMO_NONZERO(long)
CUMO_NONZERO(long long)
CUMO_NONZERO(unsigned char)
CUMO_NONZERO(unsigned short)
CUMO_NONZERO(unsigned int)
CUMO_NONZERO(unsigned long)
CUMO_NONZERO(unsigned long long)
CUMO_NONZERO(float)
CUMO_NONZERO(double)
#undef CUMO_NONZERO

// ---- complex ----------------------------------------------------------------
// scomplex computes with the float functions, dcomplex with the double
// ones, by the formulas of Numo's complex.h (division scaled by the
// divisor's modulus; tan and tanh split at |Im| and |Re| of 1). Numo's
// log2, log10, exp2 and exp10 have slips (log2 scales z rather than
// log z; exp2 leaves the imaginary part unscaled): here they are
// log(z) * log2(e), log(z) * log10(e), exp(z * ln 2) and exp(z * ln 10);
// and acosh keeps to the principal branch (C99's and numpy's) where
// Numo's sqrt(z*z - 1) leaves it.
// A power with an integral real exponent multiplies (as Numo does for an
// Integer exponent), so (1+2i)**2 is -3+4i exactly; any other power is
// exp(y * log(x)).

#define CUMO_COMPLEX_FUNCTIONS(C, R)                                           \
  CUMO_HD C wadd(C a, C b) { return C(a.re + b.re, a.im + b.im); }             \
  CUMO_HD C wsub(C a, C b) { return C(a.re - b.re, a.im - b.im); }             \
  CUMO_HD C wmul(C a, C b) {                                                   \
    return C(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);            \
  }                                                                            \
  CUMO_HD C wneg(C a) { return C(-a.re, -a.im); }                              \
  CUMO_HD C div(C a, C b) {                                                    \
    R s = m_hypot(b.re, b.im);                                                 \
    R yr = b.re / s, yi = b.im / s;                                            \
    return C((a.re * yr + a.im * yi) / s, (a.im * yr - a.re * yi) / s);        \
  }                                                                            \
  CUMO_HD R abs(C a) { return m_hypot(a.re, a.im); }                           \
  CUMO_HD R real_part(C a) { return a.re; }                                    \
  CUMO_HD R imag_part(C a) { return a.im; }                                    \
  CUMO_HD R arg(C a) { return m_atan2(a.im, a.re); }                           \
  CUMO_HD C conj(C a) { return C(a.re, -a.im); }                               \
  CUMO_HD C sign(C a) { return C(sign(a.re), sign(a.im)); }                    \
  CUMO_HD C m_floor(C a) { return C(m_floor(a.re), m_floor(a.im)); }          \
  CUMO_HD C m_ceil(C a) { return C(m_ceil(a.re), m_ceil(a.im)); }              \
  CUMO_HD C m_round(C a) { return C(m_round(a.re), m_round(a.im)); }          \
  CUMO_HD C m_rint(C a) { return C(m_rint(a.re), m_rint(a.im)); }              \
  CUMO_HD C m_trunc(C a) { return C(m_trunc(a.re), m_trunc(a.im)); }          \
  CUMO_HD C m_copysign(C a, C b) {                                             \
    return C(m_copysign(a.re, b.re), m_copysign(a.im, b.im));                  \
  }                                                                            \
  CUMO_HD bool m_isnan(C a) { return m_isnan(a.re) || m_isnan(a.im); }         \
  CUMO_HD bool m_isinf(C a) { return m_isinf(a.re) || m_isinf(a.im); }         \
  CUMO_HD bool m_isposinf(C a) {                                               \
    return m_isposinf(a.re) || m_isposinf(a.im);                               \
  }                                                                            \
  CUMO_HD bool m_isneginf(C a) {                                               \
    return m_isneginf(a.re) || m_isneginf(a.im);                               \
  }                                                                            \
  CUMO_HD bool m_isfinite(C a) {                                               \
    return m_isfinite(a.re) && m_isfinite(a.im);                               \
  }                                                                            \
  CUMO_HD bool operator==(C a, C b) { return a.re == b.re && a.im == b.im; }   \
  CUMO_HD bool operator!=(C a, C b) { return a.re != b.re || a.im != b.im; }   \
  CUMO_HD bool nonzero(C a) { return a.re != (R)0 || a.im != (R)0; }           \
  CUMO_HD C c_square(C a) {                                                    \
    return C(a.re * a.re - a.im * a.im, (R)2 * a.re * a.im);                   \
  }                                                                            \
  CUMO_HD C c_reciprocal(C x) {                                                \
    C z;                                                                       \
    if (abs(x.re) > abs(x.im)) {                                               \
      z.im = x.im / x.re;                                                      \
      z.re = ((R)1 + z.im * z.im) * x.re;                                      \
      z.im /= -z.re;                                                           \
      z.re = (R)1 / z.re;                                                      \
    } else {                                                                   \
      z.re = x.re / x.im;                                                      \
      z.im = ((R)1 + z.re * z.re) * x.im;                                      \
      z.re /= z.im;                                                            \
      z.im = (R)-1 / z.im;                                                     \
    }                                                                          \
    return z;                                                                  \
  }                                                                            \
  CUMO_HD C m_sqrt(C x) {                                                      \
    R xr = x.re / (R)2, xi = x.im / (R)2;                                      \
    R r = m_hypot(xr, xi);                                                     \
    if (xr > (R)0) {                                                           \
      R re = m_sqrt(r + xr);                                                   \
      return C(re, xi / re);                                                   \
    }                                                                          \
    if ((r -= xr) != (R)0) {                                                   \
      R im = xi >= (R)0 ? m_sqrt(r) : -m_sqrt(r);                              \
      return C(xi / im, im);                                                   \
    }                                                                          \
    return C((R)0, (R)0);                                                      \
  }                                                                            \
  CUMO_HD C m_log(C x) {                                                       \
    return C(m_log(m_hypot(x.re, x.im)), m_atan2(x.im, x.re));                 \
  }                                                                            \
  CUMO_HD C m_log2(C x) {                                                      \
    C z = m_log(x);                                                            \
    return C(z.re * (R)1.4426950408889634, z.im * (R)1.4426950408889634);      \
  }                                                                            \
  CUMO_HD C m_log10(C x) {                                                     \
    C z = m_log(x);                                                            \
    return C(z.re * (R)0.4342944819032518, z.im * (R)0.4342944819032518);      \
  }                                                                            \
  CUMO_HD C m_exp(C x) {                                                       \
    R a = m_exp(x.re);                                                         \
    return C(a * m_cos(x.im), a * m_sin(x.im));                                \
  }                                                                            \
  CUMO_HD C m_exp2(C x) {                                                      \
    return m_exp(C(x.re * (R)0.6931471805599453, x.im * (R)0.6931471805599453)); \
  }                                                                            \
  CUMO_HD C m_exp10(C x) {                                                     \
    return m_exp(C(x.re * (R)2.302585092994046, x.im * (R)2.302585092994046)); \
  }                                                                            \
  CUMO_HD C m_sin(C x) {                                                       \
    return C(m_sin(x.re) * m_cosh(x.im), m_cos(x.re) * m_sinh(x.im));          \
  }                                                                            \
  CUMO_HD C m_cos(C x) {                                                       \
    return C(m_cos(x.re) * m_cosh(x.im), -m_sin(x.re) * m_sinh(x.im));         \
  }                                                                            \
  CUMO_HD C m_sinh(C x) {                                                      \
    return C(m_sinh(x.re) * m_cos(x.im), m_cosh(x.re) * m_sin(x.im));          \
  }                                                                            \
  CUMO_HD C m_cosh(C x) {                                                      \
    return C(m_cosh(x.re) * m_cos(x.im), m_sinh(x.re) * m_sin(x.im));          \
  }                                                                            \
  CUMO_HD C m_tan(C x) {                                                       \
    R c, d;                                                                    \
    if (abs(x.im) < (R)1) {                                                    \
      c = m_cos(x.re);                                                         \
      d = m_sinh(x.im);                                                        \
      d = c * c + d * d;                                                       \
      return C((R)0.5 * m_sin((R)2 * x.re) / d,                                \
               (R)0.5 * m_sinh((R)2 * x.im) / d);                              \
    }                                                                          \
    d = m_exp(-x.im);                                                          \
    c = (R)2 * d / ((R)1 - d * d);                                             \
    c = c * c;                                                                 \
    d = m_cos(x.re);                                                           \
    d = (R)1 + d * d * c;                                                      \
    return C((R)0.5 * m_sin((R)2 * x.re) * c / d, (R)1 / m_tanh(x.im) / d);    \
  }                                                                            \
  CUMO_HD C m_tanh(C x) {                                                      \
    R c = m_cos(x.im), s = m_sinh(x.re);                                       \
    R d = c * c + s * s;                                                       \
    if (abs(x.re) < (R)1)                                                      \
      return C(s * m_cosh(x.re) / d, (R)0.5 * m_sin((R)2 * x.im) / d);         \
    c = c / s;                                                                 \
    c = (R)1 + c * c;                                                          \
    return C((R)1 / (m_tanh(x.re) * c), (R)0.5 * m_sin((R)2 * x.im) / d);      \
  }                                                                            \
  CUMO_HD C m_asin(C x) {                                                      \
    C y = c_square(x);                                                         \
    y = m_sqrt(C((R)1 - y.re, -y.im));                                         \
    y = m_log(C(y.re - x.im, y.im + x.re));                                    \
    return C(y.im, -y.re);                                                     \
  }                                                                            \
  CUMO_HD C m_acos(C x) {                                                      \
    C y = c_square(x);                                                         \
    y = m_sqrt(C((R)1 - y.re, -y.im));                                         \
    y = m_log(C(x.re - y.im, x.im + y.re));                                    \
    return C(y.im, -y.re);                                                     \
  }                                                                            \
  CUMO_HD C m_atan(C x) {                                                      \
    C y = m_log(div(C(x.re, (R)1 + x.im), C(-x.re, (R)1 - x.im)));             \
    return C(-y.im / (R)2, y.re / (R)2);                                       \
  }                                                                            \
  CUMO_HD C m_asinh(C x) {                                                     \
    C y = c_square(x);                                                         \
    y = m_sqrt(C(y.re + (R)1, y.im));                                          \
    return m_log(C(y.re + x.re, y.im + x.im));                                 \
  }                                                                            \
  CUMO_HD C m_acosh(C x) {                                                     \
    /* sqrt(z + 1) sqrt(z - 1), not Numo's sqrt(z*z - 1), which leaves the */  \
    /* principal branch (negates the answer) where Re z < 0 */                 \
    C y = wmul(m_sqrt(C(x.re + (R)1, x.im)), m_sqrt(C(x.re - (R)1, x.im)));    \
    return m_log(C(y.re + x.re, y.im + x.im));                                 \
  }                                                                            \
  CUMO_HD C m_atanh(C x) {                                                     \
    C y = m_log(div(C((R)1 + x.re, x.im), C((R)1 - x.re, -x.im)));             \
    return C(y.re / (R)2, y.im / (R)2);                                        \
  }                                                                            \
  CUMO_HD C m_cbrt(C x) {                                                      \
    C z = m_log(x);                                                            \
    return m_exp(C(z.re / (R)3, z.im / (R)3));                                 \
  }                                                                            \
  CUMO_HD C m_sinc(C x) {                                                      \
    if (x.re == (R)0 && x.im == (R)0)                                          \
      return C((R)1, (R)0);                                                    \
    return div(m_sin(x), x);                                                   \
  }                                                                            \
  CUMO_HD C pow_int(C x, int p) {                                              \
    bool invert = p < 0;                                                       \
    if (invert)                                                                \
      p = -p;                                                                  \
    C z;                                                                       \
    if (p == 2) {                                                              \
      z = c_square(x);                                                         \
    } else {                                                                   \
      z = (p & 1) ? x : C((R)1, (R)0);                                         \
      for (p >>= 1; p; p >>= 1) {                                              \
        x = c_square(x);                                                       \
        if (p & 1)                                                             \
          z = wmul(z, x);                                                      \
      }                                                                        \
    }                                                                          \
    return invert ? c_reciprocal(z) : z;                                       \
  }                                                                            \
  CUMO_HD C pow(C x, C y) {                                                    \
    if (y.re == (R)0 && y.im == (R)0)                                          \
      return C((R)1, (R)0);                                                    \
    if (x.re == (R)0 && x.im == (R)0 && y.re > (R)0 && y.im == (R)0)           \
      return C((R)0, (R)0);                                                    \
    if (y.im == (R)0 && m_floor(y.re) == y.re && abs(y.re) < (R)1073741824)    \
      return pow_int(x, (int)y.re);                                            \
    return m_exp(wmul(y, m_log(x)));                                           \
  }
CUMO_COMPLEX_FUNCTIONS(scomplex, float)
CUMO_COMPLEX_FUNCTIONS(dcomplex, double)
#undef CUMO_COMPLEX_FUNCTIONS
// A complex value from its parts (set_real, set_imag, im).
CUMO_HD scomplex make_complex(float re, float im) { return scomplex(re, im); }
CUMO_HD dcomplex make_complex(double re, double im) { return dcomplex(re, im); }

// Generators of the complex classes: seq steps both parts, computed in
// double and rounded once as SFloat's and DFloat's seq are; rand draws the
// real and the imaginary part separately from one counter (the real part
// is the number SFloat or DFloat draws there).
CUMO_HD scomplex seq_scomplex(double ar, double ai, double br, double bi,
                              long long i) {
  return scomplex((float)seq_double(ar, br, i), (float)seq_double(ai, bi, i));
}
CUMO_HD dcomplex seq_dcomplex(double ar, double ai, double br, double bi,
                              long long i) {
  return dcomplex(seq_double(ar, br, i), seq_double(ai, bi, i));
}
CUMO_HD scomplex rand_scomplex(double lr, double li, double hr, double hi,
                               unsigned long long counter,
                               unsigned long long key) {
  Philox4 r = philox4x32(counter, key);
  float u0 = (float)(r.v[0] >> 8) * (1.0f / 16777216.0f);
  float u1 = (float)(r.v[1] >> 8) * (1.0f / 16777216.0f);
  float flr = (float)lr, fli = (float)li;
  return scomplex(flr + ((float)hr - flr) * u0, fli + ((float)hi - fli) * u1);
}
CUMO_HD dcomplex rand_dcomplex(double lr, double li, double hr, double hi,
                               unsigned long long counter,
                               unsigned long long key) {
  Philox4 r = philox4x32(counter, key);
  unsigned long long b0 = ((unsigned long long)(r.v[0] >> 5) << 26) | (r.v[1] >> 6);
  unsigned long long b1 = ((unsigned long long)(r.v[2] >> 5) << 26) | (r.v[3] >> 6);
  double u0 = (double)b0 * (1.0 / 9007199254740992.0);
  double u1 = (double)b1 * (1.0 / 9007199254740992.0);
  return dcomplex(lr + (hr - lr) * u0, li + (hi - li) * u1);
}

// ---- the nan: reductions -----------------------------------------------------
// nan_to(x, fill) is fill where x is NaN (sum, prod and mean with nan: true
// skip NaN); nan_if(x, flag) is NaN where flag is nonzero (max and min with
// nan: true answer NaN for a line holding one). Float and complex classes.
#define CUMO_NAN_FUNCTIONS(T, NAN_VALUE)                                       \
  CUMO_HD T nan_to(T x, T fill) { return m_isnan(x) ? fill : x; }              \
  CUMO_HD T nan_if(T x, T flag) { return nonzero(flag) ? NAN_VALUE : x; }
// The quiet NaN of single precision, spelled without math.h (NVRTC has none).
#define CUMO_QUIET_NAN f32_of_bits(0x7fc00000u)
CUMO_NAN_FUNCTIONS(float, CUMO_QUIET_NAN)
CUMO_NAN_FUNCTIONS(double, (double)CUMO_QUIET_NAN)
CUMO_NAN_FUNCTIONS(half, half(CUMO_QUIET_NAN))
CUMO_NAN_FUNCTIONS(bfloat16, bfloat16(CUMO_QUIET_NAN))
CUMO_NAN_FUNCTIONS(scomplex, scomplex(CUMO_QUIET_NAN, CUMO_QUIET_NAN))
CUMO_NAN_FUNCTIONS(dcomplex, dcomplex((double)CUMO_QUIET_NAN, (double)CUMO_QUIET_NAN))
#undef CUMO_QUIET_NAN
#undef CUMO_NAN_FUNCTIONS

// ---- sorting ----------------------------------------------------------------
// sort_less is a total order on the values of each real class, so that any
// correct sort gives one answer, the CPU's and the GPU's alike: numbers
// ascending, -0.0 before 0.0, NaN after every number (Numo's sort), NaNs
// among themselves by their bits. median_pair is the mean of a sorted
// line's two middle elements as Numo computes it, in C's arithmetic: an
// integer narrower than int is promoted (no overflow), a wider one wraps,
// and the quotient is truncated; a sixteen-bit float adds and halves in
// single precision, rounding after each op as every op on it does.

#define CUMO_INT_SORT(T)                                                       \
  CUMO_HD bool sort_less(T a, T b) { return a < b; }
#define CUMO_NARROW_INT_MEDIAN(T)                                              \
  CUMO_HD T median_pair(T a, T b) { return (T)(((int)a + (int)b) / 2); }
#define CUMO_WIDE_INT_MEDIAN(T)                                                \
  CUMO_HD T median_pair(T a, T b) { return (T)(wadd(a, b) / (T)2); }
CUMO_INT_SORT(signed char)
CUMO_INT_SORT(short)
CUMO_INT_SORT(int)
CUMO_INT_SORT(long)
CUMO_INT_SORT(long long)
CUMO_INT_SORT(unsigned char)
CUMO_INT_SORT(unsigned short)
CUMO_INT_SORT(unsigned int)
CUMO_INT_SORT(unsigned long)
CUMO_INT_SORT(unsigned long long)
CUMO_NARROW_INT_MEDIAN(signed char)
CUMO_NARROW_INT_MEDIAN(short)
CUMO_NARROW_INT_MEDIAN(unsigned char)
CUMO_NARROW_INT_MEDIAN(unsigned short)
CUMO_WIDE_INT_MEDIAN(int)
CUMO_WIDE_INT_MEDIAN(long)
CUMO_WIDE_INT_MEDIAN(long long)
CUMO_WIDE_INT_MEDIAN(unsigned int)
CUMO_WIDE_INT_MEDIAN(unsigned long)
CUMO_WIDE_INT_MEDIAN(unsigned long long)
#undef CUMO_INT_SORT
#undef CUMO_NARROW_INT_MEDIAN
#undef CUMO_WIDE_INT_MEDIAN

/// The float order of sort_less, given the operands' values (as F, in
/// which a sixteen-bit float compares exactly) and their bit patterns.
template <class F, class B>
CUMO_HD bool float_sort_less(F a, F b, B abits, B bbits) {
  bool na = a != a, nb = b != b;
  if (na || nb)
    return na && nb ? abits < bbits : nb;
  if (a != b)
    return a < b;
  return abits > bbits; // equal: only zeros differ, and -0.0 has the sign bit
}
CUMO_HD bool sort_less(float a, float b) {
  return float_sort_less(a, b, f32_bits(a), f32_bits(b));
}
CUMO_HD bool sort_less(double a, double b) {
  return float_sort_less(a, b, f64_bits(a), f64_bits(b));
}
CUMO_HD bool sort_less(half a, half b) {
  return float_sort_less((float)a, (float)b, a.bits, b.bits);
}
CUMO_HD bool sort_less(bfloat16 a, bfloat16 b) {
  return float_sort_less((float)a, (float)b, a.bits, b.bits);
}
CUMO_HD float median_pair(float a, float b) { return (a + b) / 2.0f; }
CUMO_HD double median_pair(double a, double b) { return (a + b) / 2.0; }
CUMO_HD half median_pair(half a, half b) { return div(wadd(a, b), half(2.0f)); }
CUMO_HD bfloat16 median_pair(bfloat16 a, bfloat16 b) {
  return div(wadd(a, b), bfloat16(2.0f));
}
/// Whether a value of any real class is NaN (an integer never is).
template <class T> CUMO_HD bool sort_isnan(T a) { return a != a; }

} // namespace cumo_ops

#endif // CUMO_PORTABLE_OPS_H
