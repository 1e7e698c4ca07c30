// bench/probes/probe_common.cuh: what the standalone probes of bench/probes
// share: error checks, 16-byte vectors, float conversions, a fill of
// reproducible values, and the timing of a launch as a CUDA graph.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));            \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

template <typename T, int N> struct alignas(16) Vec { T e[N]; };

__device__ inline float toF(float v) { return v; }
__device__ inline float toF(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ inline T fromF(float v);
template <> __device__ inline float fromF<float>(float v) { return v; }
template <> __device__ inline __nv_bfloat16 fromF<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

constexpr int kBlock = 256, kWarps = kBlock / 32;

template <typename T>
__global__ void fillK(T *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = fromF<T>(float(h % 2001u) / 1000.f - 1.f);
  }
}

/// The device's SMs (main sets it).
inline int sms;

// Times `launch(copy, stream)` as a graph of `launches` launches over
// rotating copies (copy i % copies for launch i): microseconds a launch,
// the best of 7 replays after one, every replay finished on return.
template <typename F> double timeGraph(F launch, int copies, int launches = 32) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < launches; ++i) launch(i % copies, s);
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, z;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&z));
  CK(cudaGraphLaunch(ge, s));
  double best = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    CK(cudaEventRecord(a, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(z, s));
    CK(cudaEventSynchronize(z));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, z));
    best = std::min(best, double(ms) * 1000.0 / launches);
  }
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamDestroy(s));
  return best;
}

template <typename T> const char *dtypeName();
template <> inline const char *dtypeName<float>() { return "SFloat"; }
template <> inline const char *dtypeName<__nv_bfloat16>() { return "BFloat"; }

/// `n` elements of device array `p` (float or bfloat16) as floats.
template <typename T> std::vector<float> download(const T *p, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 4) std::memcpy(&out[i], &h[i], 4);
    else {
      unsigned short u;
      std::memcpy(&u, &h[i], 2);
      unsigned f = unsigned(u) << 16;
      std::memcpy(&out[i], &f, 4);
    }
  }
  return out;
}

/// The largest |got - ref| / (1 + |ref|) over the elements.
inline double worstRelativeError(const std::vector<float> &got, const std::vector<float> &ref) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, double(std::fabs(got[i] - ref[i])) / (1.0 + std::fabs(ref[i])));
  return worst;
}
