// bench/probes/gemv_lm_head.cu: the probe that chooses how the generated
// small product reads a matrix along k (an (n, k) weight used transposed:
// GPT-2's LM head, x @ wte.T, 768 x 50257), fusion/cuda_gemv_codegen.cpp's
// along-k layout. Not part of the library: a standalone program, built
// with nvcc, that times hand-written candidates side by side and prints one
// JSON line per (shape, dtype, candidate).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/gemv_lm_head bench/probes/gemv_lm_head.cu
//   /tmp/gemv_lm_head
//
// Why: on the H200 (2026-12-05) the library's along-k kernel read the LM
// head's weight at 3342 GB/s in SFloat but 1975 in BFloat and about 1060 in
// HFloat: half the bytes, nearly the same time, so its time is not the
// memory's. Every candidate folds a lane's elements of a column in the same
// order (lane l takes the vectors l, l + L, l + 2L, ... of the column) and
// the column's L lanes by a butterfly, as the library does. They differ in:
//   - x: read from global memory an element at a time and widened at every
//     use (xs = 0, the library's), or widened once into shared memory and
//     read from there in vectors (xs = 1);
//   - G: the columns a lane group reads at once (the loads of G columns in
//     flight together, each x vector used G times);
//   - L: the lanes a column (32 / L columns a warp);
//   - cap: the grid's blocks an SM (the column loop strides over the rest;
//     3 is the library's one wave as of this probe).
//   - params_in_memory: the operands' addresses and extents read from a
//     block in device memory, as the library's kernels read theirs.
#include "probe_common.cuh"

#include <cuda_fp16.h>

__device__ inline float toF(__half v) { return __half2float(v); }
template <> __device__ inline __half fromF<__half>(float v) { return __float2half_rn(v); }
template <> inline const char *dtypeName<__half>() { return "HFloat"; }

// The library's widening of a binary16 element (core/element_types.h): one
// cvt, and the NaN's payload kept by a test and a select.
__device__ inline float libraryToF(__half v) {
  unsigned short h = __half_as_ushort(v);
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
    return __uint_as_float(((unsigned)(h & 0x8000u) << 16) | 0x7f800000u |
                           ((unsigned)(h & 0x3ffu) << 13));
  return __half2float(v);
}
template <typename T> __device__ inline float libraryToF(T v) { return toF(v); }

/// y (M, N) = x (M, K) @ w (N, K).T, K a multiple of the vector.
template <typename T, int MR, int L, int G, bool XS, bool LIB>
__device__ __forceinline__ void alongKBody(const T *__restrict__ x, const T *__restrict__ w,
                                           T *__restrict__ y, int M, int K, int N) {
  constexpr int V = 16 / sizeof(T), PW = 32 / L;
  extern __shared__ float xs[];
  const int lane = threadIdx.x & 31, lk = lane % L, lc = lane / L;
  if (XS) {
    for (int i = threadIdx.x; i < M * K; i += blockDim.x) xs[i] = toF(x[i]);
    __syncthreads();
  }
  const int warpId = blockIdx.x * kWarps + (threadIdx.x >> 5);
  const int warps = gridDim.x * kWarps;
  for (int base = warpId * PW * G; base < N; base += warps * PW * G) {
    float acc[G][MR];
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int r = 0; r < MR; ++r) acc[g][r] = 0.f;
    int col[G];
#pragma unroll
    for (int g = 0; g < G; ++g) col[g] = min(base + lc * G + g, N - 1);
#pragma unroll 2
    for (int q = lk * V; q < K; q += L * V) {
      Vec<T, V> wv[G];
#pragma unroll
      for (int g = 0; g < G; ++g)
        wv[g] = *reinterpret_cast<const Vec<T, V> *>(w + size_t(col[g]) * K + q);
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        if (r >= M) break;
        float xv[V];
        if (XS) {
#pragma unroll
          for (int e = 0; e < V; e += 4) {
            float4 f = *reinterpret_cast<const float4 *>(xs + r * K + q + e);
            xv[e] = f.x, xv[e + 1] = f.y, xv[e + 2] = f.z, xv[e + 3] = f.w;
          }
        }
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
          for (int e = 0; e < V; ++e) {
            float xe = XS ? xv[e] : libraryToF(x[size_t(r) * K + q + e]);
            float we = LIB ? libraryToF(wv[g].e[e]) : toF(wv[g].e[e]);
            acc[g][r] = fmaf(xe, we, acc[g][r]);
          }
      }
    }
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        float t = acc[g][r];
        for (int off = L >> 1; off > 0; off >>= 1) t += __shfl_xor_sync(0xffffffffu, t, off);
        acc[g][r] = t;
      }
    if (lk == 0)
