// bench/probes/reduce_tail.cu: what the end of a full reduction costs a
// CG-sized kernel, and how much of it each way of ending saves. Not part
// of the library: a standalone program, built with nvcc.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/reduce_tail bench/probes/reduce_tail.cu
//   /tmp/reduce_tail
//
// Why: the CG loop's two kernels (bench/cg_bench.rb, 512x512 SFloat) take
// 13.3 us an iteration on the H100, where a hand-fused loop of four kernels
// took 8.8 on the H200 (issue 6). Each of ours ends a full reduction the
// generated way (fusion/cuda_codegen: block partials, thread 0's fence and
// atomic, the last block to arrive folds the partials and stores the 0-dim
// result), and `ncu` had put 30% of the stencil kernel's stall samples at
// the barrier after that fence and atomic.
//
// The work: kernels alternate as the CG loop's do, each reading the scalar
// the one before it reduced, computing y = a + s * y over 262144 floats
// (two arrays read, one written, 1 MB each) and the sum of y * y. Each
// copies a 912-byte parameter block to shared memory first and waits in
// griddepcontrol.wait, as ours do; the graph's edges are programmatic
// (pdl 1) or plain (pdl 0). One JSON line per (tail, elements a thread,
// pdl): microseconds a kernel, over a graph of 200 kernels, best of 7.
//
// The tails:
//   last_block   ours: fence, atomic, the last block folds and stores.
//   acq_rel      the same, with the atomic itself acquire-release and no
//                separate fences.
//   consumer     no tail: every block of the next kernel folds the
//                partials itself, in the order the last block would (the
//                same bits).
//   atomic_float each block adds its partial to the result with a float
//                atomic (order not fixed: the floor, not a candidate).
//   none         no reduction at all: the elementwise floor.
//
// Measured on a lent H100 80GB HBM3, 2026-12-06 (us a kernel, pdl 1; the
// exact tails gave the same bits):
//
//   elements a thread, blocks   2, 512   4, 256   8, 128
//   last_block                   5.13     3.88     3.80
//   acq_rel                      4.80     3.56     3.46
//   consumer                     3.43     2.62     2.47
//   atomic_float                 3.19     2.32     2.22
//   none                         1.35     1.34     1.60
//
// So at our grid (two elements a thread, 512 blocks at 512x512) the tail
// costs 3.8 us of a 5.1 us kernel; acq_rel saves 0.33 (now generated);
// folding in the consumer would save 1.7; a quarter of the blocks, with
// every element's load in flight at once, 1.3-1.6 whatever the tail.
//
// Rounds (second H100 run, 2026-12-06 06:20 UTC, pdl 1, us a kernel): the
// same blocks cut with two loads in flight and several rounds a thread.
//
//   elements in flight x rounds, blocks   2x1, 512   2x2, 256   2x4, 128   2x8, 64
//   acq_rel                                4.66       3.93       4.34       4.67
//   consumer                               3.43       3.12       3.48       3.84
//   none                                   1.36       1.58       1.98       2.96
//
// In the generated CG kernels neither paid. Built with the grid's elements
// a thread E and the loads in flight K as settings (not kept), the CG
// loop's device time (bench/cg_bench.rb, 512x512, never reading; us an
// iteration) was 12.58 at K=2 E=2 (ours), 17.04 at K=2 E=4, 24.16 at K=2
// E=8, 12.81 at K=4 E=4, 18.84 at K=4 E=8 and 15.19 at K=8 E=8 (K above 2
// at fewer blocks an SM, 2 or 1, so that the registers fit: 124-231 of
// them, no spills). Their bodies (a stencil of slice updates, five vectors
// written) need the blocks to hide their latency, which this kernel's does
// not; at 2048x2048 K=4 E=8 took 124.2 us an iteration against 108.7.
#include "probe_common.cuh"

namespace {

enum class Tail { LastBlock, AcqRel, Consumer, AtomicFloat, None };
const char *tailName(Tail t) {
  switch (t) {
  case Tail::LastBlock: return "last_block";
  case Tail::AcqRel: return "acq_rel";
  case Tail::Consumer: return "consumer";
  case Tail::AtomicFloat: return "atomic_float";
  case Tail::None: return "none";
  }
  return "?";
}

constexpr int kSlots = 4;     // kernel k reads slot k-1 and writes slot k
constexpr int kMaxBlocks = 4096;
constexpr int kParamBytes = 912;

struct Ring {
  float result[kSlots];
  unsigned counter[kSlots];
  float partials[kSlots][kMaxBlocks];
};

__device__ __forceinline__ float blockSum(float v, float *red) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? red[lane] : 0.f;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v; // thread 0's is the block's
}

/// The fold of `blocks` partials in the order the last block folds them.
__device__ __forceinline__ float foldPartials(const float *p, int blocks, float *red) {
  float f = 0.f;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) f += *(const volatile float *)(p + b);
  return blockSum(f, red);
}

