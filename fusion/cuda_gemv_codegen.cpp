// CUDA kernels of small matrix products: a few rows times a matrix (the
// matrix-vector products of a decode step, m = 1 to 16), in the real float
// classes, which the generated kernel takes instead of cuBLAS. They are
// bound by reading the matrix once, and a generated kernel reads its
// pointers from its parameter block: a replay patches them, where a
// captured cuBLAS call is bound to the addresses it was captured with and
// is captured again whenever they change (every token of a decode loop).
//
// Two layouts, by the matrix's stride along k (structural: the plan key
// holds the operands' layouts):
//   - along k unit-strided (a weight stored (n, k) and used transposed): a
//     warp per output column, its lanes stepping along k, then the warp's
//     tree;
//   - otherwise (a weight stored (k, n)): a thread per column in tiles of
//     32, k split over the block's 8 warps, then the 8 partials folded in
//     order through shared memory.
// Every row of the small operand is computed from one read of the matrix.
// The products accumulate in matmulAccumulator (single precision for the
// sixteen-bit classes, which round once) and are scaled by gemm's alpha.
//
// With an epilogue (fusion/epilogue.h), the thread that finishes element
// (r, j) rounds it to the product's dtype, as the product's store would,
// and computes its consumers there with the elementwise kernels' emitter
// (emitElementBody), storing what the plan stores.
#include "fusion/cuda_kernel_shape.h"

#include "ops/matmul.h"

#include <algorithm>