#pragma unroll
      for (int g = 0; g < G; ++g) {
        int j = base + lc * G + g;
        if (j < N)
#pragma unroll
          for (int r = 0; r < MR; ++r)
            if (r < M) y[size_t(r) * N + j] = fromF<T>(acc[g][r]);
      }
  }
}

template <typename T, int MR, int L, int G, bool XS, bool LIB>
__global__ void __launch_bounds__(kBlock, 4)
    alongK(const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y, int M, int K,
           int N) {
  alongKBody<T, MR, L, G, XS, LIB>(x, w, y, M, K, N);
}

/// The operands as the library's kernels take them: from a parameter
/// block in device memory (a replay patches it), not from the launch's
/// arguments, so that a block's first loads of the matrix wait for a load
/// of its address.
template <typename T> struct Args {
  const T *x, *w;
  T *y;
  int M, K, N;
};
template <typename T, int MR, int L, int G, bool XS, bool LIB>
__global__ void __launch_bounds__(kBlock, 4) alongKFromMemory(const Args<T> *__restrict__ a) {
  alongKBody<T, MR, L, G, XS, LIB>(a->x, a->w, a->y, a->M, a->K, a->N);
}

template <typename T>
__global__ void referenceK(const T *x, const T *w, float *y, int M, int K, int N) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= size_t(M) * N) return;
  int j = i % N, r = i / N;
  double s = 0;
  for (int p = 0; p < K; ++p) s += double(toF(x[size_t(r) * K + p])) * toF(w[size_t(j) * K + p]);
  y[i] = float(s);
}

template <typename T> __global__ void widenK(const T *p, float *out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = toF(p[i]);
}

struct Shape {
  const char *name;
  int M, K, N;
};

template <typename T> struct Bufs {
  T *x, *w, *y;
  float *ref, *wide;
  int copies;
  size_t wElems;
};

