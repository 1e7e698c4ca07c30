// bench/probes/gemv_layouts.cu: the probe that chooses how the generated
// small product reads a matrix stored (k, n) (fusion/cuda_gemv_codegen.cpp).
// Not part of the library: a standalone program, built with nvcc, that times
// hand-written versions of the candidate layouts side by side on the
// decode's shapes and prints one JSON line per (shape, dtype, layout).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/gemv_layouts bench/probes/gemv_layouts.cu
//   /tmp/gemv_layouts
//
// The layouts (all read the matrix once; a thread reads CV consecutive
// columns of a row as one 16-byte vector):
//   - L lanes across a column tile of L * CV columns, the warp's other
//     32 / L lanes on as many rows; the 8 warps of a block stride k; the
//     lanes of a column fold by shuffles, the warps through shared memory;
//   - with `splits` > 1 the blocks also split k, and the last block of a
//     tile to arrive folds the splits' partials: with one warp, each lane
//     its columns in split order ("serial", the library's layout as of
//     2026-12-05 with L = 32), or with every thread of the block, the
//     partials' loads unrolled ("parallel").
// The weights rotate over copies that together exceed the L2 (a decode
// reads 500 MB of weights a token: none stays in L2), and a CUDA graph of
// 32 launches is timed, so a figure is a kernel's time back to back.
#include "probe_common.cuh"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>


