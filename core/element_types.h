// The element types C has no spelling for: IEEE binary16 (Cumo::HFloat),
// bfloat16 (Cumo::BFloat) and the complex pairs (Cumo::SComplex,
// Cumo::DComplex), with the exact conversions between the sixteen-bit
// floats and single and double precision, written as bit manipulation.
//
// This file is the dtypes' own definition, so it lives in core/; it is
// also the first half of the text the CUDA code generator hands NVRTC (the
// build embeds it ahead of ops/portable_ops.h), so a kernel and the CPU
// executor round every value with the very same code, bit for bit. Only
// what both compilers accept goes here: no std library, no CUDA header.
//
// Every conversion to a sixteen-bit float rounds to nearest, ties to even,
// from float and from double directly (never through float, which would
// round twice), and a value past the largest finite one becomes infinity,
// as every other float type saturates. NaN stays NaN (quiet, keeping the
// top bits of its payload).
#ifndef CUMO_ELEMENT_TYPES_H
#define CUMO_ELEMENT_TYPES_H

#ifndef CUMO_HD
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CUMO_HD __device__ __forceinline__
#else
#define CUMO_HD inline
#endif
#endif

namespace cumo_ops {

// ---- bit patterns of float and double ------------------------------------

CUMO_HD unsigned int f32_bits(float f) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return __float_as_uint(f);
#else
  unsigned int u;
  __builtin_memcpy(&u, &f, 4);
  return u;
#endif
}
CUMO_HD float f32_of_bits(unsigned int u) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
#endif
}
CUMO_HD unsigned long long f64_bits(double d) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  return (unsigned long long)__double_as_longlong(d);
#else
  unsigned long long u;
  __builtin_memcpy(&u, &d, 8);
  return u;
#endif
}

// ---- rounding to a narrow float ------------------------------------------
// A float of E exponent bits and M mantissa bits (binary16: 5 and 10,
// bfloat16: 8 and 7), from the sign, the biased exponent `e` and the
// mantissa of a wider IEEE value whose mantissa has W bits and whose bias
// is B. One routine per source width, both the same algorithm.

/// Rounds the 32-bit pattern of a float to E/M bits.
CUMO_HD unsigned int narrow_from_f32_bits(unsigned int x, int E, int M) {
  const unsigned int sign = (x >> 31) << (E + M);
  const unsigned int ax = x & 0x7fffffffu;
  const unsigned int inf = ((1u << E) - 1u) << M;
  if (ax >= 0x7f800000u) {
    if (ax == 0x7f800000u)
      return sign | inf;
    return sign | inf | (1u << (M - 1)) | ((ax >> (23 - M)) & ((1u << M) - 1u));
  }
  const int bias = (1 << (E - 1)) - 1;
  const int e = (int)(ax >> 23);
  const int te = e - 127 + bias; // the target's biased exponent
  if (te >= (1 << E) - 1)
    return sign | inf;
  unsigned int m = (ax & 0x7fffffu) | (e ? 0x800000u : 0u);
  int shift;
  unsigned int h;
  if (te >= 1) { // normal: the implicit bit is carried by the exponent field
    shift = 23 - M;
    h = ((unsigned int)te << M) | ((m & 0x7fffffu) >> shift);
  } else { // subnormal in the target (or zero)
    shift = 24 - M - te;
    if (e == 0)
      shift -= 1; // a subnormal float has no implicit bit
    if (shift >= 32)
      return sign;
    h = m >> shift;
  }
  const unsigned int rem = m & ((1u << shift) - 1u);
  const unsigned int halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1u)))
    ++h; // a carry into the exponent is the next binade, or infinity
  return sign | h;
}

/// Rounds the 64-bit pattern of a double to E/M bits.
CUMO_HD unsigned int narrow_from_f64_bits(unsigned long long x, int E, int M) {
  const unsigned int sign = (unsigned int)(x >> 63) << (E + M);
  const unsigned long long ax = x & 0x7fffffffffffffffull;
  const unsigned int inf = ((1u << E) - 1u) << M;
  if (ax >= 0x7ff0000000000000ull) {
    if (ax == 0x7ff0000000000000ull)
      return sign | inf;
    return sign | inf | (1u << (M - 1)) |
           (unsigned int)((ax >> (52 - M)) & ((1u << M) - 1u));
  }
  const int bias = (1 << (E - 1)) - 1;
  const int e = (int)(ax >> 52);
  const int te = e - 1023 + bias;
  if (te >= (1 << E) - 1)
    return sign | inf;
  unsigned long long m =
      (ax & 0xfffffffffffffull) | (e ? 0x10000000000000ull : 0ull);
  int shift;
  unsigned int h;
  if (te >= 1) {
    shift = 52 - M;
    h = ((unsigned int)te << M) |
        (unsigned int)((m & 0xfffffffffffffull) >> shift);
  } else {
    shift = 53 - M - te;
    if (e == 0)
      shift -= 1;
    if (shift >= 64)
      return sign;
    h = (unsigned int)(m >> shift);
  }
  const unsigned long long rem = m & ((1ull << shift) - 1ull);
  const unsigned long long halfway = 1ull << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1u)))
    ++h;
  return sign | h;
}

