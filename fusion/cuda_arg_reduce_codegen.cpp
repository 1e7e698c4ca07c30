// argmax and argmin of long lines (OpKind::ArgMax, ArgMin; ops/
// index_reduction.h) as one kernel: each line is split over `splits`
// blocks, each block folds its part into a pair (value, index) and the
// first NaN's index, and the line's last block to arrive folds the splits'
// pairs. The pair fold picks the least index among equal extremes
// (cumo_ops::arg_better), so the answer is the reference's whatever order
// the threads and splits meet in.
#include "fusion/cuda_kernel_shape.h"

#include "core/dtype.h"
#include "ops/index_reduction.h"

#include <algorithm>
#include <string>

namespace cumo::cudagen {

namespace {

constexpr uint32_t kArgBlock = 256;
/// Elements a thread folds before a line takes another split: four loads
/// a thread in flight, so a block reads 4 KB of SFloat at once.
constexpr int64_t kArgElementsPerThread = 4;
/// Blocks a launch aims for on each SM (the splits of few lines).
constexpr int64_t kArgBlocksPerSm = 2;

/// The splits of each line: as many as give each thread
/// kArgElementsPerThread elements, no more than fill the device.
int64_t argSplits(const Kernel &k, const DeviceModel &model) {
  ArgLines l = argLinesOf(k.operandShapes[0], llvm::ArrayRef<int64_t>(k.opaqueInts).drop_front());
  if (l.count == 0)
    return 0;
  int64_t want = (l.length + int64_t(kArgBlock) * kArgElementsPerThread - 1) /
                 (int64_t(kArgBlock) * kArgElementsPerThread);
  int64_t room = std::max<int64_t>(1, int64_t(std::max(model.smCount, 1)) * kArgBlocksPerSm / l.count);
  return std::clamp<int64_t>(want, 1, room);
}

/// The key type the pairs compare in (cumo_ops::arg_key).
std::string keyType(DType t) { return isNarrowFloat(t) ? "float" : cType(t).str(); }

} // namespace

LaunchConfig argReduceLaunch(const Kernel &k, const DeviceModel &model) {
  LaunchConfig c;
  c.block = kArgBlock;
  int64_t splits = argSplits(k, model);
  c.grid = uint32_t(splits * argLinesOf(k.operandShapes[0],
                                        llvm::ArrayRef<int64_t>(k.opaqueInts).drop_front())
                                 .count);
  return c;
}

size_t argReduceScratchBytes(const Kernel &k, const LaunchConfig &launch) {
  int64_t lines = k.domainSize();
  if (lines == 0 || int64_t(launch.grid) <= lines)
    return 0; // one block a line: nothing to fold across blocks
  // A counter a line, then each block's value, index and first NaN.
  return alignTo16(size_t(lines) * 4) + 3 * alignTo16(size_t(launch.grid) * 8);
}

void emitArgReduce(const KernelShape &s, const std::string &entry, std::string &os) {
  int32_t rank = s.operandRanks[0];
  std::string r = std::to_string(std::max(rank, 1));
  std::string key = keyType(s.operandDtypes[0]);
  std::string better = s.opaqueOp == OpKind::ArgMax ? "cumo_ops::arg_better<true>"
                                                    : "cumo_ops::arg_better<false>";
  std::string o = cType(s.outDtype).str();
  emitKernelOpening(std::to_string(kArgBlock), entry, os);
  os += "  constexpr int rank = " + std::to_string(rank) + ";\n";
  // The reduced axes are structure (the node's attribute), baked in.
  os += "  constexpr bool reduced[" + r + "] = {";
  for (int32_t d = 0; d < std::max(rank, 1); ++d) {
    bool red = rank == 0 || llvm::is_contained(s.reduceAxes, d);
    os += std::string(d ? ", " : "") + (red ? "true" : "false");
  }
  os += "};\n";
  os += "  const long long lines = P.n;\n";
  os += "  const long long splits = (long long)gridDim.x / lines;\n";
  os += "  const long long line = (long long)blockIdx.x / splits, split = (long long)blockIdx.x % splits;\n";
  // The line's first element, its extent, and whether element k lies k
  // past it (every reduced axis strided by what the later ones span).
  os += "  long long len = 1, base = P.in0_off, flat_base = 0;\n";
  os += "  bool dense = true;\n";
  os += "  {\n    long long rest = line, step = 1;\n";
  os += "    for (int d = rank - 1; d >= 0; --d) {\n";
  os += "      const long long e = P.in0_ext[d];\n";
  os += "      if (reduced[d]) {\n";
  os += "        dense = dense && (e == 1 || P.in0_s[d] == len);\n";
  os += "        len *= e;\n";
  os += "      } else {\n";
  os += "        const long long c = rest % e;\n        rest /= e;\n";
  os += "        base += c * P.in0_s[d];\n        flat_base += c * step;\n";
  os += "      }\n      step *= e;\n    }\n  }\n";
  os += "  auto at = [&](long long k) -> long long {\n";
  os += "    if (dense) return base + k;\n";
  os += "    long long o = base;\n";
  os += "    for (int d = rank - 1; d >= 0; --d)\n";
  os += "      if (reduced[d]) { o += (k % P.in0_ext[d]) * P.in0_s[d]; k /= P.in0_ext[d]; }\n";
  os += "    return o;\n  };\n";
  os += "  using K = " + key + ";\n";
  os += "  K best{};\n  long long best_at = -1, nan_at = -1;\n";
  os += "  const long long chunk = (len + splits - 1) / splits;\n";
  os += "  const long long k0 = split * chunk, k1 = k0 + chunk < len ? k0 + chunk : len;\n";
  os += "  #pragma unroll 4\n";
  os += "  for (long long k = k0 + threadIdx.x; k < k1; k += blockDim.x) {\n";
  os += "    const K v = cumo_ops::arg_key(P.in0[at(k)]);\n";
  os += "    if (cumo_ops::sort_isnan(v)) { nan_at = cumo_ops::arg_first_nan(nan_at, k); continue; }\n";
  os += "    if (" + better + "(best, best_at, v, k)) { best = v; best_at = k; }\n";
  os += "  }\n";
  // The block's pairs, folded in shared memory (a tree over the threads).
  os += "  __shared__ K s_best[" + std::to_string(kArgBlock) + "];\n";
  os += "  __shared__ long long s_at[" + std::to_string(kArgBlock) + "], s_nan[" +
        std::to_string(kArgBlock) + "];\n";
  os += "  __shared__ bool last;\n";
  os += "  auto fold_block = [&]() {\n";
  os += "    s_best[threadIdx.x] = best; s_at[threadIdx.x] = best_at; s_nan[threadIdx.x] = nan_at;\n";
  os += "    __syncthreads();\n";
  os += "    for (unsigned int h = blockDim.x / 2; h > 0; h >>= 1) {\n";
  os += "      if (threadIdx.x < h) {\n";
  os += "        const unsigned int u = threadIdx.x + h;\n";
  os += "        if (" + better + "(s_best[threadIdx.x], s_at[threadIdx.x], s_best[u], s_at[u])) {\n";
  os += "          s_best[threadIdx.x] = s_best[u]; s_at[threadIdx.x] = s_at[u];\n        }\n";
  os += "        s_nan[threadIdx.x] = cumo_ops::arg_first_nan(s_nan[threadIdx.x], s_nan[u]);\n";
  os += "      }\n      __syncthreads();\n    }\n";
  os += "    best = s_best[0]; best_at = s_at[0]; nan_at = s_nan[0];\n";
  os += "    __syncthreads();\n  };\n";
  // The answer: the first NaN where nan: true finds one, else the first
  // extreme, else (nothing but NaN) the line's first element.
  os += "  auto answer = [&]() {\n";
  os += "    long long k = P.propagate && nan_at >= 0 ? nan_at : (best_at >= 0 ? best_at : 0);\n";
  if (s.flat) {
    os += "    long long f = flat_base, step = 1;\n";
    os += "    for (int d = rank - 1; d >= 0; --d) {\n";
    os += "      if (reduced[d]) { f += (k % P.in0_ext[d]) * step; k /= P.in0_ext[d]; }\n";
    os += "      step *= P.in0_ext[d];\n    }\n";
    os += "    k = f;\n";
  }
  os += "    P.out[P.out_off + line] = (" + o + ")k;\n  };\n";
  os += "  fold_block();\n";
  os += "  if (splits == 1) {\n    if (threadIdx.x == 0) answer();\n    return;\n  }\n";
  // The splits' pairs: a counter a line, then the values, indices and
  // first NaNs of every block.
  os += "  unsigned int *counters = reinterpret_cast<unsigned int *>(P.scratch);\n";
  os += "  unsigned char *parts = P.scratch + (lines * 4 + 15) / 16 * 16;\n";
  os += "  const long long slots = ((long long)gridDim.x * 8 + 15) / 16 * 16;\n";
  os += "  K *p_best = reinterpret_cast<K *>(parts);\n";
  os += "  long long *p_at = reinterpret_cast<long long *>(parts + slots);\n";
  os += "  long long *p_nan = reinterpret_cast<long long *>(parts + 2 * slots);\n";
  os += "  if (threadIdx.x == 0) {\n";
  os += "    p_best[blockIdx.x] = best; p_at[blockIdx.x] = best_at; p_nan[blockIdx.x] = nan_at;\n";
  os += "  }\n";
  os += "  __syncthreads();\n";
  os += "  if (threadIdx.x == 0) last = cumo_k::arrive_last(counters + line, (unsigned int)splits);\n";
  os += "  __syncthreads();\n";
  os += "  if (!last) return;\n";
  os += "  best = K{}; best_at = -1; nan_at = -1;\n";
  os += "  for (long long q = threadIdx.x; q < splits; q += blockDim.x) {\n";
  os += "    const long long b = line * splits + q;\n";
  os += "    const K v = cumo_k::vload<K>(reinterpret_cast<const unsigned char *>(p_best + b));\n";
  os += "    const long long i = cumo_k::vload<long long>(reinterpret_cast<const unsigned char *>(p_at + b));\n";
  os += "    if (" + better + "(best, best_at, v, i)) { best = v; best_at = i; }\n";
  os += "    nan_at = cumo_ops::arg_first_nan(nan_at, cumo_k::vload<long long>(reinterpret_cast<const unsigned char *>(p_nan + b)));\n";
  os += "  }\n";
  os += "  fold_block();\n";
  os += "  if (threadIdx.x == 0) {\n    answer();\n    counters[line] = 0u;\n  }\n";
  os += "}\n";
}

} // namespace cumo::cudagen
