// bench/probes/attention_decode.cu: the probe that prices a decode step's
// attention as one kernel (issue 8) before the code generator learns it.
// Not part of the library: a standalone program, built with nvcc, that times
// hand-written versions side by side on GPT-2's attention (12 heads, 64 wide,
// a context of 1024, batch 1 and 8) and prints one JSON line per (batch,
// dtype, variant), with each variant's answer checked against the host.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/attention_decode bench/probes/attention_decode.cu
//   /tmp/attention_decode
//
// What a head computes, as the decode writes it (examples/gpt2/model.rb):
// s_j = (q . k_j) * scale + bias_j, each op rounded to the class; p =
// softmax(s) rounded to the class; y = p . V. The variants:
//   - "two_kernels": the decode's structure today, the scores by one kernel
//     (a warp a key, eight keys a warp) and softmax times V by another
//     (every block folds the row's statistics, takes its share of the keys,
//     and the last block of a head to arrive folds the shares);
//   - "fused_block": one kernel, a block a head (256 or 1024 threads): the
//     scores into shared memory, the row's statistics, then p times V (12
//     blocks at batch 1);
//   - "fused_split": one kernel, `splits` blocks a head (all resident: the
//     grid is at most two blocks a SM): each block its keys' scores into a scratch
//     row, a barrier of the head's blocks (a counter they wait on), every
//     block the row's statistics from the scratch, its keys' share of p
//     times V, and the last to arrive folds the shares.
// The caches rotate over copies that together exceed the L2 (a decode step
// reads 500 MB of weights between two layers' attention), and a CUDA graph
// of 32 launches is timed, so a figure is a kernel's time back to back.
#include "probe_common.cuh"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr int kDim = 64;      // head_dim
constexpr int kKeysAWarp = 8; // the scores kernel's keys a warp

template <typename T> __device__ inline T roundTo(float v) { return fromF<T>(v); }

/// Scores of keys [k0, k1) of head h, a warp eight keys at a time (their
/// loads first, then their folds, so that a warp has eight keys' loads in
/// flight): s_j = (q . k_j) rounded as the product stores it, times scale
/// and plus bias_j, each rounded to the class; `put(j, s)` in lane 0.
template <typename T, typename Put>
__device__ inline void scoresOf(const T *q, const T *K, const T *bias, float scale, int n, int h,
                                int k0, int k1, Put put) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const T *qh = q + size_t(h) * kDim;
  const float q0 = toF(qh[2 * lane]), q1 = toF(qh[2 * lane + 1]);
  for (int base = k0 + warp * kKeysAWarp; base < k1; base += warps * kKeysAWarp) {
    float k[kKeysAWarp][2];
#pragma unroll
    for (int i = 0; i < kKeysAWarp; ++i) {
      const int j = min(base + i, k1 - 1);
      const T *kj = K + (size_t(h) * n + j) * kDim;
      k[i][0] = toF(kj[2 * lane]);
      k[i][1] = toF(kj[2 * lane + 1]);
    }
#pragma unroll
    for (int i = 0; i < kKeysAWarp; ++i) {
      float acc = q0 * k[i][0] + q1 * k[i][1];
      for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
      const int j = base + i;
      if (lane == 0 && j < k1) {
        T prod = roundTo<T>(acc);
        T scaled = roundTo<T>(toF(prod) * scale);
        put(j, toF(roundTo<T>(toF(scaled) + toF(bias[j]))));
      }
    }
  }
}

/// A block's fold of `v` by `op`, answered to every thread (red: 32 floats).
template <typename Op> __device__ inline float blockAll(float v, Op op, float *red) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = red[0];
  for (int w = 1; w < warps; ++w) v = op(v, red[w]);
  return v;
}
struct MaxF { __device__ float operator()(float a, float b) const { return fmaxf(a, b); } };
struct SumF { __device__ float operator()(float a, float b) const { return a + b; } };

/// The row's softmax over `s` (n floats in shared memory): p_j rounded to
/// the class, written over s for keys [k0, k1).
template <typename T>
__device__ inline void softmaxInPlace(float *s, int n, int k0, int k1, float *red) {
  float m = -INFINITY;
  for (int j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, s[j]);
  m = blockAll(m, MaxF(), red);
  float total = 0;
  for (int j = threadIdx.x; j < n; j += blockDim.x) total += expf(s[j] - m);
  total = blockAll(total, SumF(), red);
  __syncthreads();
  for (int j = k0 + threadIdx.x; j < k1; j += blockDim.x)
    s[j] = toF(roundTo<T>(expf(s[j] - m) / total));
  __syncthreads();
}