template <Tail T, int ILP>
__global__ void __launch_bounds__(256, 4)
    step(const unsigned char *params, const float *__restrict__ a, float *__restrict__ y,
         Ring *ring, int n, int k) {
  __shared__ unsigned long long P[kParamBytes / 8];
  for (int i = threadIdx.x; i < kParamBytes / 8; i += blockDim.x)
    P[i] = reinterpret_cast<const unsigned long long *>(params)[i];
  __syncthreads();
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float red[32];
  __shared__ float scalar;
  const int in = (k + kSlots - 1) % kSlots, out = k % kSlots;
  float s;
  if constexpr (T == Tail::Consumer) {
    const float f = foldPartials(ring->partials[in], gridDim.x, red);
    if (threadIdx.x == 0) scalar = f;
    __syncthreads();
    s = scalar;
    // The 0-dim value itself, for whoever reads it later.
    if (blockIdx.x == 0 && threadIdx.x == 0) ring->result[in] = s;
  } else if constexpr (T == Tail::None) {
    s = 0.5f;
  } else {
    s = *(volatile float *)&ring->result[in];
  }
  s = 1.f / (1.f + s * 1e-6f) + float(P[0] & 1);
  float acc = 0.f;
  const int stride = gridDim.x * blockDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += ILP * stride) {
    float v[ILP];
#pragma unroll
    for (int e = 0; e < ILP; ++e) {
      const int j = i + e * stride;
      v[e] = j < n ? a[j] + s * y[j] * 0.5f : 0.f;
    }
#pragma unroll
    for (int e = 0; e < ILP; ++e) {
      const int j = i + e * stride;
      if (j < n) y[j] = v[e];
      acc += v[e] * v[e];
    }
  }
  if constexpr (T == Tail::None) return;
  acc = blockSum(acc, red);
  if constexpr (T == Tail::AtomicFloat) {
    if (blockIdx.x == 0 && threadIdx.x == 0) ring->result[(k + 1) % kSlots] = 0.f;
    if (threadIdx.x == 0) atomicAdd(&ring->result[out], acc);
    return;
  } else if constexpr (T == Tail::Consumer) {
    if (threadIdx.x == 0) ring->partials[out][blockIdx.x] = acc;
    return;
  } else {
    __shared__ bool last;
    if (threadIdx.x == 0) {
      ring->partials[out][blockIdx.x] = acc;
      unsigned before;
      if constexpr (T == Tail::LastBlock) {
        __threadfence();
        before = atomicAdd(&ring->counter[out], 1u);
      } else {
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                     : "=r"(before)
                     : "l"(&ring->counter[out])
                     : "memory");
      }
      last = before == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    if constexpr (T == Tail::LastBlock) __threadfence();
    const float f = foldPartials(ring->partials[out], gridDim.x, red);
    if (threadIdx.x == 0) {
      ring->result[out] = f;
      ring->counter[out] = 0u;
    }
  }
}

struct Buffers {
  unsigned char *params;
  float *a, *y;
  Ring *ring;
  int n;
};

/// `rounds`: how many times round the grid-stride loop each thread goes,
/// ILP elements a time (a quarter of the blocks at 4, say).
template <Tail T, int ILP> void run(const Buffers &b, bool pdl, int rounds = 1) {
  const int blocks = (b.n + 256 * ILP * rounds - 1) / (256 * ILP * rounds);
  if (blocks > kMaxBlocks) return;
  CK(cudaMemset(b.ring, 0, sizeof(Ring)));
  fillK<<<sms * 4, 256>>>(b.y, size_t(b.n), 7u);
  CK(cudaDeviceSynchronize());
  constexpr int kKernels = 200;
  // Launch k of the graph is kernel k: it reads slot k - 1 and writes k.
  const double best = timeGraph(
      [&](int k, cudaStream_t s) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(unsigned(blocks));
        cfg.blockDim = dim3(256);
        cfg.stream = s;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = pdl ? 1 : 0;
        CK(cudaLaunchKernelEx(&cfg, step<T, ILP>, (const unsigned char *)b.params,
                              (const float *)b.a, b.y, b.ring, b.n, k));
      },
      kKernels, kKernels);
  // The second-to-last kernel's sum (the consumer tail's last kernel
  // stored it), so that the exact tails can be seen to agree bit for bit.
  Ring host;
  CK(cudaMemcpy(&host, b.ring, sizeof(Ring), cudaMemcpyDeviceToHost));
  const float last = host.result[(kKernels - 2) % kSlots];
  std::printf("{\"probe\":\"reduce_tail\",\"tail\":\"%s\",\"ilp\":%d,\"rounds\":%d,"
              "\"blocks\":%d,\"pdl\":%d,\"n\":%d,\"us_per_kernel\":%.3f,"
              "\"sum_before_last\":%.9g}\n",
              tailName(T), ILP, rounds, blocks, int(pdl), b.n, best, double(last));
}

template <int ILP> void runAll(const Buffers &b) {
  for (bool pdl : {true, false}) {
    run<Tail::LastBlock, ILP>(b, pdl);
    run<Tail::AcqRel, ILP>(b, pdl);
    run<Tail::Consumer, ILP>(b, pdl);
    run<Tail::AtomicFloat, ILP>(b, pdl);
    run<Tail::None, ILP>(b, pdl);
  }
}

} // namespace

int main(int argc, char **argv) {
  int dev = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  Buffers b;
  b.n = argc > 1 ? std::atoi(argv[1]) : 512 * 512;
  CK(cudaMalloc(&b.params, kParamBytes));
  CK(cudaMemset(b.params, 0, kParamBytes));
  CK(cudaMalloc(&b.a, size_t(b.n) * 4));
  CK(cudaMalloc(&b.y, size_t(b.n) * 4));
  CK(cudaMalloc(&b.ring, sizeof(Ring)));
  fillK<<<sms * 4, 256>>>(b.a, size_t(b.n), 3u);
  runAll<1>(b);
  runAll<2>(b);
  runAll<4>(b);
  runAll<8>(b);
  // Fewer blocks with the loads of one round in flight, several rounds a
  // thread: what a grid reduction's block count buys without wider rounds.
  for (int rounds : {2, 4, 8}) {
    run<Tail::AcqRel, 2>(b, true, rounds);
    run<Tail::Consumer, 2>(b, true, rounds);
    run<Tail::None, 2>(b, true, rounds);
    run<Tail::AcqRel, 4>(b, true, rounds);
  }
  return 0;
}
