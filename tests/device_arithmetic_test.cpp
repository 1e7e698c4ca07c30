// The device's shortcuts in the portable element code give the bits of
// what they replace (gpu suite; exit 77 without a GPU):
//   - cumo_ops::divisor<float> (ops/portable_ops.h): quotient(x, divisor(d))
//     against the device's division x / d, for every significand of x at
//     the edges of the range it takes the short way and past them, and
//     divisors of many significands, in range and out;
//   - bfloat16_words and half_words (core/element_types.h): every float
//     bit pattern, eight to a group, against bfloat16_bits_from and
//     half_bits_from element by element, and those (a conversion
//     instruction, NaN by bit operations) against narrow_from_f32_bits,
//     the routine the host rounds with;
//   - wadd, wsub and wmul of half and bfloat16 (ops/portable_ops.h), the
//     device's own instructions, against the float path (widen, the float
//     op, round) for every pair of bit patterns.
// On the host all are the plain routines, so only a GPU can tell.
#include "doctest/doctest.h"

#include "fusion/cuda/nvrtc_compiler.h"
#include "fusion/cuda_codegen.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace cumo;

namespace {

const char *kSource = R"(#include "cumo_portable_ops.h"

// Thread t takes significand t % 2^23 of x at exponent kExponents[t / 2^23]
// (and its negative), and divides it by every divisor.
__constant__ int kExponents[] = {0, -64, -63, -1, 1, 62, 63, 64, -65, -126};
constexpr unsigned int kSignificands = 1u << 23;

extern "C" __global__ void check_divisor(const float *divisors, int count,
                                         unsigned int *bad, unsigned int *first) {
  const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned int which = t / kSignificands;
  if (which >= sizeof(kExponents) / sizeof(int))
    return;
  const unsigned int bits = ((unsigned int)(kExponents[which] + 127) << 23) | (t % kSignificands);
  for (int sign = 0; sign < 2; ++sign) {
    const float x = __uint_as_float(bits | ((unsigned int)sign << 31));
    for (int i = 0; i < count; ++i) {
      const float d = divisors[i];
      const float fast = cumo_ops::quotient(x, cumo_ops::divisor<float>(d));
      const float exact = x / d;
      if (__float_as_uint(fast) != __float_as_uint(exact)) {
        if (atomicAdd(bad, 1u) == 0) {
          first[0] = __float_as_uint(x);
          first[1] = __float_as_uint(d);
        }
      }
    }
  }
}

// Thread t rounds the eight float patterns from 8t, as one group and one
// by one.
extern "C" __global__ void check_words(unsigned long long groups, unsigned int *bad,
                                       unsigned int *first) {
  const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= groups)
    return;
  float y[8];
  for (int e = 0; e < 8; ++e)
    y[e] = __uint_as_float((unsigned int)(t * 8 + e));
  unsigned int b[4], h[4];
  cumo_ops::bfloat16_words(y, b);
  cumo_ops::half_words(y, h);
  for (int e = 0; e < 8; ++e) {
    const unsigned int bw = (b[e / 2] >> (16 * (e % 2))) & 0xffffu;
    const unsigned int hw = (h[e / 2] >> (16 * (e % 2))) & 0xffffu;
    if (bw != cumo_ops::bfloat16_bits_from(y[e]) || hw != cumo_ops::half_bits_from(y[e])) {
      if (atomicAdd(bad, 1u) == 0)
        first[0] = __float_as_uint(y[e]);
    }
    // The element routines' instruction and NaN bits against the
    // portable routine the host rounds with.
    const unsigned int x = (unsigned int)(t * 8 + e);
    if (cumo_ops::bfloat16_bits_from(y[e]) != cumo_ops::narrow_from_f32_bits(x, 8, 7) ||
        cumo_ops::half_bits_from(y[e]) != cumo_ops::narrow_from_f32_bits(x, 5, 10)) {
      if (atomicAdd(bad, 1u) == 0)
        first[0] = x;
    }
    float lo, hi;
    cumo_ops::widen_bfloat16_word(b[e / 2], lo, hi);
    const float back = e % 2 ? hi : lo;
    if (__float_as_uint(back) != __float_as_uint(cumo_ops::float_of_bfloat16_bits(bw))) {
      if (atomicAdd(bad, 1u) == 0)
        first[0] = __float_as_uint(y[e]);
    }
  }
}

// Thread t takes the pair of bit patterns (t >> 16, t & 0xffff) and
// compares each class's sum, difference and product with the float path.
template <class T> __device__ bool same_as_float_path(unsigned short x, unsigned short y) {
  const T a = T::of_bits(x), b = T::of_bits(y);
  const float fa = (float)a, fb = (float)b;
  return cumo_ops::wadd(a, b).bits == T(fa + fb).bits &&
         cumo_ops::wsub(a, b).bits == T(fa - fb).bits &&
         cumo_ops::wmul(a, b).bits == T(fa * fb).bits;
}
extern "C" __global__ void check_arithmetic(unsigned int *bad, unsigned int *first) {
  const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned short x = (unsigned short)(t >> 16), y = (unsigned short)t;
  const bool h = same_as_float_path<cumo_ops::half>(x, y);
  const bool b = same_as_float_path<cumo_ops::bfloat16>(x, y);
  if (!h || !b) {
    if (atomicAdd(bad, 1u) == 0) {
      first[0] = t;
      first[1] = h ? 2u : 1u;
    }
  }
}
)";