/// Keys [k0, k1)'s share of p . V for head h: thread (dims group g of 8,
/// key slice ks of blockDim / 8), folded over the slices through shared
/// memory (fold: blockDim / 8 * kDim floats); answers dim threadIdx.x's
/// share in threads below kDim.
template <typename T>
__device__ inline float shareOfPV(const float *p, const T *V, int n, int h, int k0, int k1,
                                  float *fold) {
  const int g = threadIdx.x & 7, ks = threadIdx.x >> 3, slices = blockDim.x >> 3;
  float acc[8] = {};
#pragma unroll 4
  for (int j = k0 + ks; j < k1; j += slices) {
    const Vec<T, 8> v = *reinterpret_cast<const Vec<T, 8> *>(V + (size_t(h) * n + j) * kDim + g * 8);
    const float pj = p[j];
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[e] += pj * toF(v.e[e]);
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) fold[ks * kDim + g * 8 + e] = acc[e];
  __syncthreads();
  float total = 0;
  if (threadIdx.x < kDim)
    for (int s = 0; s < slices; ++s) total += fold[s * kDim + threadIdx.x];
  return total;
}

/// Block `split` of head h's share of y (in threads below kDim) into
/// `partials`; the last of the head's `splits` blocks to arrive at
/// `counter` folds the shares in split order and writes y. The counter
/// only grows: a launch's blocks are the next `splits` arrivals.
template <typename T>
__device__ inline void foldShares(float share, int h, int split, int splits, float *partials,
                                  unsigned *counter, T *y) {
  __shared__ bool last;
  if (threadIdx.x < kDim) partials[(size_t(h) * splits + split) * kDim + threadIdx.x] = share;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(counter + h, 1u) % splits == unsigned(splits - 1);
  }
  __syncthreads();
  if (!last || threadIdx.x >= kDim) return;
  __threadfence();
  float total = 0;
  for (int q = 0; q < splits; ++q)
    total += __ldcg(partials + (size_t(h) * splits + q) * kDim + threadIdx.x);
  y[size_t(h) * kDim + threadIdx.x] = roundTo<T>(total);
}

// ---- two kernels ---------------------------------------------------------

template <typename T>
__global__ void scoresKernel(const T *q, const T *K, const T *bias, float scale, int n,
                             T *scores) {
  const int keysABlock = kKeysAWarp * (kBlock / 32);
  const int blocksAHead = n / keysABlock;
  const int h = blockIdx.x / blocksAHead, k0 = blockIdx.x % blocksAHead * keysABlock;
  scoresOf(q, K, bias, scale, n, h, k0, k0 + keysABlock,
           [&](int j, float s) { scores[size_t(h) * n + j] = roundTo<T>(s); });
}

template <typename T>
__global__ void softmaxVKernel(const T *scores, const T *V, int n, int splits, float *partials,
                               unsigned *counters, T *y) {
  extern __shared__ float smem[];
  float *s = smem, *fold = smem + n;
  __shared__ float red[32];
  const int h = blockIdx.x / splits, split = blockIdx.x % splits;
  const int chunk = n / splits, k0 = split * chunk, k1 = k0 + chunk;
  for (int j = threadIdx.x; j < n; j += blockDim.x) s[j] = toF(scores[size_t(h) * n + j]);
  __syncthreads();
  softmaxInPlace<T>(s, n, k0, k1, red);
  float share = shareOfPV(s, V, n, h, k0, k1, fold);
  foldShares(share, h, split, splits, partials, counters, y);
}

// ---- one kernel, a block a head -------------------------------------------

template <typename T>
__global__ void fusedBlockKernel(const T *q, const T *K, const T *V, const T *bias, float scale,
                                 int n, T *y) {
  extern __shared__ float smem[];
  float *s = smem, *fold = smem + n;
  __shared__ float red[32];
  const int h = blockIdx.x;
  scoresOf(q, K, bias, scale, n, h, 0, n, [&](int j, float v) { s[j] = v; });
  __syncthreads();
  softmaxInPlace<T>(s, n, 0, n, red);
  float total = shareOfPV(s, V, n, h, 0, n, fold);
  if (threadIdx.x < kDim) y[size_t(h) * kDim + threadIdx.x] = roundTo<T>(total);
}

