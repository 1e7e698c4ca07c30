// bench/probes/prologue_layouts.cu: the probe for a small product whose
// operand is a layer_norm (fusion/prologue.h), as a decode step's qkv, fc
// and LM head products are. In the decode (2026-12-05, H200, BFloat) these
// took 15-23 us where the same products without the row op took 4-6, and
// the LM head 71 us against 20; this times, side by side, hand-written
// versions of where the row op could run:
//   - "warp": every block normalizes the row first, one warp doing it while
//     the others wait at the barrier (the library's prologue as of
//     2026-12-05);
//   - "block": every block normalizes the row first, all its warps sharing
//     the work (a block-wide fold);
//   - "separate": a one-block kernel normalizes the row into memory and the
//     plain product reads it (two launches in the graph, as without fusion).
// The products read a (k, n) weight with L lanes a tile (no split of k), or
// the LM head's (n, k) weight along k, its grid capped at `cap` blocks an
// SM. One JSON line per (shape, dtype, variant).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/prologue_layouts bench/probes/prologue_layouts.cu
//   /tmp/prologue_layouts
#include "probe_common.cuh"

#include <cmath>
#include <vector>

namespace {

constexpr float kEps = 1e-5f;
/// The longest row a warp holds in registers (the decode's 768 fits).
constexpr int kMaxRow = 1024;

__device__ float warpSum(float v) {
#pragma unroll
  for (int off = 16; off; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

/// The block's sum of `v` (every thread gets it); `red` holds kWarps floats.
__device__ float blockSum(float v, float *red) {
  v = warpSum(v);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) t += red[w];
  __syncthreads();
  return t;
}

/// layer_norm of row x (K elements, gamma g, beta b) into xs, rounded to T:
/// by warp 0 alone (Block false) or by the whole block. Ends with the
/// block's barrier.
template <typename T, bool Block>
__device__ void layerNorm(const T *x, const T *g, const T *b, T *xs, int K) {
  if (!Block) {
    if (threadIdx.x < 32) {
      constexpr int PER = kMaxRow / 32;
      const int lane = threadIdx.x;
      float v[PER];
      float s = 0;
#pragma unroll
      for (int i = 0; i < PER; ++i) {
        const int j = lane + i * 32;
        v[i] = j < K ? toF(x[j]) : 0.f;
        s += v[i];
      }
      const float mean = warpSum(s) / K;
      float q = 0;
#pragma unroll
      for (int i = 0; i < PER; ++i)
        if (lane + i * 32 < K) q += (v[i] - mean) * (v[i] - mean);
      const float rstd = rsqrtf(warpSum(q) / K + kEps);
#pragma unroll
      for (int i = 0; i < PER; ++i) {
        const int j = lane + i * 32;
        if (j < K) xs[j] = fromF<T>((v[i] - mean) * rstd * toF(g[j]) + toF(b[j]));
      }
    }
  } else {
    __shared__ float red[kWarps];
    constexpr int PER = kMaxRow / kBlock;
    float v[PER];
    float s = 0;
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      const int j = threadIdx.x + i * kBlock;
      v[i] = j < K ? toF(x[j]) : 0.f;
      s += v[i];
    }
    const float mean = blockSum(s, red) / K;
    float q = 0;
#pragma unroll
    for (int i = 0; i < PER; ++i)
      if (threadIdx.x + i * kBlock < K) q += (v[i] - mean) * (v[i] - mean);
    const float rstd = rsqrtf(blockSum(q, red) / K + kEps);
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      const int j = threadIdx.x + i * kBlock;
      if (j < K) xs[j] = fromF<T>((v[i] - mean) * rstd * toF(g[j]) + toF(b[j]));
    }
  }
  __syncthreads();
}

/// The row's layer_norm into xn (one block): the "separate" variant's first
/// kernel.
template <typename T>
__global__ void __launch_bounds__(kBlock)
    layerNormKernel(const T *x, const T *g, const T *b, T *xn, int K) {
  layerNorm<T, true>(x, g, b, xn, K);
}