void ok(cudaError_t e, const char *what) {
  INFO(what);
  REQUIRE_MESSAGE(e == cudaSuccess, cudaGetErrorString(e));
}

float floatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Divisors: significands at the binade's edges and spread over it, at
/// the exponents the divisor takes the short way at (up to its bounds,
/// 2^-40 and 2^40) and past them, both signs; and zero, infinity, NaN and
/// a subnormal.
std::vector<float> divisors() {
  std::vector<uint32_t> significands = {0, 1, 2, 0x7fffff, 0x7ffffe, 0x400000, 0x3fffff,
                                        0x555555, 0x2aaaab, 0x123456, 0x6db6db};
  for (uint32_t i = 0; i < 48; ++i)
    significands.push_back((i * 2654435761u) & 0x7fffff);
  std::vector<float> out;
  for (int exponent : {0, -40, -39, 39, -41, 40, 5})
    for (uint32_t m : significands) {
      float d = floatOf((uint32_t(exponent + 127) << 23) | m);
      out.push_back(d);
      if (m % 3 == 0)
        out.push_back(-d);
    }
  for (uint32_t bits : {0u, 0x80000000u, 0x7f800000u, 0x7fc00000u, 0x00000123u})
    out.push_back(floatOf(bits));
  return out;
}

} // namespace

TEST_SUITE("gpu") {
TEST_CASE("the device's row divisor, sixteen-bit words and sixteen-bit arithmetic give the bits they replace") {
  // Compiled everywhere (NVRTC needs no GPU), run where there is one.
  KernelSource src{"check_divisor", kSource};
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    NvrtcCompiler::get().compileToCubin(src, 9, 0);
    std::exit(77);
  }
  cudaDeviceProp prop;
  ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::string cubin = NvrtcCompiler::get().compileToCubin(src, prop.major, prop.minor);
  cudaLibrary_t lib;
  ok(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
     "cudaLibraryLoadData");
  unsigned int *counters = nullptr;
  ok(cudaMalloc(&counters, 3 * sizeof(unsigned int)), "cudaMalloc");

  auto run = [&](const char *entry, unsigned int grid, void **args) {
    ok(cudaMemset(counters, 0, 3 * sizeof(unsigned int)), "cudaMemset");
    cudaKernel_t kernel;
    ok(cudaLibraryGetKernel(&kernel, lib, entry), "cudaLibraryGetKernel");
    ok(cudaLaunchKernel(reinterpret_cast<const void *>(kernel), dim3(grid), dim3(256), args, 0,
                        nullptr),
       entry);
    ok(cudaDeviceSynchronize(), entry);
    unsigned int host[3];
    ok(cudaMemcpy(host, counters, sizeof host, cudaMemcpyDeviceToHost), "download");
    return std::vector<unsigned int>(host, host + 3);
  };

  SUBCASE("quotient(x, divisor(d)) is x / d") {
    std::vector<float> ds = divisors();
    float *gpuDs = nullptr;
    ok(cudaMalloc(&gpuDs, ds.size() * sizeof(float)), "cudaMalloc");
    ok(cudaMemcpy(gpuDs, ds.data(), ds.size() * sizeof(float), cudaMemcpyHostToDevice),
       "upload");
    int count = int(ds.size());
    unsigned int *bad = counters, *first = counters + 1;
    void *args[] = {&gpuDs, &count, &bad, &first};
    std::vector<unsigned int> r = run("check_divisor", (10u << 23) / 256, args);
    INFO("first: " << floatOf(r[1]) << " / " << floatOf(r[2]));
    CHECK(r[0] == 0);
    cudaFree(gpuDs);
  }
  SUBCASE("bfloat16_words and half_words round as each element's routine, and it as the host's") {
    unsigned long long groups = (1ull << 32) / 8;
    unsigned int *bad = counters, *first = counters + 1;
    void *args[] = {&groups, &bad, &first};
    std::vector<unsigned int> r = run("check_words", unsigned(groups / 256), args);
    INFO("first: bits " << std::hex << r[1]);
    CHECK(r[0] == 0);
  }
  SUBCASE("half and bfloat16 add, subtract and multiply as the float path does") {
    unsigned int *bad = counters, *first = counters + 1;
    void *args[] = {&bad, &first};
    std::vector<unsigned int> r = run("check_arithmetic", unsigned((1ull << 32) / 256), args);
    INFO("first: operands " << std::hex << (r[1] >> 16) << ", " << (r[1] & 0xffff)
                            << (r[2] == 1 ? " (half)" : " (bfloat16)"));
    CHECK(r[0] == 0);
  }
  cudaFree(counters);
  cudaLibraryUnload(lib);
}
} // TEST_SUITE("gpu")