// ---- one kernel, `splits` blocks a head and a barrier among them -----------

template <typename T>
__global__ void fusedSplitKernel(const T *q, const T *K, const T *V, const T *bias, float scale,
                                 int n, int splits, float *scratch, float *partials,
                                 unsigned *arrived, unsigned *folded, T *y) {
  extern __shared__ float smem[];
  float *s = smem, *fold = smem + n;
  __shared__ float red[32];
  const int h = blockIdx.x / splits, split = blockIdx.x % splits;
  const int chunk = n / splits, k0 = split * chunk, k1 = k0 + chunk;
  float *row = scratch + size_t(h) * n;
  scoresOf(q, K, bias, scale, n, h, k0, k1, [&](int j, float v) { row[j] = v; });
  __syncthreads();
  if (threadIdx.x == 0) {
    // The head's blocks meet: the counter only grows, so this launch's
    // blocks wait for the next multiple of `splits` (every block of the
    // grid is resident: the grid is at most two blocks a SM).
    __threadfence();
    unsigned ticket = atomicAdd(arrived + h, 1u);
    unsigned target = (ticket / splits + 1) * splits;
    while (*(volatile unsigned *)(arrived + h) < target) {}
    __threadfence();
  }
  __syncthreads();
  for (int j = threadIdx.x; j < n; j += blockDim.x) s[j] = __ldcg(row + j);
  __syncthreads();
  softmaxInPlace<T>(s, n, k0, k1, red);
  float share = shareOfPV(s, V, n, h, k0, k1, fold);
  foldShares(share, h, split, splits, partials, folded, y);
}

/// y of every head on the host, in double, from the device's inputs (the
/// scores and p not rounded: the tolerance covers the class's rounding).
std::vector<float> reference(const std::vector<float> &q, const std::vector<float> &K,
                             const std::vector<float> &V, const std::vector<float> &bias,
                             float scale, int heads, int n) {
  std::vector<float> y(size_t(heads) * kDim);
  std::vector<double> s(n);
  for (int h = 0; h < heads; ++h) {
    double m = -INFINITY, total = 0;
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int d = 0; d < kDim; ++d) acc += double(q[h * kDim + d]) * K[(size_t(h) * n + j) * kDim + d];
      s[j] = acc * scale + bias[j];
      m = std::max(m, s[j]);
    }
    for (int j = 0; j < n; ++j) total += std::exp(s[j] - m);
    for (int d = 0; d < kDim; ++d) {
      double acc = 0;
      for (int j = 0; j < n; ++j) acc += std::exp(s[j] - m) / total * V[(size_t(h) * n + j) * kDim + d];
      y[h * kDim + d] = float(acc);
    }
  }
  return y;
}