// Batch b: x (M, K), W (K, N), y (M, N), each contiguous, products b apart.
template <typename T, int MR, int CV, int L, bool ParallelFold>
__global__ void __launch_bounds__(kBlock)
    gemvKn(const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y, float *partials,
           unsigned *counters, int M, int K, int N, int splits) {
  constexpr int R = 32 / L, TW = L * CV;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int c = lane % L, rho = lane / L;
  const int tiles = (N + TW - 1) / TW;
  const int tile = blockIdx.x % tiles, split = blockIdx.x / tiles % splits,
            b = blockIdx.x / tiles / splits;
  x += size_t(b) * M * K;
  w += size_t(b) * K * N;
  y += size_t(b) * M * N;
  const int chunk = (K + splits - 1) / splits, k0 = split * chunk, k1 = min(K, k0 + chunk);
  const int j0 = tile * TW + c * CV;
  float acc[MR][CV];
#pragma unroll
  for (int r = 0; r < MR; ++r)
#pragma unroll
    for (int e = 0; e < CV; ++e) acc[r][e] = 0.f;
  if (j0 < N) {
#pragma unroll 8
    for (int p = k0 + warp * R + rho; p < k1; p += kWarps * R) {
      const Vec<T, CV> v = *reinterpret_cast<const Vec<T, CV> *>(w + size_t(p) * N + j0);
#pragma unroll
      for (int e = 0; e < CV; ++e) {
        const float bv = toF(v.e[e]);
#pragma unroll
        for (int r = 0; r < MR; ++r)
          if (r < M) acc[r][e] += toF(x[r * K + p]) * bv;
      }
    }
  }
#pragma unroll
  for (int off = L; off < 32; off *= 2)
#pragma unroll
    for (int r = 0; r < MR; ++r)
#pragma unroll
      for (int e = 0; e < CV; ++e) acc[r][e] += __shfl_xor_sync(0xffffffffu, acc[r][e], off);
  __shared__ float part[kWarps][MR][TW];
  __shared__ bool last;
  if (rho == 0)
#pragma unroll
    for (int r = 0; r < MR; ++r)
#pragma unroll
      for (int e = 0; e < CV; ++e) part[warp][r][c * CV + e] = acc[r][e];
  __syncthreads();
  float *mine = partials + size_t(b) * splits * M * N;
  for (int t = threadIdx.x; t < M * TW; t += kBlock) {
    const int r = t / TW, j = tile * TW + t % TW;
    if (j >= N) continue;
    float total = part[0][r][t % TW];
#pragma unroll
    for (int q = 1; q < kWarps; ++q) total += part[q][r][t % TW];
    if (splits == 1) y[r * N + j] = fromF<T>(total);
    else mine[(size_t(split) * M + r) * N + j] = total;
  }
  if (splits == 1) return;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(counters + b * tiles + tile, 1u) == unsigned(splits - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (ParallelFold) {
    for (int t = threadIdx.x; t < M * TW; t += kBlock) {
      const int r = t / TW, j = tile * TW + t % TW;
      if (j >= N) continue;
      float total = __ldcg(mine + size_t(r) * N + j);
#pragma unroll 8
      for (int q = 1; q < splits; ++q) total += __ldcg(mine + (size_t(q) * M + r) * N + j);
      y[r * N + j] = fromF<T>(total);
    }
  } else if (warp == 0 && j0 < N) {
    for (int r = 0; r < M; ++r)
      for (int e = 0; e < CV; ++e) {
        const int j = j0 + e;
        float total = __ldcg(mine + size_t(r) * N + j);
        for (int q = 1; q < splits; ++q) total += __ldcg(mine + (size_t(q) * M + r) * N + j);
        y[r * N + j] = fromF<T>(total);
      }
  }
  if (threadIdx.x == 0) counters[b * tiles + tile] = 0u;
}

// The along-k layout for reference: W stored (N, K), a warp per column.
template <typename T, int MR>
__global__ void __launch_bounds__(kBlock)
    gemvAlongK(const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y, int M, int K,
               int N) {
  constexpr int V = 16 / sizeof(T);
  const int lane = threadIdx.x & 31;
  const int warps = gridDim.x * kWarps;
  for (int col = blockIdx.x * kWarps + (threadIdx.x >> 5); col < N; col += warps) {
    float acc[MR] = {};
    const T *wc = w + size_t(col) * K;
#pragma unroll 2
    for (int q = lane * V; q < K; q += 32 * V) {
      const Vec<T, V> v = *reinterpret_cast<const Vec<T, V> *>(wc + q);
#pragma unroll
      for (int e = 0; e < V; ++e)
#pragma unroll
        for (int r = 0; r < MR; ++r)
          if (r < M) acc[r] += toF(x[r * K + q + e]) * toF(v.e[e]);
    }
#pragma unroll
    for (int r = 0; r < MR; ++r) {
      float t = acc[r];
      for (int off = 16; off; off >>= 1) t += __shfl_xor_sync(0xffffffffu, t, off);
      if (lane == 0 && r < M) y[r * N + col] = fromF<T>(t);
    }
  }
}

// Along k with G lanes a column (32 / G columns a warp), x read as
// vectors too where XV (its rows contiguous and aligned).
template <typename T, int MR, int G, bool XV>
__global__ void __launch_bounds__(kBlock)
    gemvAlongKG(const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y, int M, int K,
                int N) {
  constexpr int V = 16 / sizeof(T);
  const int lane = threadIdx.x & 31, g = lane % G, sub = lane / G;
  const int groups = gridDim.x * kWarps * (32 / G);
  // The loop runs on the warp's first column, so all its lanes shuffle.
  for (int base = (blockIdx.x * kWarps + (threadIdx.x >> 5)) * (32 / G); base < N;
       base += groups) {
    const int col = base + sub;
    const bool live = col < N;
    float acc[MR] = {};
    const T *wc = w + size_t(live ? col : 0) * K;
#pragma unroll 4
    for (int q = g * V; q < K; q += G * V) {
      const Vec<T, V> v = *reinterpret_cast<const Vec<T, V> *>(wc + q);
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        if (r >= M) break;
        if (XV) {
          const Vec<T, V> xv = *reinterpret_cast<const Vec<T, V> *>(x + r * K + q);
#pragma unroll
          for (int e = 0; e < V; ++e) acc[r] += toF(xv.e[e]) * toF(v.e[e]);
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e) acc[r] += toF(x[r * K + q + e]) * toF(v.e[e]);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < MR; ++r) {
      float t = acc[r];
#pragma unroll
      for (int off = G / 2; off; off >>= 1) t += __shfl_xor_sync(0xffffffffu, t, off);
      if (g == 0 && live && r < M) y[r * N + col] = fromF<T>(t);
    }
  }
}

template <typename T>
__global__ void transposeK(const T *w, T *wt, int K, int N) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < size_t(K) * N;
       i += size_t(gridDim.x) * blockDim.x)
    wt[(i % N) * K + i / N] = w[i];
}


template <typename T>
__global__ void referenceK(const T *x, const T *w, float *y, int B, int M, int K, int N) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= size_t(B) * M * N) return;
  int j = i % N, r = i / N % M, b = i / N / M;
  double s = 0;
  for (int p = 0; p < K; ++p)
    s += double(toF(x[(size_t(b) * M + r) * K + p])) * toF(w[(size_t(b) * K + p) * N + j]);
  y[i] = float(s);
}

struct Shape {
  const char *name;
  int B, M, K, N;
};



template <typename T> struct Bufs {
  T *x, *w, *wt, *y;
  float *ref, *partials;
  unsigned *counters;
  int copies;
  size_t wElems;
};