#if defined(__CUDA_ARCH__)
// On the device the conversion instructions round the same way (to nearest
// even, overflow to infinity, subnormals kept) in one instruction, where
// the routine above is dozens: a fused kernel of sixteen-bit floats rounds
// at every op, and unrolled it took ptxas 20 s to compile and its threads
// most of their time. Only NaN differs (the instructions answer a canonical
// NaN): the routine keeps its sign and payload bits, as the host does,
// which for a float's NaN is a few bit operations and a select. Written
// so, not as a branch to the routine, because the compiler predicates
// that branch and every rounding then issues its dozen instructions.
CUMO_HD unsigned short half_bits_from(float f) {
  const unsigned int x = f32_bits(f);
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  // narrow_from_f32_bits(x, 5, 10) of a NaN: sign, all-ones exponent, the
  // quiet bit, the payload's top bits.
  const unsigned short nan =
      (unsigned short)(((x >> 16) & 0x8000u) | 0x7e00u | ((x >> 13) & 0x1ffu));
  return f != f ? nan : h;
}
CUMO_HD unsigned short half_bits_from(double d) {
  unsigned long long x = f64_bits(d);
  if ((x & 0x7fffffffffffffffull) > 0x7ff0000000000000ull)
    return (unsigned short)narrow_from_f64_bits(x, 5, 10);
  unsigned short h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d));
  return h;
}
#if __CUDA_ARCH__ >= 800
CUMO_HD unsigned short bfloat16_bits_from(float f) {
  const unsigned int x = f32_bits(f);
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  // narrow_from_f32_bits(x, 8, 7) of a NaN: the float's top half with the
  // quiet bit set.
  const unsigned short nan = (unsigned short)((x >> 16) | 0x40u);
  return f != f ? nan : h;
}
#else
CUMO_HD unsigned short bfloat16_bits_from(float f) {
  return (unsigned short)narrow_from_f32_bits(f32_bits(f), 8, 7);
}
#endif
#else
CUMO_HD unsigned short half_bits_from(float f) {
  return (unsigned short)narrow_from_f32_bits(f32_bits(f), 5, 10);
}
CUMO_HD unsigned short half_bits_from(double d) {
  return (unsigned short)narrow_from_f64_bits(f64_bits(d), 5, 10);
}
CUMO_HD unsigned short bfloat16_bits_from(float f) {
  return (unsigned short)narrow_from_f32_bits(f32_bits(f), 8, 7);
}
#endif
CUMO_HD unsigned short bfloat16_bits_from(double d) {
  return (unsigned short)narrow_from_f64_bits(f64_bits(d), 8, 7);
}

/// binary16 to float, exactly.
#if defined(__CUDA_ARCH__)
// On the device one instruction widens every value but NaN exactly (the
// routine below is a dozen, with branches, in every load of a sixteen-bit
// float); NaN keeps the routine's sign and payload bits, as on the host.
CUMO_HD float float_of_half_bits(unsigned short h) {
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
    return f32_of_bits(((unsigned int)(h & 0x8000u) << 16) | 0x7f800000u |
                       ((unsigned int)(h & 0x3ffu) << 13));
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
#else
CUMO_HD float float_of_half_bits(unsigned short h) {
  const unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
  const unsigned int e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu)
    return f32_of_bits(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    // m * 2^-24: exact, since m has at most 10 bits.
    float v = (float)m * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return f32_of_bits(sign | ((e + 112u) << 23) | (m << 13));
}
#endif

/// bfloat16 to float, exactly: the top half of a float.
CUMO_HD float float_of_bfloat16_bits(unsigned short b) {
  return f32_of_bits((unsigned int)b << 16);
}

// ---- the storage types -----------------------------------------------------
// Trivially copyable structs (their default constructors are trivial, so
// they may live in __shared__ arrays). Conversions are explicit: a
// sixteen-bit float never mixes into C arithmetic by accident; the element
// functions of ops/portable_ops.h widen it to float, compute, and round
// back.

/// IEEE binary16: 1 sign bit, 5 of exponent, 10 of mantissa.
struct half {
  unsigned short bits;
  half() = default;
  CUMO_HD explicit half(float f) : bits(half_bits_from(f)) {}
  CUMO_HD explicit half(double d) : bits(half_bits_from(d)) {}
  // Integers and bool go through double (exact below 2**53, and every
  // integer past 65520 is infinity anyway).
  template <class U> CUMO_HD explicit half(U v) : bits(half_bits_from((double)v)) {}
  CUMO_HD explicit operator float() const { return float_of_half_bits(bits); }
  CUMO_HD explicit operator double() const {
    return (double)float_of_half_bits(bits);
  }
  static CUMO_HD half of_bits(unsigned short b) {
    half h;
    h.bits = b;
    return h;
  }
};

/// A binary16 operand of a product widened where its NaN's payload need
/// not survive: the multiply-add that takes it answers the device's one
/// NaN whatever the payload, so on the device one cvt, without
/// float_of_half_bits's test and select, which cost the LM head's HFloat
/// matrix-vector product 30% of its time (bench/probes/gemv_lm_head.cu,
/// H100, 2026-12-05). On the host, float_of_half_bits.
CUMO_HD float float_of_half_for_product(half v) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
  return f;
#else
  return float_of_half_bits(v.bits);
#endif
}