template <typename T> void run(int batch, int n, int pos) {
  const int heads = 12 * batch;
  const float scale = 1.0f / 8.0f;
  const size_t cache = size_t(heads) * n * kDim;
  // Copies of K and V together past the L2 (50 MB on an H100).
  const int copies = std::max<int>(2, int((160u << 20) / (2 * cache * sizeof(T))) + 1);
  T *q, *bias, *y;
  std::vector<T *> Ks(copies), Vs(copies);
  CK(cudaMalloc(&q, heads * kDim * sizeof(T)));
  CK(cudaMalloc(&bias, n * sizeof(T)));
  CK(cudaMalloc(&y, heads * kDim * sizeof(T)));
  fillK<<<64, 256>>>(q, size_t(heads) * kDim, 1u);
  for (int c = 0; c < copies; ++c) {
    CK(cudaMalloc(&Ks[c], cache * sizeof(T)));
    CK(cudaMalloc(&Vs[c], cache * sizeof(T)));
    fillK<<<512, 256>>>(Ks[c], cache, 2u); // every copy alike: one answer
    fillK<<<512, 256>>>(Vs[c], cache, 3u);
  }
  // The mask: 0 up to pos, -1e9 after it (the model's bias).
  std::vector<T> hb(n);
  for (int j = 0; j < n; ++j) {
    float v = j <= pos ? 0.0f : -1e9f;
    if constexpr (sizeof(T) == 4) hb[j] = v;
    else hb[j] = __float2bfloat16(v);
  }
  CK(cudaMemcpy(bias, hb.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  T *scores;
  float *partials, *scratch;
  unsigned *counters;
  const int maxSplits = 16;
  CK(cudaMalloc(&scores, size_t(heads) * n * sizeof(T)));
  CK(cudaMalloc(&scratch, size_t(heads) * n * sizeof(float)));
  CK(cudaMalloc(&partials, size_t(heads) * maxSplits * kDim * sizeof(float)));
  CK(cudaMalloc(&counters, 2 * heads * sizeof(unsigned)));
  CK(cudaMemset(counters, 0, 2 * heads * sizeof(unsigned)));
  CK(cudaDeviceSynchronize());
  std::vector<float> ref = reference(download(q, heads * kDim), download(Ks[0], cache),
                                     download(Vs[0], cache), download(bias, n), scale, heads, n);
  const double tol = sizeof(T) == 4 ? 1e-4 : 3e-2;
  const size_t smem = (n + (kBlock / 8) * kDim) * sizeof(float);
  auto report = [&](const std::string &variant, int blocks, double us) {
    CK(cudaDeviceSynchronize());
    double err = worstRelativeError(download(y, heads * kDim), ref);
    std::printf("{\"probe\":\"attention_decode\",\"batch\":%d,\"heads\":%d,\"keys\":%d,"
                "\"position\":%d,\"dtype\":\"%s\",\"variant\":\"%s\",\"blocks\":%d,\"us\":%.2f,"
                "\"worst_rel_error\":%.2e,\"ok\":%s}\n",
                batch, heads, n, pos, dtypeName<T>(), variant.c_str(), blocks, us, err,
                err <= tol ? "true" : "false");
    CK(cudaMemset(y, 0, heads * kDim * sizeof(T)));
  };
  const int blocksAHead = n / (kKeysAWarp * (kBlock / 32));
  for (int splits : {4, 8}) {
    if (heads * splits > 4 * sms) continue;
    double us = timeGraph([&](int c, cudaStream_t s) {
      scoresKernel<T><<<heads * blocksAHead, kBlock, 0, s>>>(q, Ks[c], bias, scale, n, scores);
      softmaxVKernel<T><<<heads * splits, kBlock, smem, s>>>(scores, Vs[c], n, splits, partials,
                                                             counters, y);
    }, copies);
    report("two_kernels_s" + std::to_string(splits), heads * (blocksAHead + splits), us);
  }
  for (int threads : {256, 1024}) {
    // A block a head reads the head's whole cache: more warps, more keys'
    // loads in flight.
    const size_t bytes = (n + (threads / 8) * kDim) * sizeof(float);
    double us = timeGraph([&](int c, cudaStream_t s) {
      fusedBlockKernel<T><<<heads, threads, bytes, s>>>(q, Ks[c], Vs[c], bias, scale, n, y);
    }, copies);
    report("fused_block_t" + std::to_string(threads), heads, us);
  }
  for (int splits : {2, 4, 8, 16}) {
    // Every block resident at once, or the barrier would wait for blocks
    // that cannot start: at most two a SM (256 threads and 12 KB of shared
    // memory each leave room for more).
    if (heads * splits > 2 * sms || n % splits) continue;
    double us = timeGraph([&](int c, cudaStream_t s) {
      fusedSplitKernel<T><<<heads * splits, kBlock, smem, s>>>(
          q, Ks[c], Vs[c], bias, scale, n, splits, scratch, partials, counters,
          counters + heads, y);
    }, copies);
    report("fused_split_s" + std::to_string(splits), heads * splits, us);
  }
  for (int c = 0; c < copies; ++c) {
    CK(cudaFree(Ks[c]));
    CK(cudaFree(Vs[c]));
  }
  CK(cudaFree(q));
  CK(cudaFree(bias));
  CK(cudaFree(y));
  CK(cudaFree(scores));
  CK(cudaFree(scratch));
  CK(cudaFree(partials));
  CK(cudaFree(counters));
}

} // namespace

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  sms = prop.multiProcessorCount;
  for (int batch : {1, 8}) {
    run<float>(batch, 1024, 700);
    run<__nv_bfloat16>(batch, 1024, 700);
  }
  return 0;
}