template <typename T> double maxError(const Bufs<T> &bf, const Shape &s) {
  size_t n = size_t(s.B) * s.M * s.N;
  return worstRelativeError(download(bf.y, n), download(bf.ref, n));
}

template <typename T, int MR, int CV, int L, bool PF>
void runKn(const Bufs<T> &bf, const Shape &s, int splits, const char *fold) {
  constexpr int TW = L * CV;
  int tiles = (s.N + TW - 1) / TW;
  dim3 grid(tiles * splits * s.B);
  auto launch = [&](int copy, cudaStream_t st) {
    gemvKn<T, MR, CV, L, PF><<<grid, kBlock, 0, st>>>(bf.x, bf.w + copy * bf.wElems, bf.y,
                                                     bf.partials, bf.counters, s.M, s.K, s.N,
                                                     splits);
  };
  CK(cudaMemset(bf.y, 0, size_t(s.B) * s.M * s.N * sizeof(T)));
  launch(0, 0);
  CK(cudaDeviceSynchronize());
  double err = maxError(bf, s);
  double us = timeGraph(launch, bf.copies);
  std::printf("{\"probe\":\"gemv_kn\",\"shape\":\"%s\",\"B\":%d,\"M\":%d,\"K\":%d,\"N\":%d,"
              "\"dtype\":\"%s\",\"L\":%d,\"CV\":%d,\"splits\":%d,\"fold\":\"%s\",\"blocks\":%d,"
              "\"us\":%.2f,\"err\":%.2e}\n",
              s.name, s.B, s.M, s.K, s.N, dtypeName<T>(), L, CV, splits, fold, int(grid.x), us,
              err);
}

template <typename T, int MR, int CV, int L> void sweepL(const Bufs<T> &bf, const Shape &s) {
  constexpr int TW = L * CV;
  if (s.N % CV) return;
  int tiles = (s.N + TW - 1) / TW;
  // The library's split rule as of 2026-12-05 (k runs of at least 32, the
  // grid aiming at 8 blocks an SM).
  int want = sms * 8 / (tiles * s.B);
  int rule = std::clamp(std::min(want, s.K / 32), 1, 1024);
  std::vector<int> tried;
  for (int sp : {1, 2, 4, 8, rule}) {
    if (sp > 1 && s.K / sp < 16) continue;
    if (std::find(tried.begin(), tried.end(), sp) != tried.end()) continue;
    tried.push_back(sp);
    if (sp == 1) runKn<T, MR, CV, L, true>(bf, s, 1, "none");
    else {
      runKn<T, MR, CV, L, true>(bf, s, sp, "parallel");
      if (L == 32 && sp == rule) runKn<T, MR, CV, L, false>(bf, s, sp, "serial");
    }
  }
}

template <typename T, int MR, int G, bool XV> void alongKG(const Bufs<T> &bf, const Shape &s) {
  int perBlock = kWarps * (32 / G);
  for (int cap : {32, 8}) {
    int grid = std::clamp((s.N + perBlock - 1) / perBlock, 1, sms * cap);
    auto launch = [&](int copy, cudaStream_t st) {
      gemvAlongKG<T, MR, G, XV><<<grid, kBlock, 0, st>>>(bf.x, bf.wt + copy * bf.wElems, bf.y, s.M,
                                                        s.K, s.N);
    };
    launch(0, 0);
    CK(cudaDeviceSynchronize());
    double err = maxError(bf, s);
    double us = timeGraph(launch, bf.copies);
    std::printf("{\"probe\":\"gemv_along_k\",\"err\":%.2e,\"shape\":\"%s\",\"M\":%d,\"K\":%d,\"N\":%d,"
                "\"dtype\":\"%s\",\"G\":%d,\"xvec\":%d,\"cap\":%d,\"blocks\":%d,\"us\":%.2f}\n",
                err, s.name, s.M, s.K, s.N, dtypeName<T>(), G, int(XV), cap, grid, us);
  }
}