/// One row times a (K, N) weight, L lanes a tile of L * CV columns, k not
/// split; the row normalized first when Pro (by warp 0 or the block),
/// else read from x as it is.
template <typename T, int CV, int L, bool Pro, bool Block>
__global__ void __launch_bounds__(kBlock)
    productKn(const T *__restrict__ x, const T *g, const T *b, const T *__restrict__ w,
              T *__restrict__ y, int K, int N) {
  constexpr int R = 32 / L, TW = L * CV;
  __shared__ __align__(16) T xs[kMaxRow * 4];
  const T *row = x;
  if (Pro) {
    layerNorm<T, Block>(x, g, b, xs, K);
    row = xs;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int c = lane % L, rho = lane / L;
  const int j0 = blockIdx.x * TW + c * CV;
  float acc[CV] = {};
  if (j0 < N) {
#pragma unroll 8
    for (int p = warp * R + rho; p < K; p += kWarps * R) {
      const Vec<T, CV> v = *reinterpret_cast<const Vec<T, CV> *>(w + size_t(p) * N + j0);
      const float xv = toF(row[p]);
#pragma unroll
      for (int e = 0; e < CV; ++e) acc[e] += xv * toF(v.e[e]);
    }
  }
#pragma unroll
  for (int off = L; off < 32; off *= 2)
#pragma unroll
    for (int e = 0; e < CV; ++e) acc[e] += __shfl_xor_sync(0xffffffffu, acc[e], off);
  __shared__ float part[kWarps][TW];
  if (rho == 0)
#pragma unroll
    for (int e = 0; e < CV; ++e) part[warp][c * CV + e] = acc[e];
  __syncthreads();
  if (threadIdx.x < TW && blockIdx.x * TW + threadIdx.x < N) {
    float t = 0;
#pragma unroll
    for (int q = 0; q < kWarps; ++q) t += part[q][threadIdx.x];
    y[blockIdx.x * TW + threadIdx.x] = fromF<T>(t);
  }
}

/// One row times an (N, K) weight read along k, a warp a column (the LM
/// head's layout), the row normalized first when Pro; x read a vector at a
/// time.
template <typename T, bool Pro, bool Block>
__global__ void __launch_bounds__(kBlock)
    productAlongK(const T *__restrict__ x, const T *g, const T *b, const T *__restrict__ w,
                  T *__restrict__ y, int K, int N) {
  constexpr int V = 16 / sizeof(T);
  __shared__ __align__(16) T xs[kMaxRow * 4];
  const T *row = x;
  if (Pro) {
    layerNorm<T, Block>(x, g, b, xs, K);
    row = xs;
  }
  const int lane = threadIdx.x & 31;
  for (int col = blockIdx.x * kWarps + (threadIdx.x >> 5); col < N; col += gridDim.x * kWarps) {
    float acc = 0;
    const T *wc = w + size_t(col) * K;
#pragma unroll 4
    for (int q = lane * V; q < K; q += 32 * V) {
      const Vec<T, V> v = *reinterpret_cast<const Vec<T, V> *>(wc + q);
      const Vec<T, V> xv = *reinterpret_cast<const Vec<T, V> *>(row + q);
#pragma unroll
      for (int e = 0; e < V; ++e) acc += toF(xv.e[e]) * toF(v.e[e]);
    }
    acc = warpSum(acc);
    if (lane == 0) y[col] = fromF<T>(acc);
  }
}

struct Case {
  const char *name;
  int K, N;
  bool alongK;
};

template <typename T> struct Buffers {
  T *x, *g, *b, *xn, *w, *y;
  int copies;
  size_t wElems;
};

template <typename T> Buffers<T> allocate(const Case &c) {
  Buffers<T> bf;
  bf.wElems = size_t(c.K) * c.N;
  size_t wBytes = bf.wElems * sizeof(T);
  bf.copies = int(std::clamp<size_t>((160u << 20) / wBytes + 1, 2, 32));
  CK(cudaMalloc(&bf.x, c.K * sizeof(T)));
  CK(cudaMalloc(&bf.g, c.K * sizeof(T)));
  CK(cudaMalloc(&bf.b, c.K * sizeof(T)));
  CK(cudaMalloc(&bf.xn, c.K * sizeof(T)));
  CK(cudaMalloc(&bf.w, wBytes * bf.copies));
  CK(cudaMalloc(&bf.y, c.N * sizeof(T)));
  fillK<<<64, 256>>>(bf.x, size_t(c.K), 3u);
  fillK<<<64, 256>>>(bf.g, size_t(c.K), 5u);
  fillK<<<64, 256>>>(bf.b, size_t(c.K), 9u);
  for (int i = 0; i < bf.copies; ++i) fillK<<<1024, 256>>>(bf.w + i * bf.wElems, bf.wElems, 11u);
  CK(cudaDeviceSynchronize());
  return bf;
}

template <typename T> void release(Buffers<T> &bf) {
  T *const all[] = {bf.x, bf.g, bf.b, bf.xn, bf.w, bf.y};
  for (T *p : all) CK(cudaFree(p));
}

/// Times `launch` and checks its answer on copy 0 against `ref` (the
/// separate variant's), printing one line.
template <typename T, typename F>
void report(const Case &c, const Buffers<T> &bf, const char *variant, int lanes, int blocks,
            const std::vector<float> &ref, F launch) {
  CK(cudaMemset(bf.y, 0, c.N * sizeof(T)));
  launch(0, cudaStream_t(0));
  CK(cudaDeviceSynchronize());
  double worst = worstRelativeError(download(bf.y, size_t(c.N)), ref);
  double us = timeGraph(launch, bf.copies);
  std::printf("{\"probe\":\"prologue\",\"shape\":\"%s\",\"K\":%d,\"N\":%d,\"dtype\":\"%s\","
              "\"variant\":\"%s\",\"lanes\":%d,\"blocks\":%d,\"us\":%.2f,\"err\":%.2e}\n",
              c.name, c.K, c.N, dtypeName<T>(), variant, lanes, blocks, us, worst);
}

template <typename T, int CV, int L>
void knVariants(const Case &c, const Buffers<T> &bf, const std::vector<float> &ref) {
  constexpr int TW = L * CV;
  int grid = (c.N + TW - 1) / TW;
  report<T>(c, bf, "warp", L, grid, ref, [&](int i, cudaStream_t s) {
    productKn<T, CV, L, true, false><<<grid, kBlock, 0, s>>>(bf.x, bf.g, bf.b, bf.w + i * bf.wElems,
                                                             bf.y, c.K, c.N);
  });
  report<T>(c, bf, "block", L, grid, ref, [&](int i, cudaStream_t s) {
    productKn<T, CV, L, true, true><<<grid, kBlock, 0, s>>>(bf.x, bf.g, bf.b, bf.w + i * bf.wElems,
                                                            bf.y, c.K, c.N);
  });
  report<T>(c, bf, "separate", L, grid, ref, [&](int i, cudaStream_t s) {
    layerNormKernel<T><<<1, kBlock, 0, s>>>(bf.x, bf.g, bf.b, bf.xn, c.K);
    productKn<T, CV, L, false, false><<<grid, kBlock, 0, s>>>(bf.xn, nullptr, nullptr,
                                                              bf.w + i * bf.wElems, bf.y, c.K, c.N);
  });
  report<T>(c, bf, "none (product alone)", L, grid, ref, [&](int i, cudaStream_t s) {
    productKn<T, CV, L, false, false><<<grid, kBlock, 0, s>>>(bf.xn, nullptr, nullptr,
                                                              bf.w + i * bf.wElems, bf.y, c.K, c.N);
  });
}

template <typename T> void run(const Case &c) {
  constexpr int CV = 16 / sizeof(T);
  Buffers<T> bf = allocate<T>(c);
  // The reference: the separate variant's answer (a normalized row, then a
  // plain product), which the fused ones must match to rounding.
  layerNormKernel<T><<<1, kBlock>>>(bf.x, bf.g, bf.b, bf.xn, c.K);
  if (c.alongK) {
    int full = (c.N + kWarps - 1) / kWarps;
    productAlongK<T, false, false><<<std::min(full, sms * 32), kBlock>>>(bf.xn, nullptr, nullptr,
                                                                         bf.w, bf.y, c.K, c.N);
  } else {
    productKn<T, CV, 2, false, false><<<(c.N + 2 * CV - 1) / (2 * CV), kBlock>>>(
        bf.xn, nullptr, nullptr, bf.w, bf.y, c.K, c.N);
  }
  CK(cudaDeviceSynchronize());
  std::vector<float> ref = download(bf.y, size_t(c.N));
  if (c.alongK) {
    int full = (c.N + kWarps - 1) / kWarps;
    for (int cap : {32, 8, 2, 1}) {
      int grid = std::min(full, sms * cap);
      report<T>(c, bf, "warp", 32, grid, ref, [&](int i, cudaStream_t s) {
        productAlongK<T, true, false><<<grid, kBlock, 0, s>>>(bf.x, bf.g, bf.b,
                                                              bf.w + i * bf.wElems, bf.y, c.K, c.N);
      });
      report<T>(c, bf, "block", 32, grid, ref, [&](int i, cudaStream_t s) {
        productAlongK<T, true, true><<<grid, kBlock, 0, s>>>(bf.x, bf.g, bf.b,
                                                             bf.w + i * bf.wElems, bf.y, c.K, c.N);
      });
      report<T>(c, bf, "separate", 32, grid, ref, [&](int i, cudaStream_t s) {
        layerNormKernel<T><<<1, kBlock, 0, s>>>(bf.x, bf.g, bf.b, bf.xn, c.K);
        productAlongK<T, false, false><<<grid, kBlock, 0, s>>>(bf.xn, nullptr, nullptr,
                                                               bf.w + i * bf.wElems, bf.y, c.K,
                                                               c.N);
      });
    }
  } else {
    knVariants<T, CV, 1>(c, bf, ref);
    knVariants<T, CV, 2>(c, bf, ref);
    knVariants<T, CV, 4>(c, bf, ref);
  }
  release(bf);
  std::fflush(stdout);
}

} // namespace

int main() {
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const Case cases[] = {
      {"qkv", 768, 2304, false},
      {"fc", 768, 3072, false},
      {"lm_head", 768, 50257, true},
  };
  for (const Case &c : cases) {
    run<float>(c);
    run<__nv_bfloat16>(c);
  }
  return 0;
}