namespace cumo {

bool isSmallProduct(const Kernel &k) {
  return k.kind == Kernel::Kind::Opaque && k.opaqueOp == OpKind::MatMul &&
         isSmallProduct(k.opaqueDtype, k.operandShapes[0], k.operandShapes[1]);
}

namespace cudagen {

namespace {
constexpr uint32_t kGemvBlock = 256;
constexpr uint32_t kGemvSlices = kGemvBlock / kWarpSize;
constexpr int64_t kGemvBlocksPerSm = 32;

/// The store of element (r, j) of the product from `total`, the
/// accumulated sum, as one statement.
std::string storeResult(const KernelShape &s, DType acc) {
  return "P.out[P.out_off + r * N + j] = " +
         castExpr(acc, s.outDtype, "cumo_ops::wmul(alpha, total)") + ";";
}

/// The statements that write element (r, j) from `total` at `indent`: the
/// product's store, or with an epilogue the product rounded to its dtype
/// as that store would round it, and the consumers computed from it.
std::string emitWrite(const KernelShape &s, DType acc, int indent) {
  std::string os;
  if (!s.hasEpilogue()) {
    line(os, indent, storeResult(s, acc));
    return os;
  }
  // The domain is the result's shape: (M, N), (N) for a vector times a
  // matrix, (M) for a matrix times a vector, () for two vectors.
  int32_t ra = s.operandRanks[0], rb = s.operandRanks[1];
  line(os, indent, "const I idx = (I)(r * N + j);");
  int32_t axis = 0;
  if (ra == 2)
    line(os, indent, "const I c0_" + std::to_string(axis++) + " = (I)r;");
  if (rb == 2)
    line(os, indent, "const I c0_" + std::to_string(axis++) + " = (I)j;");
  line(os, indent, "(void)idx;");
  line(os, indent, "const " + cType(s.outDtype).str() + " " + kResultName + " = " +
                       castExpr(acc, s.outDtype, "cumo_ops::wmul(alpha, total)") + ";");
  emitElementBody(s, os, indent);
  return os;
}
} // namespace

void analyzeGemv(const Kernel &k, KernelShape &s) {
  const Shape &a = k.operandShapes[0];
  int64_t m = a.size() == 2 ? a[0] : 1;
  int32_t rows = 1;
  while (rows < m)
    rows *= 2;
  s.gemvRows = rows;
  // The matrix's stride along k, the first of its axes.
  s.gemvAlongK = k.operands[1].index.strides[0] == 1;
}

void emitGemv(const KernelShape &s, const std::string &entry, std::string &os) {
  int32_t ra = s.operandRanks[0], rb = s.operandRanks[1];
  DType acc = matmulAccumulator(s.outDtype);
  std::string a = cType(acc).str();
  auto cast = [&](size_t operand, const std::string &e) {
    return castExpr(s.operandDtypes[operand], acc, e);
  };
  uint32_t block = kGemvBlock;
  os += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(block) + ") " + entry +
        "(const unsigned char *__restrict__ params) {\n";
  os += "  const CumoParams &P = *reinterpret_cast<const CumoParams *>(params);\n";
  os += "  constexpr int MR = " + std::to_string(s.gemvRows) + ";\n";
  os += "  const long long K = P.in0_ext[" + std::to_string(ra - 1) + "];\n";
  os += "  const long long M = " + (ra == 2 ? std::string("P.in0_ext[0]") : "1LL") + ";\n";
  os += "  const long long N = " + (rb == 2 ? std::string("P.in1_ext[1]") : "1LL") + ";\n";
  os += "  const long long a_r = " + (ra == 2 ? std::string("P.in0_s[0]") : "0LL") +
        ", a_c = P.in0_s[" + std::to_string(ra - 1) + "];\n";
  os += "  const long long b_r = P.in1_s[0], b_c = " +
        (rb == 2 ? std::string("P.in1_s[1]") : "0LL") + ";\n";
  os += "  const " + a + " alpha = (" + a + ")(P.alpha);\n";
  os += "  const long long lane = threadIdx.x & 31u;\n";
  // An epilogue's addresses are computed in 64 bits: a product's few
  // rows need no narrow path.
  if (s.hasEpilogue())
    os += "  using I = long long;\n";
  // One step of the fold: every row's product with the matrix element bv.
  std::string step = "        #pragma unroll\n"
                     "        for (int r = 0; r < MR; ++r)\n"
                     "          if (r < M)\n"
                     "            acc[r] = cumo_ops::wadd(acc[r], cumo_ops::wmul(" +
                     cast(0, "P.in0[P.in0_off + r * a_r + p * a_c]") + ", bv));\n";
  if (s.gemvAlongK) {
    os += "  const long long warps = (long long)gridDim.x * (blockDim.x >> 5);\n";
    os += "  for (long long j = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);"
          " j < N; j += warps) {\n";
    os += "    " + a + " acc[MR];\n";
    os += "    #pragma unroll\n    for (int r = 0; r < MR; ++r) acc[r] = (" + a + ")0;\n";
    os += "    const long long bo = P.in1_off + j * b_c;\n";
    os += "    #pragma unroll 4\n";
    os += "    for (long long p = lane; p < K; p += 32) {\n";
    os += "        const " + a + " bv = " + cast(1, "P.in1[bo + p]") + ";\n";
    os += step;
    os += "    }\n";
    os += "    #pragma unroll\n    for (int r = 0; r < MR; ++r) {\n";
    os += "      const " + a + " total = cumo_k::warp_reduce(acc[r], cumo_k::SumOp());\n";
    if (s.hasEpilogue())
      os += "      if (lane == 0 && r < M) {\n" + emitWrite(s, acc, 8) + "      }\n";
    else
      os += "      if (lane == 0 && r < M) " + storeResult(s, acc) + "\n";
    os += "    }\n  }\n}\n";
    return;
  }
  // Thread per column: a block takes 32 columns and one of `splits` equal
  // runs of k (blockIdx.x = tile + tiles * split), its 8 warps striding
  // that run. A decode step's weights are (k, n) with n of 768 to 3072:
  // 24 to 96 column tiles, too few blocks to keep the memory busy, so k is
  // split until the grid fills the device (gemvLaunch). The warps' partials
  // fold in order through shared memory; with several splits each block
  // leaves its partial in scratch, and the last block of a tile to arrive
  // folds them in split order (deterministic, whichever arrives last) and
  // rearms the tile's counter for the next launch.
  std::string slices = std::to_string(kGemvSlices);
  os += "  const long long slice = threadIdx.x >> 5;\n";
  os += "  __shared__ " + a + " part[" + slices + "][MR][32];\n";
  os += "  __shared__ bool last;\n";
  os += "  const long long tiles = (N + 31) / 32;\n";
  os += "  const long long splits = (long long)gridDim.x / tiles;\n";
  os += "  const long long tile = (long long)blockIdx.x % tiles, split = (long long)blockIdx.x / tiles;\n";
  os += "  const long long chunk = (K + splits - 1) / splits;\n";
  os += "  const long long k0 = split * chunk, k1 = min(K, k0 + chunk);\n";
  // As gemvScratchBytes lays it out: a counter per tile, then the partials.
  os += "  unsigned int *counters = reinterpret_cast<unsigned int *>(P.scratch);\n";
  os += "  " + a + " *partials = reinterpret_cast<" + a +
        " *>(P.scratch + (tiles * 4 + 15) / 16 * 16);\n";
  os += "  const long long j = tile * 32 + lane;\n";
  os += "  " + a + " acc[MR];\n";
  os += "  #pragma unroll\n  for (int r = 0; r < MR; ++r) acc[r] = (" + a + ")0;\n";
  os += "  if (j < N) {\n";
  os += "    const long long bo = P.in1_off + j * b_c;\n";
  os += "    #pragma unroll 4\n";
  os += "    for (long long p = k0 + slice; p < k1; p += " + slices + ") {\n";
  os += "        const " + a + " bv = " + cast(1, "P.in1[bo + p * b_r]") + ";\n";
  os += step;
  os += "    }\n  }\n";
  os += "  #pragma unroll\n  for (int r = 0; r < MR; ++r) part[slice][r][lane] = acc[r];\n";
  os += "  __syncthreads();\n";
  os += "  if (slice == 0 && j < N) {\n";
  os += "    for (int r = 0; r < MR && r < M; ++r) {\n";
  os += "      " + a + " total = part[0][r][lane];\n";
  os += "      for (int w = 1; w < " + slices + "; ++w) total = cumo_ops::wadd(total, part[w][r][lane]);\n";
  if (s.hasEpilogue())
    os += "      if (splits == 1) {\n" + emitWrite(s, acc, 8) + "      }\n";
  else
    os += "      if (splits == 1) { " + storeResult(s, acc) + " }\n";
  os += "      else partials[(split * M + r) * N + j] = total;\n";
  os += "    }\n  }\n";
  os += "  if (splits == 1) return;\n";
  os += "  __threadfence();\n";
  os += "  __syncthreads();\n";
  os += "  if (threadIdx.x == 0) last = atomicAdd(counters + tile, 1u) == (unsigned int)(splits - 1);\n";
  os += "  __syncthreads();\n";
  os += "  if (!last) return;\n";
  os += "  __threadfence();\n";
  os += "  if (slice == 0 && j < N) {\n";
  os += "    for (int r = 0; r < MR && r < M; ++r) {\n";
  os += "      " + a + " total = __ldcg(partials + r * N + j);\n";
  os += "      for (long long q = 1; q < splits; ++q)\n";
  os += "        total = cumo_ops::wadd(total, __ldcg(partials + (q * M + r) * N + j));\n";
  os += emitWrite(s, acc, 6);
  os += "    }\n  }\n";
  os += "  if (threadIdx.x == 0) counters[tile] = 0u;\n";
  os += "}\n";
}

namespace {
/// The columns of the small operand's product one thread-per-column block
/// covers, and the smallest run of k worth a split of its own.
constexpr int64_t kGemvTileColumns = 32;
constexpr int64_t kGemvMinSplitRows = 4 * int64_t(kGemvSlices);
/// Blocks per SM the split layout aims for (8 of 256 threads fill one).
constexpr int64_t kGemvSplitBlocksPerSm = 8;

struct GemvExtents {
  int64_t m, k, n;
};
GemvExtents gemvExtents(const Kernel &k) {
  const Shape &a = k.operandShapes[0], &b = k.operandShapes[1];
  return {a.size() == 2 ? a[0] : 1, a.back(), b.size() == 2 ? b[1] : 1};
}
bool alongK(const Kernel &k) { return k.operands[1].index.strides[0] == 1; }
size_t alignTo16(size_t n) { return (n + 15) / 16 * 16; }
} // namespace

size_t gemvScratchBytes(const Kernel &k, const LaunchConfig &launch) {
  if (alongK(k))
    return 0;
  GemvExtents e = gemvExtents(k);
  int64_t tiles = (e.n + kGemvTileColumns - 1) / kGemvTileColumns;
  int64_t splits = tiles ? int64_t(launch.grid) / tiles : 1;
  if (splits <= 1)
    return 0;
  size_t acc = sizeOf(matmulAccumulator(k.opaqueDtype));
  return alignTo16(size_t(tiles) * 4) + alignTo16(size_t(splits * e.m * e.n) * acc);
}

LaunchConfig gemvLaunch(const Kernel &k, const DeviceModel &model) {
  GemvExtents e = gemvExtents(k);
  int64_t sms = std::max(model.smCount, 1);
  LaunchConfig c;
  c.block = kGemvBlock;
  if (e.m == 0 || e.n == 0) {
    c.grid = 0; // an empty result: nothing to launch
    return c;
  }
  if (alongK(k)) {
    int64_t perBlock = kGemvBlock / kWarpSize;
    c.grid = uint32_t(std::clamp<int64_t>((e.n + perBlock - 1) / perBlock, 1,
                                          sms * kGemvBlocksPerSm));
    return c;
  }
  // Every tile of 32 columns once, times the splits of k that fill the
  // device, each at least kGemvMinSplitRows long.
  int64_t tiles = std::max<int64_t>((e.n + kGemvTileColumns - 1) / kGemvTileColumns, 1);
  int64_t want = sms * kGemvSplitBlocksPerSm / tiles;
  int64_t splits = std::clamp<int64_t>(std::min(want, e.k / kGemvMinSplitRows), 1, 1024);
  c.grid = uint32_t(tiles * splits);
  return c;
}

} // namespace cudagen
} // namespace cumo