template <typename T, int MR> void runShape(const Shape &s) {
  constexpr int CV = std::max(1, std::min<int>(16 / sizeof(T), 32 / MR));
  Bufs<T> bf;
  bf.wElems = size_t(s.B) * s.K * s.N;
  size_t wBytes = bf.wElems * sizeof(T);
  bf.copies = int(std::clamp<size_t>((160u << 20) / wBytes + 1, 2, 32));
  CK(cudaMalloc(&bf.x, size_t(s.B) * s.M * s.K * sizeof(T)));
  CK(cudaMalloc(&bf.w, wBytes * bf.copies));
  CK(cudaMalloc(&bf.wt, wBytes * bf.copies));
  CK(cudaMalloc(&bf.y, size_t(s.B) * s.M * s.N * sizeof(T)));
  CK(cudaMalloc(&bf.ref, size_t(s.B) * s.M * s.N * 4));
  CK(cudaMalloc(&bf.partials, size_t(s.B) * 1024 * s.M * s.N * 4));
  CK(cudaMalloc(&bf.counters, size_t(s.B) * 4096 * 4));
  CK(cudaMemset(bf.counters, 0, size_t(s.B) * 4096 * 4));
  fillK<<<1024, 256>>>(bf.x, size_t(s.B) * s.M * s.K, 7u);
  for (int c = 0; c < bf.copies; ++c) fillK<<<1024, 256>>>(bf.w + c * bf.wElems, bf.wElems, 11u);
  CK(cudaDeviceSynchronize());
  size_t n = size_t(s.B) * s.M * s.N;
  referenceK<<<(n + 255) / 256, 256>>>(bf.x, bf.w, bf.ref, s.B, s.M, s.K, s.N);
  CK(cudaDeviceSynchronize());
  sweepL<T, MR, CV, 32>(bf, s);
  sweepL<T, MR, CV, 16>(bf, s);
  sweepL<T, MR, CV, 8>(bf, s);
  sweepL<T, MR, CV, 4>(bf, s);
  sweepL<T, MR, CV, 2>(bf, s);
  sweepL<T, MR, CV, 1>(bf, s);
  if (s.B == 1) {
    // The along-k layout over the same products, the weights transposed
    // (the first copy is w's transpose: the same answers).
    for (int c = 1; c < bf.copies; ++c) fillK<<<1024, 256>>>(bf.wt + c * bf.wElems, bf.wElems, 11u);
    transposeK<<<1024, 256>>>(bf.w, bf.wt, s.K, s.N);
    int grid = std::clamp((s.N + kWarps - 1) / kWarps, 1, sms * 32);
    auto launch = [&](int copy, cudaStream_t st) {
      gemvAlongK<T, MR><<<grid, kBlock, 0, st>>>(bf.x, bf.wt + copy * bf.wElems, bf.y, s.M, s.K,
                                                 s.N);
    };
    double us = timeGraph(launch, bf.copies);
    std::printf("{\"probe\":\"gemv_along_k\",\"shape\":\"%s\",\"M\":%d,\"K\":%d,\"N\":%d,"
                "\"dtype\":\"%s\",\"blocks\":%d,\"us\":%.2f}\n",
                s.name, s.M, s.K, s.N, dtypeName<T>(), grid, us);
    alongKG<T, MR, 16, false>(bf, s);
    alongKG<T, MR, 8, false>(bf, s);
    alongKG<T, MR, 4, false>(bf, s);
    alongKG<T, MR, 8, true>(bf, s);
    alongKG<T, MR, 32, true>(bf, s);
  }
  // An empty kernel's time in the same graph, the floor of every figure.
  CK(cudaFree(bf.x));
  CK(cudaFree(bf.w));
  CK(cudaFree(bf.wt));
  CK(cudaFree(bf.y));
  CK(cudaFree(bf.ref));
  CK(cudaFree(bf.partials));
  CK(cudaFree(bf.counters));
  std::fflush(stdout);
}

__global__ void emptyK() {}

int main() {
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  double empty = timeGraph([](int, cudaStream_t s) { emptyK<<<1, 32, 0, s>>>(); }, 1);
  std::printf("{\"probe\":\"empty_kernel\",\"us\":%.2f,\"sms\":%d}\n", empty, sms);
  const Shape shapes[] = {
      {"attn", 1, 1, 768, 768},     {"qkv", 1, 1, 768, 2304},  {"fc", 1, 1, 768, 3072},
      {"proj", 1, 1, 3072, 768},    {"attn", 1, 8, 768, 768},  {"qkv", 1, 8, 768, 2304},
      {"fc", 1, 8, 768, 3072},      {"proj", 1, 8, 3072, 768}, {"softmax_v", 12, 1, 128, 64},
      {"softmax_v", 12, 1, 1024, 64}, {"lm_head", 1, 1, 768, 50257},
  };
  for (const Shape &s : shapes) {
    if (s.M == 1) {
      runShape<float, 1>(s);
      runShape<__nv_bfloat16, 1>(s);
    } else {
      runShape<float, 8>(s);
      runShape<__nv_bfloat16, 8>(s);
    }
  }
  return 0;
}