template <typename T> double maxError(const Bufs<T> &bf, const Shape &s) {
  size_t n = size_t(s.M) * s.N;
  widenK<<<256, 256>>>(bf.y, bf.wide, n);
  CK(cudaDeviceSynchronize());
  std::vector<float> got(n), ref(n);
  CK(cudaMemcpy(got.data(), bf.wide, n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(ref.data(), bf.ref, n * 4, cudaMemcpyDeviceToHost));
  return worstRelativeError(got, ref);
}

/// PM: the operands from a parameter block in memory, one a copy of the
/// weight (alongKFromMemory).
template <typename T, int MR, int L, int G, bool XS, bool LIB, bool PM = false>
void run(const Bufs<T> &bf, const Shape &s, int cap, const char *label) {
  int perBlock = kWarps * (32 / L) * G;
  int grid = std::clamp((s.N + perBlock - 1) / perBlock, 1, sms * cap);
  size_t shared = XS ? size_t(s.M) * s.K * 4 : 0;
  Args<T> *args = nullptr;
  if (PM) {
    std::vector<Args<T>> host(bf.copies);
    for (int c = 0; c < bf.copies; ++c) host[c] = {bf.x, bf.w + c * bf.wElems, bf.y, s.M, s.K, s.N};
    CK(cudaMalloc(&args, sizeof(Args<T>) * bf.copies));
    CK(cudaMemcpy(args, host.data(), sizeof(Args<T>) * bf.copies, cudaMemcpyHostToDevice));
  }
  auto launch = [&](int copy, cudaStream_t st) {
    if (PM)
      alongKFromMemory<T, MR, L, G, XS, LIB><<<grid, kBlock, shared, st>>>(args + copy);
    else
      alongK<T, MR, L, G, XS, LIB><<<grid, kBlock, shared, st>>>(bf.x, bf.w + copy * bf.wElems,
                                                                 bf.y, s.M, s.K, s.N);
  };
  CK(cudaMemset(bf.y, 0, size_t(s.M) * s.N * sizeof(T)));
  launch(0, 0);
  CK(cudaDeviceSynchronize());
  double err = maxError(bf, s);
  double us = timeGraph(launch, bf.copies);
  double gbs = double(bf.wElems) * sizeof(T) / (us * 1e3);
  std::printf("{\"probe\":\"gemv_lm_head\",\"shape\":\"%s\",\"M\":%d,\"K\":%d,\"N\":%d,"
              "\"dtype\":\"%s\",\"variant\":\"%s\",\"L\":%d,\"G\":%d,\"xs\":%d,\"lib_widen\":%d,"
              "\"cap\":%d,\"blocks\":%d,\"us\":%.2f,\"weight_gb_s\":%.0f,\"err\":%.2e}\n",
              s.name, s.M, s.K, s.N, dtypeName<T>(), label, L, G, int(XS), int(LIB), cap, grid,
              us, gbs, err);
  std::fflush(stdout);
  if (args)
    CK(cudaFree(args));
}

template <typename T, int MR> void runShape(const Shape &s) {
  Bufs<T> bf;
  bf.wElems = size_t(s.N) * s.K;
  size_t wBytes = bf.wElems * sizeof(T);
  bf.copies = int(std::clamp<size_t>((160u << 20) / wBytes + 1, 2, 32));
  CK(cudaMalloc(&bf.x, size_t(s.M) * s.K * sizeof(T)));
  CK(cudaMalloc(&bf.w, wBytes * bf.copies));
  CK(cudaMalloc(&bf.y, size_t(s.M) * s.N * sizeof(T)));
  CK(cudaMalloc(&bf.ref, size_t(s.M) * s.N * 4));
  CK(cudaMalloc(&bf.wide, size_t(s.M) * s.N * 4));
  fillK<<<1024, 256>>>(bf.x, size_t(s.M) * s.K, 7u);
  for (int c = 0; c < bf.copies; ++c) fillK<<<1024, 256>>>(bf.w + c * bf.wElems, bf.wElems, 11u);
  CK(cudaDeviceSynchronize());
  size_t n = size_t(s.M) * s.N;
  referenceK<<<(n + 255) / 256, 256>>>(bf.x, bf.w, bf.ref, s.M, s.K, s.N);
  CK(cudaDeviceSynchronize());
  // The copy of the weight: the bound (reads and writes counted).
  {
    T *dst;
    CK(cudaMalloc(&dst, wBytes));
    double us = timeGraph(
        [&](int copy, cudaStream_t st) {
          CK(cudaMemcpyAsync(dst, bf.w + copy * bf.wElems, wBytes, cudaMemcpyDeviceToDevice, st));
        },
        bf.copies);
    std::printf("{\"probe\":\"gemv_lm_head\",\"shape\":\"%s\",\"dtype\":\"%s\",\"variant\":\"copy\","
                "\"us\":%.2f,\"copy_gb_s\":%.0f}\n",
                s.name, dtypeName<T>(), us, 2.0 * wBytes / (us * 1e3));
    CK(cudaFree(dst));
  }
  run<T, MR, 32, 1, false, true>(bf, s, 32, "library");
  run<T, MR, 32, 1, false, false>(bf, s, 32, "plain_widen");
  run<T, MR, 32, 1, true, true>(bf, s, 32, "x_shared");
  run<T, MR, 32, 2, true, true>(bf, s, 32, "x_shared");
  run<T, MR, 32, 4, true, true>(bf, s, 32, "x_shared");
  run<T, MR, 32, 4, true, true>(bf, s, 4, "x_shared");
  run<T, MR, 32, 4, true, true>(bf, s, 3, "x_shared");
  run<T, MR, 32, 2, true, true>(bf, s, 4, "x_shared");
  run<T, MR, 16, 2, true, true>(bf, s, 32, "x_shared");
  run<T, MR, 16, 1, true, true>(bf, s, 32, "x_shared");
  run<T, MR, 32, 4, true, false>(bf, s, 32, "x_shared_plain_widen");
  run<T, MR, 32, 2, false, true>(bf, s, 32, "x_global");
  run<T, MR, 32, 4, false, true>(bf, s, 32, "x_global");
  // The library's kernel took 30.9 us for the BFloat LM head at the
  // probe's x_shared G=4 cap=3 (28.0) and 36.5 at x_global G=2 cap=32
  // (26.5) on an H100: the same candidates with the parameters in memory.
  run<T, MR, 32, 4, true, true, true>(bf, s, 3, "x_shared_params_in_memory");
  run<T, MR, 32, 2, false, true, true>(bf, s, 32, "x_global_params_in_memory");
  CK(cudaFree(bf.x));
  CK(cudaFree(bf.w));
  CK(cudaFree(bf.y));
  CK(cudaFree(bf.ref));
  CK(cudaFree(bf.wide));
}

int main() {
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const Shape shapes[] = {
      {"lm_head", 1, 768, 50257}, {"lm_head", 8, 768, 50257}, {"qkv_t", 1, 768, 2304}};
  for (const Shape &s : shapes) {
    if (s.M == 1) {
      runShape<float, 1>(s);
      runShape<__nv_bfloat16, 1>(s);
      runShape<__half, 1>(s);
    } else {
      runShape<float, 8>(s);
      runShape<__nv_bfloat16, 8>(s);
      runShape<__half, 8>(s);
    }
  }
  return 0;
}