/// bfloat16: 1 sign bit, 8 of exponent (a float's), 7 of mantissa.
struct bfloat16 {
  unsigned short bits;
  bfloat16() = default;
  CUMO_HD explicit bfloat16(float f) : bits(bfloat16_bits_from(f)) {}
  CUMO_HD explicit bfloat16(double d) : bits(bfloat16_bits_from(d)) {}
  template <class U>
  CUMO_HD explicit bfloat16(U v) : bits(bfloat16_bits_from((double)v)) {}
  CUMO_HD explicit operator float() const { return float_of_bfloat16_bits(bits); }
  CUMO_HD explicit operator double() const {
    return (double)float_of_bfloat16_bits(bits);
  }
  static CUMO_HD bfloat16 of_bits(unsigned short b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

// ---- groups of sixteen-bit floats a word at a time -----------------------
// The row kernels read and write a row a 16-byte vector at a time; these
// widen and round its words two elements each. Why: element by element,
// a BFloat row op spent about a quarter of its instructions on the
// conversions (each rounding tested for NaN and selected between two
// results; ptxas, sm_90), and those rows were bound by their
// instructions, not their bytes (ncu, H100).

/// Element 2i and 2i + 1 of a word (the low half first), widened exactly.
CUMO_HD void widen_bfloat16_word(unsigned int w, float &lo, float &hi) {
  lo = f32_of_bits(w << 16);
  hi = f32_of_bits(w & 0xffff0000u);
}

/// y[0..N) (N even) rounded to bfloat16 (BF) or binary16 into N / 2
/// words: on the device one cvt a pair where no element of the group is
/// NaN, else each by bfloat16_bits_from or half_bits_from (their NaN
/// rule, the host's).
template <bool BF, int N>
CUMO_HD void sixteen_bit_words(const float (&y)[N], unsigned int *w) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  bool number = true;
#pragma unroll
  for (int e = 0; e < N; ++e)
    number = number && y[e] == y[e];
  if (number) {
#pragma unroll
    for (int e = 0; e < N; e += 2) {
      if constexpr (BF)
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w[e / 2]) : "f"(y[e + 1]), "f"(y[e]));
      else
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w[e / 2]) : "f"(y[e + 1]), "f"(y[e]));
    }
    return;
  }
#endif
  for (int e = 0; e < N; e += 2) {
    unsigned int lo = BF ? bfloat16_bits_from(y[e]) : half_bits_from(y[e]);
    unsigned int hi = BF ? bfloat16_bits_from(y[e + 1]) : half_bits_from(y[e + 1]);
    w[e / 2] = lo | (hi << 16);
  }
}
template <int N> CUMO_HD void bfloat16_words(const float (&y)[N], unsigned int *w) {
  sixteen_bit_words<true>(y, w);
}
template <int N> CUMO_HD void half_words(const float (&y)[N], unsigned int *w) {
  sixteen_bit_words<false>(y, w);
}

struct dcomplex;

/// Single-precision complex, laid out as CUDA's float2.
struct alignas(8) scomplex {
  float re, im;
  scomplex() = default;
  CUMO_HD scomplex(float r, float i) : re(r), im(i) {}
  CUMO_HD explicit scomplex(const dcomplex &z);
  /// A real value: (v, 0).
  template <class U> CUMO_HD explicit scomplex(U v) : re((float)v), im(0.0f) {}
  /// The real part (the engine never converts a complex array to a real
  /// class: Cumo::NArray::CastError stops it first).
  CUMO_HD explicit operator float() const { return re; }
  CUMO_HD explicit operator double() const { return (double)re; }
};

/// Double-precision complex, laid out as CUDA's double2.
struct alignas(16) dcomplex {
  double re, im;
  dcomplex() = default;
  CUMO_HD dcomplex(double r, double i) : re(r), im(i) {}
  CUMO_HD explicit dcomplex(const scomplex &z) : re(z.re), im(z.im) {}
  template <class U> CUMO_HD explicit dcomplex(U v) : re((double)v), im(0.0) {}
  CUMO_HD explicit operator float() const { return (float)re; }
  CUMO_HD explicit operator double() const { return re; }
};

CUMO_HD scomplex::scomplex(const dcomplex &z)
    : re((float)z.re), im((float)z.im) {}

} // namespace cumo_ops

#endif // CUMO_ELEMENT_TYPES_H
