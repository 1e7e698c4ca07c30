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

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CUMO_HD __device__ __forceinline__
#else
#include <math.h>
#define CUMO_HD inline
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
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return (long long)0x7fffffffffffffffLL;
  if (v <= -9.2233720368547758e18) return (long long)(-0x7fffffffffffffffLL - 1);
  return (long long)v;
}
CUMO_HD unsigned long long float_to_uint(double v) {
  // Unsigned targets take negative values through int64 and wrap, as
  // Numo's conversion does; values past int64 saturate there too.
  if (v != v) return 0;
  if (v >= 1.8446744073709552e19) return 0xffffffffffffffffULL;
  if (v >= 9.2233720368547758e18) return (unsigned long long)v;
  return (unsigned long long)float_to_int(v);
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

} // namespace cumo_ops

#endif // CUMO_PORTABLE_OPS_H
