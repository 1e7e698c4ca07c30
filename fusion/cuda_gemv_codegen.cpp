// CUDA kernels of small matrix products: a few rows times a matrix (the
// matrix-vector products of a decode step, m = 1 to 16), or a batch of them
// (its attention: one query row by each head's keys, then values), in the
// real float classes, which the generated kernel takes instead of cuBLAS.
// The batch axes broadcast as matmul's do; each product of the batch is
// decoded from its index into the operands' offsets. They are
// bound by reading the matrix once, and a generated kernel reads its
// pointers from its parameter block: a replay patches them, where a
// captured cuBLAS call is bound to the addresses it was captured with and
// is captured again whenever they change (every token of a decode loop).
//
// Two layouts, by the matrix's stride along k (structural: the plan key
// holds the operands' layouts):
//   - along k unit-strided (a weight stored (n, k) and used transposed): up
//     to 32 lanes per output column, stepping along k (16 bytes at a time
//     where every column starts on a 16-byte boundary), each lane group
//     folding up to four columns at once from the rows widened once into
//     shared memory, then each column's butterfly (emitAlongK);
//   - otherwise (a weight stored (k, n)): a thread per CV consecutive
//     columns (one 16-byte vector where the rows are aligned), in tiles of
//     32 threads, k split over the block's 8 warps and, until the device is
//     full, over blocks; the 8 partials fold in order through shared
//     memory, the blocks' through scratch in the last block to arrive.
// Every row of the small operand is computed from one read of the matrix.
// The products accumulate in matmulAccumulator (single precision for the
// sixteen-bit classes, which round once) and are scaled by gemm's alpha.
//
// With an epilogue (fusion/epilogue.h), the thread that finishes element
// (r, j) rounds it to the product's dtype, as the product's store would,
// and computes its consumers there with the elementwise kernels' emitter
// (emitElementBody), storing what the plan stores. With a prologue
// (fusion/prologue.h), each block first computes the row op over the rows
// of the small operand it reads, into shared memory, and multiplies from
// there.
#include "core/error.h"
#include "fusion/cuda_kernel_shape.h"
#include "fusion/cuda_row_codegen.h"
#include "fusion/prologue.h"

#include "ops/matmul.h"
#include "ops/row_layout.h"
#include "ops/row_ops.h"

#include <algorithm>
#include <cmath>

namespace cumo {

bool isSmallProduct(const Kernel &k) {
  return k.kind == Kernel::Kind::Opaque && k.opaqueOp == OpKind::MatMul &&
         isSmallProduct(k.opaqueDtype, k.operandShapes[0], k.operandShapes[1]);
}

bool runsInLibrary(const Kernel &k) {
  return k.kind == Kernel::Kind::Opaque && k.opaqueOp == OpKind::MatMul &&
         (isFloat(k.opaqueDtype) || isComplex(k.opaqueDtype)) && !isSmallProduct(k);
}

namespace cudagen {

namespace {
constexpr uint32_t kGemvBlock = 256;
constexpr uint32_t kGemvSlices = kGemvBlock / kWarpSize;
/// The blocks an SM must hold at once (the launch bounds' minimum): the
/// thread-per-column layout's grid is two to three blocks an SM
/// (kGemvTilingRule), which three hold in one wave (ptxas then keeps a
/// thread to 80 registers); so is the along-k layout's, whose warps stride
/// over the columns (at four an SM and 64 registers, its LM head spilled
/// up to 128 bytes a thread: ptxas, sm_90).
constexpr uint32_t kGemvMinBlocksPerSm = 3;
/// Vectors of the matrix a thread of the thread-per-column layout loads
/// before it waits for the kernels before it (gemvEarlyLoads): as many as
/// the loop keeps in flight (its unroll).
constexpr int kEarlyVectors = 4;
/// The along-k layout's rows up to which it loads early (analyzeGemv):
/// without a prologue, and with one.
constexpr int32_t kAlongKEarlyRows = 2;
constexpr int32_t kAlongKEarlyRowsWithPrologue = 4;

/// Early loads (KernelShape::gemvEarlyLoads: the matrix is memory no
/// kernel of the plan writes): where `when` holds, kEarlyVectors vectors of
/// type `vt` into early[], the q-th from `address` at position
/// `at = position` of the run while `inRange`; then the wait for the
/// kernels before this one, so the loads run under their tail.
void emitEarlyLoads(const std::string &vt, const std::string &when, const std::string &position,
                    const std::string &inRange, const std::string &address, std::string &os) {
  os += "  constexpr int EARLY = " + std::to_string(kEarlyVectors) + ";\n";
  os += "  " + vt + " early[EARLY];\n";
  os += "  const bool loaded_early = " + when + ";\n";
  os += "  if (loaded_early)\n";
  os += "    #pragma unroll\n";
  os += "    for (int q = 0; q < EARLY; ++q) {\n";
  os += "      const IX at = " + position + ";\n";
  os += "      if (" + inRange + ") early[q] = *reinterpret_cast<const " + vt + " *>(" + address +
        ");\n";
  os += "    }\n";
  line(os, 2, kWaitForPriorGrids);
}

/// Where `when` holds, the vectors emitEarlyLoads loaded folded first, each
/// as `w` by `fold`, the run's cursor `cursor` stepping by `step` while
/// below `end`: the same positions in the same order as the loop after.
void emitEarlyFolds(const std::string &vt, const std::string &when, const std::string &cursor,
                    const std::string &end, const std::string &step, const std::string &fold,
                    std::string &os) {
  os += "    if (" + when + ")\n";
  os += "      #pragma unroll\n";
  os += "      for (int i = 0; i < EARLY && " + cursor + " < " + end + "; ++i, " + cursor +
        " += " + step + ") {\n";
  os += "      const " + vt + " w = early[i];\n";
  os += fold;
  os += "      }\n";
}

/// Operand `o`'s element `e` widened to the accumulator `acc`. Every such
/// element feeds a multiply-add, so a binary16 one skips the NaN payload's
/// test (float_of_half_for_product).
std::string widenOperand(const KernelShape &s, size_t o, DType acc, const std::string &e) {
  if (s.operandDtypes[o] == DType::HFloat && acc == DType::SFloat)
    return "cumo_ops::float_of_half_for_product(" + e + ")";
  return castExpr(s.operandDtypes[o], acc, e);
}

/// The axes of a batched product's batch (the broadcast of both
/// operands' leading axes; none unless both are matrices).
int32_t batchRank(const KernelShape &s) {
  int32_t ra = s.operandRanks[0], rb = s.operandRanks[1];
  return ra >= 2 && rb >= 2 ? std::max(ra, rb) - 2 : 0;
}

/// Operand `o`'s axis that batch axis `d` (of `nb`) reads, or -1 where it
/// has none (broadcast).
int32_t batchAxisOf(const KernelShape &s, int32_t o, int32_t d, int32_t nb) {
  int32_t own = s.operandRanks[o] - 2;
  int32_t axis = d - (nb - own);
  return axis >= 0 ? axis : -1;
}

/// Statements at `indent` that decode batch index `bi` into the operands'
/// start offsets `a_b` and `b_b` and, when `coords`, the batch coordinates
/// `bc<d>`: the last batch axis varies fastest, and an operand's axis of
/// extent one is broadcast (its stride ignored).
std::string emitBatchDecode(const KernelShape &s, int indent, bool coords) {
  std::string os;
  int32_t nb = batchRank(s);
  line(os, indent, "IX a_b = P.in0_off, b_b = P.in1_off;");
  if (nb == 0)
    return os;
  line(os, indent, "IX rest = bi;");
  for (int32_t d = nb; d-- > 0;) {
    std::string D = std::to_string(d);
    int32_t da = batchAxisOf(s, 0, d, nb), db = batchAxisOf(s, 1, d, nb);
    std::string ea = da >= 0 ? "P.in0_ext[" + std::to_string(da) + "]" : "1LL";
    std::string eb = db >= 0 ? "P.in1_ext[" + std::to_string(db) + "]" : "1LL";
    line(os, indent, "const IX e" + D + " = max(" + ea + ", " + eb + ");");
    line(os, indent, "const IX c" + D + " = rest % e" + D + "; rest /= e" + D + ";");
    if (da >= 0)
      line(os, indent, "if (" + ea + " != 1) a_b += c" + D + " * P.in0_s[" +
                           std::to_string(da) + "];");
    if (db >= 0)
      line(os, indent, "if (" + eb + " != 1) b_b += c" + D + " * P.in1_s[" +
                           std::to_string(db) + "];");
    if (coords)
      line(os, indent, "const IX bc" + D + " = c" + D + ";");
  }
  return os;
}

/// The store of element (r, j) of batch bi of the product from `total`,
/// the accumulated sum, as one statement.
std::string storeResult(const KernelShape &s, DType acc) {
  return "P.out[P.out_off + (bi * M + r) * N + j] = " +
         castExpr(acc, s.outDtype, "cumo_ops::wmul(alpha, total)") + ";";
}

/// The register an epilogue load read before the wait is held in.
std::string earlyLoadName(uint32_t load) { return "early_ld" + std::to_string(load); }

/// Elements of gamma and beta a thread of a prologue reads before the
/// wait (KernelShape::gemvEarlyAffine): its first four of the run [lo,
/// hi), a block of 256 threads covering a row of 1024 (a decode's rows are
/// 768).
constexpr int kEarlyAffine = 4;

/// The names an epilogue's element expressions read (emitElementBody) for
/// element (`r`, `j`) of batch `bi`, at `indent`: its flat index `idx` and
/// its domain coordinates, the result's shape (batch..., M, N), (N) for a
/// vector times a matrix, (M) for a matrix times a vector, () for two
/// vectors; the batch coordinates are emitBatchDecode's `bc<d>`.
void emitEpilogueCoords(const KernelShape &s, const std::string &bi, const std::string &r,
                        const std::string &j, int indent, std::string &os) {
  int32_t nb = batchRank(s);
  line(os, indent, "const I idx = (I)((" + bi + " * M + " + r + ") * N + " + j + ");");
  int32_t axis = 0;
  for (; axis < nb; ++axis)
    line(os, indent, "const I c0_" + std::to_string(axis) + " = (I)bc" + std::to_string(axis) + ";");
  if (s.operandRanks[0] >= 2)
    line(os, indent, "const I c0_" + std::to_string(axis++) + " = (I)" + r + ";");
  if (s.operandRanks[1] >= 2)
    line(os, indent, "const I c0_" + std::to_string(axis++) + " = (I)" + j + ";");
  line(os, indent, "(void)idx;");
}

/// The statements that write element (r, j) of batch bi from `total` at
/// `indent`: the product's store, or with an epilogue the product rounded
/// to its dtype as that store would round it, and the consumers computed
/// from it at the batch coordinates `bc<d>` (emitBatchDecode's).
std::string emitWrite(const KernelShape &s, DType acc, int indent) {
  std::string os;
  if (!s.hasEpilogue()) {
    line(os, indent, storeResult(s, acc));
    return os;
  }
  emitEpilogueCoords(s, "bi", "r", "j", indent, os);
  line(os, indent, "const " + cType(s.outDtype).str() + " " + kResultName + " = " +
                       castExpr(acc, s.outDtype, "cumo_ops::wmul(alpha, total)") + ";");
  emitElementBody(s, os, indent, [&](uint32_t load) -> std::string {
    return s.gemvEarlyEpilogueLoads >> load & 1u ? earlyLoadName(load) : "";
  });
  return os;
}

/// Before the wait: the epilogue's loads that gemvEarlyOperands chose, at
/// the one element (0, j) this thread's epilogue computes (j its column of
/// the tile; r = 0 and no batch).
void emitEarlyEpilogueLoads(const KernelShape &s, std::string &os) {
  if (!s.gemvEarlyEpilogueLoads)
    return;
  os += "  // The epilogue's loads of memory no kernel of the plan writes, read\n"
        "  // before the wait for the element this thread's epilogue computes.\n";
  std::string fill;
  for (uint32_t id = 0; id < s.values.size(); ++id) {
    const Value &v = s.values[id];
    if (v.kind != Value::Kind::Load || !(s.gemvEarlyEpilogueLoads >> v.ref & 1u))
      continue;
    os += "  " + cType(v.dtype).str() + " " + earlyLoadName(v.ref) + "{};\n";
    emitValue(s, id, fill, 6);
    line(fill, 6, earlyLoadName(v.ref) + " = " + valueName(id) + ";");
  }
  os += "  {\n";
  os += "    const IX early_j = tile * width + (IX)threadIdx.x;\n";
  os += "    if (threadIdx.x < width && early_j < N) {\n";
  emitEpilogueCoords(s, "0", "0", "early_j", 6, os);
  os += fill;
  os += "    }\n  }\n";
}

/// The matrix's axis along k: its first, or for a batch of matrices the
/// second to last.
size_t kAxisOf(size_t rank) { return rank >= 2 ? rank - 2 : 0; }

/// Element j of the prologue's operand `i` (2: gamma, 3: beta) in its
/// accumulator class.
std::string prologueParam(const KernelShape &s, int i) {
  std::string p = "P.in" + std::to_string(i);
  return castExpr(s.outDtype, s.rowAccumulator, p + "[" + p + "_off + j * " + p + "_s[0]]");
}

/// The prologue's first step: the M rows of operand 0 (of class `t`, from
/// offset `aBase`) copied into shared memory xs as they are. A row that is
/// unit-strided, a whole number of 16-byte vectors long and starts on a
/// 16-byte boundary goes as vectors of `v` elements (one load a thread for
/// a 768-element BFloat row); any other four elements a thread a trip,
/// each trip's loads issued before its stores. The loop of one element a
/// thread a trip it replaces left each trip's load waiting for the store
/// before it: on an H100 with early starts qkv, fc and softmax times V
/// took 0.3-0.7 us longer each (bench/kernel_times), a GPT-2 decode 1.1%
/// (BFloat) to 1.4% (SFloat) longer a token (README, 2026-12-07).
void emitRowStaging(const std::string &t, int32_t v, const std::string &aBase,
                    std::string &os) {
  std::string V = std::to_string(v), vt = "cumo_vec<" + t + ", " + V + ">";
  os += "  for (IX r = 0; r < M; ++r) {\n";
  os += "    const " + t + " *const row = P.in0 + " + aBase + " + r * a_r;\n";
  os += "    if (a_c == 1 && K % " + V + " == 0 && ((unsigned long long)row & 15) == 0) {\n";
  os += "      for (IX q = threadIdx.x; q * " + V + " < K; q += blockDim.x)\n";
  os += "        *reinterpret_cast<" + vt + " *>(xs + r * K + q * " + V +
        ") = *reinterpret_cast<const " + vt + " *>(row + q * " + V + ");\n";
  os += "    } else {\n";
  os += "      for (IX j = threadIdx.x; j < K; j += 4 * (IX)blockDim.x) {\n";
  os += "        " + t + " x[4];\n";
  os += "        #pragma unroll\n";
  os += "        for (int q = 0; q < 4; ++q)\n";
  os += "          if (j + (IX)q * blockDim.x < K) x[q] = row[(j + (IX)q * blockDim.x) * a_c];\n";
  os += "        #pragma unroll\n";
  os += "        for (int q = 0; q < 4; ++q)\n";
  os += "          if (j + (IX)q * blockDim.x < K) xs[r * K + j + (IX)q * blockDim.x] = x[q];\n";
  os += "      }\n";
  os += "    }\n";
  os += "  }\n";
}

/// The prologue (fusion/prologue.h): row op s.prologueOp over each of the
/// M rows of operand 0 of this block's product (P.in0 from offset `aBase`:
/// product `bi` of the batch), its results rounded to the product's class
/// into shared memory `xs` (M x K) at the positions [lo, hi) of each row
/// this block reads; where `writer` holds, also into the row op's store
/// (P.pro_out, when the plan keeps one; product bi's rows from row bi * M).
/// In steps, each ending with the block's barrier:
///   1. every thread copies part of the rows into xs as they are;
///   2. a warp a row folds the statistics from xs in the order the row op's
///      own kernel folds them (rowProgram's passes: the same lanes, groups
///      and tree), so the numbers are its numbers bit for bit, and leaves
///      them in shared memory (pro_stats);
///   3. every thread computes part of the elements from them, in place.
/// With s.prologueTerms (softmax), step 2 stops before the last pass: every
/// thread computes a share of that pass's terms (the exponentials) into
/// shared memory (pro_terms), a warp a row folds those in the row kernel's
/// order, and the elements are computed from them (elementOfTerm), where
/// one warp computed every exponential of a row twice.
/// Holding the row in registers, as the row kernel does, cost the product
/// its occupancy (125 registers a thread against 80 without the prologue:
/// two blocks an SM instead of three) and left seven warps of eight idle
/// for the elements.
void emitPrologue(const KernelShape &s, const std::string &aBase, const std::string &bi,
                  const std::string &lo, const std::string &hi, const std::string &writer,
                  std::string &os) {
  std::string t = cType(s.outDtype).str(), a = cType(s.rowAccumulator).str();
  RowProgram program =
      rowProgram(s, s.prologueOp, prologueParam(s, 2), prologueParam(s, 3));
  bool terms = s.prologueTerms;
  // Every statistic's slot in pro_stats, in pass order.
  llvm::SmallVector<const char *, 4> stats;
  for (const RowPass &pass : program.passes)
    stats.append(pass.stats.begin(), pass.stats.end());
  auto slot = [&](const char *name) {
    return std::to_string(llvm::find(stats, llvm::StringRef(name)) - stats.begin());
  };
  // The folds read the row from shared memory (load) where the row kernel
  // reads its register cache: the same elements in the same order.
  KernelShape fromShared = s;
  fromShared.rowCachedGroups = 0;
  fromShared.rowWarp = true;
  // Passes [first, last) a warp a row, reading load(j) = `from`, leaving
  // their statistics in pro_stats; the earlier passes' read back first.
  auto warpPasses = [&](size_t first, size_t last, const std::string &from) {
    os += "  for (IX r = threadIdx.x >> 5; r < M; r += blockDim.x >> 5) {\n";
    for (size_t p = 0; p < first; ++p)
      for (const char *name : program.passes[p].stats)
        os += "    const " + a + " " + name + " = pro_stats[r][" + slot(name) + "];\n";
    os += "    auto load = [&](IX j) -> " + a + " { return " + from + "; };\n";
    for (size_t p = first; p < last; ++p)
      emitRowPass(fromShared, program.passes[p], os);
    os += "    if (lane == 0) {\n";
    for (size_t p = first; p < last; ++p)
      for (const char *name : program.passes[p].stats)
        os += "      pro_stats[r][" + slot(name) + "] = " + name + ";\n";
    os += "    }\n  }\n";
    os += "  __syncthreads();\n";
  };
  auto readStats = [&](size_t passes, int indent) {
    for (size_t p = 0; p < passes; ++p)
      for (const char *name : program.passes[p].stats)
        line(os, indent, "const " + a + " " + name + " = pro_stats[r][" + slot(name) + "];");
  };
  std::string fromRows = castExpr(s.outDtype, s.rowAccumulator, "xs[r * K + j]");

  os += "  // The prologue: the row op's rows, as its own kernel rounds them.\n";
  os += "  extern __shared__ __align__(16) unsigned char cumo_smem[];\n";
  os += "  " + t + " *const xs = reinterpret_cast<" + t + " *>(cumo_smem);\n";
  os += "  __shared__ " + a + " pro_stats[MR][" + std::to_string(std::max<size_t>(stats.size(), 1)) +
        "];\n";
  os += "  {\n";
  emitRowStaging(t, gemvVector(s.outDtype), aBase, os);
  os += "  __syncthreads();\n";
  os += "  constexpr int G = " + std::to_string(s.rowGroup) + ";\n";
  os += "  const IX n = K, L = 32;\n";
  os += "  const " + a + " eps = (" + a + ")P.pro_eps;\n";
  os += "  (void)eps;\n";
  size_t passes = program.passes.size();
  if (!terms) {
    warpPasses(0, passes, fromRows);
  } else {
    // As gemvLaunch lays the shared memory out: the rows, then the terms
    // from the next 16-byte boundary.
    os += "  " + a + " *const pro_terms = reinterpret_cast<" + a +
          " *>(cumo_smem + ((long long)M * K * sizeof(" + t + ") + 15) / 16 * 16);\n";
    warpPasses(0, passes - 1, fromRows);
    os += "  for (IX r = 0; r < M; ++r) {\n";
    readStats(passes - 1, 4);
    os += "    for (IX j = threadIdx.x; j < K; j += blockDim.x) {\n";
    os += "      const " + a + " x = " + fromRows + ";\n";
    os += "      pro_terms[r * K + j] = " + program.passes.back().term + ";\n";
    os += "    }\n  }\n";
    os += "  __syncthreads();\n";
    RowPass folded = program.passes.back();
    folded.term = "x";
    program.passes.back() = folded;
    warpPasses(passes - 1, passes, "pro_terms[r * K + j]");
  }
  os += "  for (IX r = 0; r < M; ++r) {\n";
  readStats(passes, 4);
  os += program.perRow;
  // Element j of row r from `element`, into xs (and the row op's store).
  auto body = [&](const std::string &element) {
    std::string b;
    if (terms)
      b += "      const " + a + " t = pro_terms[r * K + j];\n";
    else
      b += "      const " + a + " x = " + fromRows + ";\n";
    b += "      const " + t + " y = " + castExpr(s.rowAccumulator, s.outDtype, element) + ";\n";
    b += "      xs[r * K + j] = y;\n";
    if (s.prologueStored)
      b += "      if (P.pro_out && " + writer + ") P.pro_out[P.pro_out_off + (" + bi +
           " * M + r) * K + j] = y;\n";
    return b;
  };
  std::string first = lo + " + threadIdx.x";
  if (s.gemvEarlyAffine) {
    // The thread's first elements with the gamma and beta it read before
    // the wait (emitEarlyAffineLoads), then the rest.
    RowProgram early = rowProgram(s, s.prologueOp, "early_g[q]", "early_b[q]");
    os += "    #pragma unroll\n";
    os += "    for (int q = 0; q < " + std::to_string(kEarlyAffine) + "; ++q) {\n";
    os += "      const IX j = " + first + " + (IX)q * blockDim.x;\n";
    os += "      if (j >= " + hi + ") break;\n";
    os += body(early.element);
    os += "    }\n";
    first += " + (IX)" + std::to_string(kEarlyAffine) + " * blockDim.x";
  }
  os += "    for (IX j = " + first + "; j < " + hi + "; j += blockDim.x) {\n";
  os += body(terms ? program.elementOfTerm : program.element);
  os += "    }\n  }\n  }\n";
  os += "  __syncthreads();\n";
}

/// Before the wait: the prologue's gamma and beta (gemvEarlyAffine) at
/// this thread's first kEarlyAffine elements of the run [lo, hi), as the
/// prologue's last step reads them, in its accumulator class.
void emitEarlyAffineLoads(const KernelShape &s, const std::string &lo, const std::string &hi,
                          std::string &os) {
  if (!s.gemvEarlyAffine)
    return;
  std::string a = cType(s.rowAccumulator).str(), n = std::to_string(kEarlyAffine);
  bool beta = s.prologueOp == OpKind::LayerNorm;
  os += "  // The prologue's gamma" + std::string(beta ? " and beta" : "") +
        ", memory no kernel of the plan writes,\n  // read before the wait.\n";
  os += "  " + a + " early_g[" + n + "]" + (beta ? ", early_b[" + n + "]" : "") + ";\n";
  os += "  #pragma unroll\n  for (int q = 0; q < " + n + "; ++q) {\n";
  os += "    const IX j = " + lo + " + threadIdx.x + (IX)q * blockDim.x;\n";
  os += "    early_g[q] = j < " + hi + " ? " + prologueParam(s, 2) + " : (" + a + ")0;\n";
  if (beta)
    os += "    early_b[q] = j < " + hi + " ? " + prologueParam(s, 3) + " : (" + a + ")0;\n";
  os += "  }\n";
}
} // namespace

int32_t gemvVector(DType matrix) {
  return int32_t(std::max<size_t>(16 / sizeOf(matrix), 1));
}

bool gemvColumnsAligned(const Kernel &k) {
  const Load &b = k.operands[1];
  int64_t v = gemvVector(b.dtype);
  size_t kAxis = kAxisOf(b.index.strides.size());
  if (b.index.offset % v != 0)
    return false;
  for (size_t d = 0; d < b.index.strides.size(); ++d)
    if (d != kAxis && b.index.strides[d] % v != 0 && k.operandShapes[1][d] > 1)
      return false;
  return true;
}

namespace {
/// The small operand's rows rounded up to a power of two (the kernel's MR).
int32_t gemvRowsOf(const Kernel &k) {
  const Shape &a = k.operandShapes[0];
  int64_t m = a.size() >= 2 ? a[a.size() - 2] : 1;
  int32_t rows = 1;
  while (rows < m)
    rows *= 2;
  return rows;
}
bool alongK(const Kernel &k) {
  const Load &b = k.operands[1];
  return b.index.strides[kAxisOf(b.index.strides.size())] == 1;
}
} // namespace

int32_t gemvColumnVector(const Kernel &k) {
  const Load &b = k.operands[1];
  size_t rank = b.index.strides.size();
  if (alongK(k) || rank < 2 || b.index.strides[rank - 1] != 1)
    return 1;
  int32_t cv = gemvVector(b.dtype);
  while (cv > 1 && gemvRowsOf(k) * cv > 32)
    cv /= 2;
  if (b.index.offset % cv != 0)
    return 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    if (b.index.strides[d] % cv != 0 && k.operandShapes[1][d] > 1)
      return 1;
  return cv;
}

namespace {
struct GemvExtents {
  int64_t batch, m, k, n;
};
GemvExtents gemvExtents(const Kernel &k) {
  const Shape &a = k.operandShapes[0], &b = k.operandShapes[1];
  GemvExtents e{1, a.size() >= 2 ? a[a.size() - 2] : 1, a.back(), b.size() >= 2 ? b.back() : 1};
  if (a.size() >= 2 && b.size() >= 2) {
    // The batch axes broadcast, aligned at their ends.
    size_t na = a.size() - 2, nb = b.size() - 2;
    // An extent of one takes the other's, so an empty axis broadcast
    // with one is empty (not max(0, 1): that launched a product of an
    // empty batch, whose kernel read its operand's null buffer).
    for (size_t d = 0; d < std::max(na, nb); ++d) {
      int64_t ea = d < na ? a[na - 1 - d] : 1, eb = d < nb ? b[nb - 1 - d] : 1;
      e.batch *= ea == 1 ? eb : ea;
    }
  }
  return e;
}
/// Whether every element index of small product `k` stays within 2^30 in
/// magnitude (room for the sums that step past an end): each operand's
/// offset plus its strides over its extents, the result's elements and
/// the prologue's rows (the batch's products times M times K). The split
/// partials' indices (up to 1024 splits of each) are 64-bit regardless.
bool gemvIndicesFit(const Kernel &k) {
  for (size_t o = 0; o < 2; ++o)
    if (indexMagnitude(k.operands[o].index, k.operandShapes[o]) > kNarrowIndexLimit)
      return false;
  GemvExtents x = gemvExtents(k);
  return double(x.batch) * double(x.m) * double(std::max(x.n, x.k)) <= kNarrowIndexLimit;
}
} // namespace

namespace {
/// Which of the epilogue's loads and the prologue's gamma and beta a thread
/// reads before the wait for the kernels before, beside the matrix's first
/// vectors (KernelShape::gemvEarlyEpilogueLoads, gemvEarlyAffine): where
/// the matrix is read early (so the wait comes after such loads) in the
/// thread-per-column layout, and the memory is no kernel's of the plan.
/// An epilogue load is read so in a product of one row and no batch (a
/// decode step's), where each thread computes the epilogue of one element,
/// (0, j), whose position it knows from the start, and only where it is
/// not inside a slice box. On a lent H100 (2026-12-06 21:08 UTC, `bench/
/// kernel_times --early-start`, the kernels before this as variants): qkv
/// 7.46 -> 6.84 us in SFloat and 6.70 -> 6.22 in BFloat, fc 8.41 -> 7.78
/// and 7.78 -> 7.57; the GPT-2 decode 4.9% faster a token in SFloat and
/// 4.7% in BFloat (both builds in the same call).
void gemvEarlyOperands(const Kernel &k, KernelShape &s) {
  if (!s.gemvEarlyLoads || s.gemvAlongK)
    return;
  if (s.hasEpilogue() && s.gemvRows == 1 && batchRank(s) == 0)
    for (const Value &v : s.values)
      if (v.kind == Value::Kind::Load && v.basis == 0 && v.ref < 32 &&
          (k.loadsUnwritten >> v.ref & 1u))
        s.gemvEarlyEpilogueLoads |= 1u << v.ref;
  // Gamma is operand 2, beta operand 3 (fusion/prologue.h).
  uint32_t affine = s.prologueOp == OpKind::LayerNorm ? 0xcu
                    : s.prologueOp == OpKind::RmsNorm ? 0x4u
                                                      : 0u;
  s.gemvEarlyAffine = affine && (k.operandsUnwritten & affine) == affine;
}
} // namespace

void analyzeGemv(const Kernel &k, KernelShape &s) {
  const Shape &a = k.operandShapes[0];
  s.gemvRows = gemvRowsOf(k);
  s.gemvNarrow = gemvIndicesFit(k);
  s.gemvAlongK = alongK(k);
  s.gemvColumns = gemvColumnVector(k);
  // Early loads where the matrix is read in vectors: the thread-per-column
  // layout's, and the along-k layout's of an unbatched product (its first
  // column's address needs no batch decode).
  bool vectors = s.gemvAlongK ? batchRank(s) == 0 : s.gemvColumns > 1;
  s.gemvEarlyLoads = vectors && (k.operandsUnwritten & 2u) != 0;
  // Along k the early vectors live across the wait and the rows' staging
  // beside the MR x CG sums: with 4 to 16 rows and no prologue ptxas
  // (sm_90, 80 registers) spilled 48-724 bytes a thread, and none with
  // the loads after the wait; with a prologue (the rows in shared memory)
  // none up to 4 rows, 136 bytes at 8 (BFloat, two columns of 16 lanes at
  // once). So only there.
  if (s.gemvAlongK && s.gemvRows > (k.hasPrologue() ? kAlongKEarlyRowsWithPrologue
                                                     : kAlongKEarlyRows))
    s.gemvEarlyLoads = false;
  if (k.hasPrologue()) {
    // The row op's rows laid out as its own kernel lays them (fitsPrologue
    // made sure that is a warp a row, held in registers).
    DType t = k.opaqueDtype;
    RowLayout l = rowLayout(a.back(), t, rowAccumulator(t));
    s.prologueOp = k.prologue.op;
    s.prologueStored = k.prologue.stored;
    s.rowAccumulator = rowAccumulator(t);
    s.rowWarp = true;
    s.rowGroup = int32_t(l.group);
    s.rowCachedGroups = int32_t(l.cachedGroups);
    s.prologueTerms = gemvPrologueTerms(k);
  }
  gemvEarlyOperands(k, s);
}

bool gemvPrologueTerms(const Kernel &k) {
  if (!k.hasPrologue() || !rowResultOfLastTerm(k.prologue.op))
    return false;
  DType t = k.opaqueDtype, acc = rowAccumulator(t);
  GemvExtents e = gemvExtents(k);
  int64_t elements = e.m * e.k;
  return elements * int64_t(sizeOf(t) + sizeOf(acc)) + 16 <= kPrologueBytes;
}

namespace {
/// The along-k layout's columns a lane group reads at once, at most (the
/// launch's P.cols may be fewer): four for one or two rows of the small
/// operand, two for up to eight, one for more (their sums, columns x rows,
/// stay in registers), and one for a batch, whose columns may lie in
/// different products.
int32_t alongKColumnsAtOnce(int32_t rows, bool batched) {
  if (batched)
    return 1;
  return rows <= 2 ? 4 : rows <= 8 ? 2 : 1;
}
/// The along-k layout's lanes a column, at most (the launch's P.lanes is
/// fewer where k is short): 16 for five to eight rows of an unbatched
/// product, two columns a warp, else 32.
///
/// Why: the batch-8 LM head (8 x 768 x 50257) with one column of 32 lanes
/// at a time took 119-148 us; with two columns at once of 16 lanes each,
/// 73-82 (bench/kernel_times --variants, cg2_lanes16, H100, 2026-12-05).
int32_t alongKLanes(int32_t rows, bool batched) {
  return !batched && rows > 4 && rows <= 8 ? 16 : 32;
}
/// The along-k layout widens the rows of the small operand once into
/// shared memory, in the accumulator, where there are two or more and
/// they fit this (an unbatched product without a prologue; decided at run
/// time from M and K, the launch giving the same answer): each lane then
/// reads its elements there for every column it folds, where it read and
/// widened them from global memory for every column. A single row is read
/// from global memory (L1 keeps it): staged, the BFloat LM head took 30.9
/// us, not 29.8 (kernel_times --variants x_global, H100, 2026-12-05).
constexpr int64_t kAlongKStagedBytes = 24 * 1024;

/// Whether small product `k` is a batch of products (batchRank's test, on
/// the kernel's operand shapes).
bool isBatchedProduct(const Kernel &k) {
  const Shape &a = k.operandShapes[0], &b = k.operandShapes[1];
  return a.size() >= 2 && b.size() >= 2 && std::max(a.size(), b.size()) > 2;
}

bool alongKStaged(const Kernel &k, int64_t m, int64_t kk) {
  return !k.hasPrologue() && !isBatchedProduct(k) && m > 1 &&
         m * kk * int64_t(sizeOf(matmulAccumulator(k.opaqueDtype))) <= kAlongKStagedBytes;
}

/// The along-k layout (the matrix unit-strided along k: a weight stored
/// (n, k) and used transposed, or an attention's keys). `lanes` lanes a
/// column (P.lanes, the launch's: fewer where k is short, as an attention
/// head's 64, so that none idles), 32 / lanes lane groups a warp, each
/// taking P.cols consecutive columns at once (up to CG,
/// alongKColumnsAtOnce): a lane reads the 16-byte vectors l, l + lanes,
/// ... of each of its columns (P.bvec: every column starts on one; then
/// the last k % V elements one at a time), the loads of all the columns in
/// flight together and each element of the small operand read once for
/// all of them. Each column's sums fold in the same order whatever P.cols
/// is (a lane's vectors in order, each's elements in order, then the
/// column's lanes by a butterfly), so the launch may choose it from the
/// extents. The grid is one wave (kGemvMinBlocksPerSm blocks an SM)
/// whose warps stride over the columns.
///
/// Why: with one column a lane group, the small operand read from global
/// memory and widened at every use, and 4 waves of blocks, the LM head's
/// 77 MB BFloat weight took 42.5 us (1975 GB/s) against 50.2 us for the
/// SFloat one's 154 MB (bench/kernel_times, H200, 2026-12-05): the time
/// went to each warp's chain of one column's loads, folds and butterfly,
/// not to the memory. bench/probes/gemv_lm_head.cu times the candidates.
/// On an H100 (2026-12-05) this layout read the BFloat LM head in 30.9
/// us (kernel_times) against 28.0 for the probe's hand-written copy of it;
/// a grid covering every column once with two columns a lane group, the
/// probe's best there (26.5), took 36.5 here, and 56.9 with the final
/// layer_norm as prologue, which every block computes, so the grid stays
/// one wave. Reading the operands from a parameter block in memory, as
/// this kernel does, cost the probe only 0.4 us; kernel_times --variants
/// with bench/probes/lm_head_variants.rb times the other differences.
void emitAlongK(const KernelShape &s, DType acc, bool prologue, std::string &out) {
  int32_t nb = batchRank(s);
  std::string a = cType(acc).str();
  auto cast = [&](size_t operand, const std::string &e) { return widenOperand(s, operand, acc, e); };
  int32_t v = gemvVector(s.operandDtypes[1]);
  int32_t cg = alongKColumnsAtOnce(s.gemvRows, nb > 0);
  int32_t fullLanes = alongKLanes(s.gemvRows, nb > 0);
  // The body, written once for lanes and cols as the generic lambda's
  // arguments give them (see the end).
  std::string os;
  // Early loads: kEarlyVectors vectors in all over the first columns, of
  // at most two of them (ptxas, sm_90: four BFloat vectors held across the
  // wait spilled 56 bytes a thread at 80 registers).
  int32_t eg = std::min(cg, 2), epc = std::max(1, kEarlyVectors / cg);
  std::string V = std::to_string(v), CG = std::to_string(cg);
  std::string vt = "cumo_vec<" + cType(s.operandDtypes[1]).str() + ", " + V + ">";
  os += "  constexpr int LANES = decltype(lanes_c)::value, COLS = decltype(cols_c)::value;\n";
  os += "  const IX lanes = LANES ? LANES : P.lanes, per_warp = 32 / lanes;\n";
  os += "  const IX cols = COLS ? COLS : P.cols;\n";
  os += "  const IX lane_col = lane / lanes, lane_k = lane & (lanes - 1);\n";
  os += "  const IX group = per_warp * cols;\n";
  // The warp's first column; the lane group's is lane_col * cols past it.
  os += "  const IX first_base = ((IX)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * group;\n";
  os += "  const IX kv = P.bvec ? K / " + V + " * " + V + " : 0;\n";
  // A column past the last computes the last one again and stores nothing
  // (so that every lane takes the butterfly); a lane group's g-th column
  // past P.cols reads its first one's again (L1 hits, no traffic), so
  // that every load and fold is unconditional (conditional assignments to
  // the vectors sent them to local memory).
  os += "  auto column = [&](IX base, int g) { return min(base + lane_col * cols + (g < cols ? g : 0), B * N - 1); };\n";
  if (s.gemvEarlyLoads) {
    // Unbatched (analyzeGemv): the columns' addresses need no decode.
    os += "  constexpr int EG = " + std::to_string(eg) + ", EPC = " + std::to_string(epc) + ";\n";
    os += "  " + vt + " early[EG][EPC];\n";
    os += "  const bool loaded_early = P.bvec != 0;\n";
    os += "  if (loaded_early)\n";
    os += "    #pragma unroll\n";
    os += "    for (int g = 0; g < EG; ++g)\n";
    os += "      #pragma unroll\n";
    os += "      for (int i = 0; i < EPC; ++i) {\n";
    os += "        const IX at = lane_k * " + V + " + (IX)i * lanes * " + V + ";\n";
    os += "        if (at < kv) early[g][i] = *reinterpret_cast<const " + vt +
          " *>(P.in1 + P.in1_off + column(first_base, g) * b_c + at);\n";
    os += "      }\n";
    line(os, 2, kWaitForPriorGrids);
  }
  // Where row r's element at k = p is read from, widened.
  std::string xAt;
  // The fold takes a lane's vector of a column in chunks of xc elements:
  // rowChunk fills xr[0..xc) with row r's elements at q + c onwards.
  int32_t xc = v;
  std::string rowChunk;
  if (prologue) {
    if (nb > 0)
      throw Error(ErrorKind::Internal,
                  "[cuda codegen] a prologue on a batch of products read along k");
    // Every block reads whole rows: it normalizes all of them, block 0
    // storing them (fitsPrologue leaves this layout unbatched).
    emitPrologue(s, "P.in0_off", "0LL", "0LL", "K", "blockIdx.x == 0", os);
    xAt = cast(0, "xs[r * K + p]");
    rowChunk = "          #pragma unroll\n"
               "          for (int e = 0; e < " + V + "; ++e) xr[e] = " +
               cast(0, "xs[r * K + q + e]") + ";\n";
    // The row's matching vector read whole where rows start on one (the
    // lanes' reads of an element each, 16 bytes apart, would meet in the
    // same banks: 8-way for a half class).
    if (sizeOf(s.outDtype) == sizeOf(s.operandDtypes[1])) {
      std::string xt = "cumo_vec<" + cType(s.outDtype).str() + ", " + V + ">";
      os += "  const bool rows_whole = K % " + V + " == 0;\n";
      rowChunk = "          if (rows_whole) {\n"
                 "            const " + xt + " xv = *reinterpret_cast<const " + xt +
                 " *>(xs + r * K + q);\n"
                 "            #pragma unroll\n"
                 "            for (int e = 0; e < " + V + "; ++e) xr[e] = " + cast(0, "xv.e[e]") +
                 ";\n"
                 "          } else {\n" + rowChunk + "          }\n";
    }
  } else {
    // In chunks of 16 bytes of the accumulator (a vector of shared memory),
    // which keeps a lane's widened elements to 4 registers of float.
    int32_t xv = int32_t(std::max<size_t>(16 / sizeOf(acc), 1));
    xc = v % xv == 0 ? xv : 1;
    std::string XC = std::to_string(xc);
    std::string global = "P.in0[a_b + r * a_r + p * a_c]";
    std::string fromGlobal = "          #pragma unroll\n"
                             "          for (int e = 0; e < " + XC + "; ++e) {\n"
                             "            const IX p = q + c + e;\n"
                             "            xr[e] = " + cast(0, global) + ";\n"
                             "          }\n";
    xAt = cast(0, global);
    rowChunk = fromGlobal;
    if (nb == 0) {
      // Widened once into shared memory (alongKStaged), then read there in
      // 16-byte vectors where every row starts on one.
      os += "  extern __shared__ __align__(16) unsigned char cumo_smem[];\n";
      os += "  " + a + " *const xf = reinterpret_cast<" + a + " *>(cumo_smem);\n";
      os += "  const bool staged = M > 1 && (long long)M * K * " + std::to_string(sizeOf(acc)) +
            " <= " + std::to_string(kAlongKStagedBytes) + "LL;\n";
      os += "  if (staged) {\n";
      os += "    const IX a_b = P.in0_off;\n";
      os += "    for (IX t = threadIdx.x; t < M * K; t += blockDim.x) {\n";
      os += "      const IX r = t / K, p = t % K;\n";
      os += "      xf[t] = " + cast(0, global) + ";\n";
      os += "    }\n";
      os += "    __syncthreads();\n";
      os += "  }\n";
      os += "  const bool xf_whole = K % " + XC + " == 0;\n";
      xAt = "(staged ? xf[r * K + p] : " + cast(0, global) + ")";
      std::string xvt = "cumo_vec<" + a + ", " + XC + ">";
      std::string fromShared =
          "          if (xf_whole) {\n"
          "            const " + xvt + " f = *reinterpret_cast<const " + xvt +
          " *>(xf + r * K + q + c);\n"
          "            #pragma unroll\n"
          "            for (int e = 0; e < " + XC + "; ++e) xr[e] = f.e[e];\n"
          "          } else {\n"
          "            #pragma unroll\n"
          "            for (int e = 0; e < " + XC + "; ++e) xr[e] = xf[r * K + q + c + e];\n"
          "          }\n";
      rowChunk = "          if (staged) {\n" + fromShared + "          } else {\n" + fromGlobal +
                 "          }\n";
    }
  }
  // One vector w[g] of each column at k = q folded into every row's sums,
  // a chunk of the rows' elements at a time (in order: the same sums).
  std::string XC = std::to_string(xc);
  std::string fold = "      #pragma unroll\n"
                     "      for (int r = 0; r < MR; ++r) {\n"
                     "        if (r >= M) break;\n"
                     "        #pragma unroll\n"
                     "        for (int c = 0; c < " + V + "; c += " + XC + ") {\n"
                     "          " + a + " xr[" + XC + "];\n" + rowChunk +
                     "          #pragma unroll\n"
                     "          for (int e = 0; e < " + XC + "; ++e)\n"
                     "            #pragma unroll\n"
                     "            for (int g = 0; g < CG; ++g)\n"
                     "              acc[g][r] = cumo_ops::wadd(acc[g][r], cumo_ops::wmul(xr[e], " +
                     cast(1, "w[g].e[c + e]") + "));\n"
                     "        }\n"
                     "      }\n";
  os += "  const IX col_step = (IX)gridDim.x * (blockDim.x >> 5) * group;\n";
  os += "  for (IX base = first_base; base < B * N; base += col_step) {\n";
  // The first column's product of the batch (the only one: a batch takes
  // one column at a time) and its place.
  os += "    const IX col = column(base, 0);\n";
  os += "    const IX bi = col / N, j0 = col % N;\n";
  os += emitBatchDecode(s, 4, s.hasEpilogue());
  os += "    IX bo[CG];\n";
  os += "    #pragma unroll\n";
  os += "    for (int g = 0; g < CG; ++g) bo[g] = b_b + (g == 0 ? j0 : column(base, g)) * b_c;\n";
  os += "    " + a + " acc[CG][MR];\n";
  os += "    #pragma unroll\n    for (int g = 0; g < CG; ++g)\n";
  os += "      #pragma unroll\n      for (int r = 0; r < MR; ++r) acc[g][r] = (" + a + ")0;\n";
  os += "    IX q = lane_k * " + V + ";\n";
  if (s.gemvEarlyLoads) {
    os += "    if (loaded_early && base == first_base)\n";
    os += "      #pragma unroll\n";
    os += "      for (int i = 0; i < EPC && q < kv; ++i, q += lanes * " + V + ") {\n";
    os += "      " + vt + " w[CG];\n";
    os += "      #pragma unroll\n";
    os += "      for (int g = 0; g < CG; ++g)\n";
    os += "        w[g] = g < EG ? early[g < EG ? g : 0][i] : *reinterpret_cast<const " + vt +
          " *>(P.in1 + bo[g] + q);\n";
    os += fold;
    os += "      }\n";
  }
  // Two steps of CG columns in flight (one column: four, as before the
  // groups); ptxas, sm_90, 80 registers: no spill but 16 bytes in the LM
  // head with its layer_norm prologue.
  os += "    #pragma unroll " + std::to_string(cg == 1 ? 4 : 8 / cg) + "\n";
  os += "    for (; q < kv; q += lanes * " + V + ") {\n";
  os += "      " + vt + " w[CG];\n";
  os += "      #pragma unroll\n";
  os += "      for (int g = 0; g < CG; ++g)\n";
  os += "        w[g] = *reinterpret_cast<const " + vt + " *>(P.in1 + bo[g] + q);\n";
  os += fold;
  os += "    }\n";
  // The last k % V elements (or every one, unaligned), one at a time.
  os += "    for (IX p = kv + lane_k; p < K; p += lanes) {\n";
  os += "      " + a + " bv[CG];\n";
  os += "      #pragma unroll\n";
  os += "      for (int g = 0; g < CG; ++g) bv[g] = " + cast(1, "P.in1[bo[g] + p]") +
        ";\n"; // b_r is 1
  os += "      #pragma unroll\n";
  os += "      for (int r = 0; r < MR; ++r) {\n";
  os += "        if (r >= M) break;\n";
  os += "        const " + a + " xv = " + xAt + ";\n";
  os += "        #pragma unroll\n";
  os += "        for (int g = 0; g < CG; ++g)\n";
  os += "          acc[g][r] = cumo_ops::wadd(acc[g][r], cumo_ops::wmul(xv, bv[g]));\n";
  os += "      }\n";
  os += "    }\n";
  // Each column's lanes by a butterfly, then its lane 0 writes it.
  os += "    #pragma unroll\n    for (int g = 0; g < CG; ++g)\n";
  os += "      #pragma unroll\n      for (int r = 0; r < MR; ++r)\n";
  os += "        for (int off = (int)lanes >> 1; off > 0; off >>= 1)\n";
  os += "          acc[g][r] = cumo_ops::wadd(acc[g][r], __shfl_xor_sync(0xffffffffu, acc[g][r], off));\n";
  os += "    #pragma unroll\n    for (int g = 0; g < CG; ++g) {\n";
  os += "      const IX cw = base + lane_col * cols + g;\n";
  os += "      if (lane_k != 0 || g >= cols || cw >= B * N) continue;\n";
  // Past the first column the product is unbatched: its column is cw.
  os += "      const IX j = g == 0 ? j0 : cw;\n";
  os += "      #pragma unroll\n      for (int r = 0; r < MR; ++r) {\n";
  os += "        if (r >= M) break;\n";
  os += "        const " + a + " total = acc[g][r];\n";
  os += emitWrite(s, acc, 8);
  os += "      }\n    }\n  }\n";
  // The launch's usual lanes and columns (k of 32 vectors or more, n of
  // every SM's block) as constants: the strides, the columns' arithmetic
  // and the butterfly then fold at compile time. The BFloat LM head took
  // 29.1 us so, against 30.9 with them read from P (kernel_times
  // --variants const_lanes, H100, 2026-12-05). Any other launch takes the
  // same body with them read from P.
  std::string FL = std::to_string(fullLanes);
  out += "  constexpr int CG = " + CG + ";\n";
  out += "  auto along_k = [&](auto lanes_c, auto cols_c) {\n";
  for (size_t at = 0; at < os.size();) {
    size_t end = os.find('\n', at);
    end = end == std::string::npos ? os.size() : end + 1;
    out += (os[at] == '\n' ? "" : "  ") + os.substr(at, end - at);
    at = end;
  }
  out += "  };\n";
  out += "  if (P.lanes == " + FL + " && P.cols == CG)\n";
  out += "    along_k(cumo_k::fixed_int<" + FL + ">(), cumo_k::fixed_int<CG>());\n";
  out += "  else\n";
  out += "    along_k(cumo_k::fixed_int<0>(), cumo_k::fixed_int<0>());\n";
  out += "}\n";
}
} // namespace

void emitGemv(const KernelShape &s, const std::string &entry, std::string &os) {
  int32_t ra = s.operandRanks[0], rb = s.operandRanks[1];
  int32_t nb = batchRank(s);
  DType acc = matmulAccumulator(s.outDtype);
  std::string a = cType(acc).str();
  auto cast = [&](size_t operand, const std::string &e) { return widenOperand(s, operand, acc, e); };
  auto ext = [](int o, int32_t axis) {
    return "P.in" + std::to_string(o) + "_ext[" + std::to_string(axis) + "]";
  };
  auto stride = [](int o, int32_t axis) {
    return "P.in" + std::to_string(o) + "_s[" + std::to_string(axis) + "]";
  };
  uint32_t block = kGemvBlock;
  // The matrix's vectors (read along k, or a thread's columns) and the
  // prologue's staged rows (emitRowStaging) are cumo_vec loads.
  if (s.gemvAlongK || s.gemvColumns > 1 || s.prologueOp != OpKind::Copy)
    os += vectorTypeDecl();
  // A grid that needs a second wave doubles the time (kGemvMinBlocksPerSm).
  emitKernelOpening(std::to_string(block) + ", " + std::to_string(kGemvMinBlocksPerSm), entry, os,
                    /*wait=*/!s.gemvEarlyLoads);
  os += std::string("  using IX = ") + (s.gemvNarrow ? "int" : "long long") + ";\n";
  os += "  constexpr int MR = " + std::to_string(s.gemvRows) + ";\n";
  os += "  const IX K = " + ext(0, ra - 1) + ";\n";
  os += "  const IX M = " + (ra >= 2 ? ext(0, ra - 2) : "1LL") + ";\n";
  os += "  const IX N = " + (rb >= 2 ? ext(1, rb - 1) : "1LL") + ";\n";
  os += "  const IX a_r = " + (ra >= 2 ? stride(0, ra - 2) : "0LL") +
        ", a_c = " + stride(0, ra - 1) + ";\n";
  os += "  const IX b_r = " + stride(1, int32_t(kAxisOf(size_t(rb)))) +
        ", b_c = " + (rb >= 2 ? stride(1, rb - 1) : "0LL") + ";\n";
  // The batch: how many products, each (M, N) of the contiguous result.
  std::string batches = "1LL";
  for (int32_t d = 0; d < nb; ++d) {
    int32_t da = batchAxisOf(s, 0, d, nb), db = batchAxisOf(s, 1, d, nb);
    batches += " * max(" + (da >= 0 ? ext(0, da) : "1LL") + ", " +
               (db >= 0 ? ext(1, db) : "1LL") + ")";
  }
  os += "  const IX B = " + batches + ";\n";
  os += "  const " + a + " alpha = (" + a + ")(P.alpha);\n";
  os += "  const IX lane = threadIdx.x & 31u;\n";
  // An epilogue's addresses are computed in 64 bits: a product's few
  // rows need no narrow path.
  if (s.hasEpilogue())
    os += "  using I = long long;\n";
  bool prologue = s.prologueOp != OpKind::Copy;
  if (s.gemvAlongK) {
    emitAlongK(s, acc, prologue, os);
    return;
  }
  // Where the fold reads row r's element at k = p (with a prologue, the
  // rows are the row op's, in shared memory).
  std::string xAt = prologue ? "xs[r * K + p]" : "P.in0[a_b + r * a_r + p * a_c]";
  // Thread per column: a block takes a tile of `lanes` * CV columns of one
  // product of the batch (CV consecutive columns a thread, read as one
  // vector where the matrix's rows allow: gemvColumnVector) and one of
  // `splits` equal runs of k (blockIdx.x = tile + tiles * (split + splits *
  // bi)). A warp's `lanes` lanes lie across the tile and its 32 / lanes
  // lane rows on as many rows of k; the block's 8 warps stride the run. A
  // decode step's weights are (k, n) with n of 768 to 3072: tiles of 32
  // lanes would be too few to keep the memory busy, so gemvTiling narrows
  // them first (down to one lane, a thread's vector of a row, the warp on
  // 32 rows) and splits k only then.
  // The lane rows of a column fold by shuffles and the warps in order
  // through shared memory, a row at a time; with several splits each block
  // leaves its partial in scratch, and the last block of a tile to arrive
  // folds them in split order, a thread an element (deterministic,
  // whichever arrives last), and rearms the tile's counter for the next
  // launch. `lanes` is the launch's (P.lanes, a power of two up to 32).
  std::string slices = std::to_string(kGemvSlices);
  std::string CV = std::to_string(s.gemvColumns), bt = cType(s.operandDtypes[1]).str();
  os += "  constexpr int CV = " + CV + ";\n";
  os += "  const IX slice = threadIdx.x >> 5;\n";
  os += "  const IX lanes = P.lanes, width = lanes * CV;\n";
  os += "  const IX lane_col = lane & (lanes - 1), lane_row = lane / lanes;\n";
  os += "  const IX k_step = " + slices + " * (32 / lanes);\n";
  os += "  __shared__ " + a + " part[" + slices + "][32 * CV];\n";
  os += "  __shared__ bool last;\n";
  os += "  const IX tiles = (N + width - 1) / width;\n";
  os += "  const IX splits = (IX)gridDim.x / (tiles * B);\n";
  os += "  const IX tile = (IX)blockIdx.x % tiles;\n";
  os += "  const IX split = (IX)blockIdx.x / tiles % splits;\n";
  os += "  const IX bi = (IX)blockIdx.x / tiles / splits;\n";
  os += "  const IX chunk = (K + splits - 1) / splits;\n";
  os += "  const IX k0 = split * chunk, k1 = min(K, k0 + chunk);\n";
  // As gemvScratchBytes lays it out: a counter per tile of each product,
  // then the partials.
  os += "  unsigned int *counters = reinterpret_cast<unsigned int *>(P.scratch);\n";
  os += "  " + a + " *partials = reinterpret_cast<" + a +
        " *>(P.scratch + (B * tiles * 4 + 15) / 16 * 16);\n";
  os += emitBatchDecode(s, 2, s.hasEpilogue());
  os += "  const IX j0 = tile * width + lane_col * CV;\n";
  os += "  const IX p0 = k0 + slice * (32 / lanes) + lane_row;\n";
  std::string vt = "cumo_vec<" + bt + ", CV>";
  // Early loads: the epilogue's and the prologue's operands that no
  // kernel of the plan writes, and the first vectors of this thread's run
  // of k; then the wait.
  emitEarlyEpilogueLoads(s, os);
  if (prologue)
    emitEarlyAffineLoads(s, "k0", "k1", os);
  if (s.gemvEarlyLoads)
    emitEarlyLoads(vt, "j0 + CV <= N", "p0 + (IX)q * k_step", "at < k1",
                   "P.in1 + b_b + j0 * b_c + at * b_r", os);
  // A block reads its run of k of its product's rows: it normalizes that,
  // the blocks of the first column tile storing it.
  if (prologue)
    emitPrologue(s, "a_b", "bi", "k0", "k1", "tile == 0", os);
  os += "  " + a + " acc[MR][CV];\n";
  os += "  #pragma unroll\n  for (int r = 0; r < MR; ++r)\n";
  os += "    #pragma unroll\n    for (int e = 0; e < CV; ++e) acc[r][e] = (" + a + ")0;\n";
  os += "  if (j0 < N) {\n";
  os += "    const IX bo = b_b + j0 * b_c;\n";
  if (s.gemvColumns > 1)
    os += "    const bool whole = j0 + CV <= N;\n";
  // One row p of the run folded into every row's sums, from `w` (CV
  // columns) or, one column a thread, from the matrix.
  std::string fold =
      "      #pragma unroll\n      for (int e = 0; e < CV; ++e) {\n"
      "        const " + a + " bv = " +
      cast(1, s.gemvColumns > 1 ? std::string("w.e[e]") : std::string("P.in1[bo + p * b_r]")) +
      ";\n"
      "        #pragma unroll\n"
      "        for (int r = 0; r < MR; ++r)\n"
      "          if (r < M)\n"
      "            acc[r][e] = cumo_ops::wadd(acc[r][e], cumo_ops::wmul(" + cast(0, xAt) +
      ", bv));\n"
      "      }\n";
  os += "    IX p = p0;\n";
  if (s.gemvEarlyLoads)
    emitEarlyFolds(vt, "loaded_early", "p", "k1", "k_step", fold, os);
  // Eight rows in flight a thread: a decode's run is 6 to 24 of them.
  os += "    #pragma unroll 8\n";
  os += "    for (; p < k1; p += k_step) {\n";
  if (s.gemvColumns > 1) {
    // The row's CV columns as one load; past the last column, a valid
    // element stands in (its sums are never written).
    os += "      " + vt + " w;\n";
    os += "      if (whole) w = *reinterpret_cast<const " + vt + " *>(P.in1 + bo + p * b_r);\n";
    os += "      else\n        #pragma unroll\n        for (int e = 0; e < CV; ++e)\n";
    os += "          w.e[e] = P.in1[bo + p * b_r + (j0 + e < N ? e : 0)];\n";
  }
  os += fold;
  os += "    }\n  }\n";
  // The lane rows of each column, by a butterfly (every lane of the
  // column ends with the same sum: a + b is b + a).
  os += "  for (int off = (int)lanes; off < 32; off <<= 1)\n";
  os += "    #pragma unroll\n    for (int r = 0; r < MR; ++r)\n";
  os += "      #pragma unroll\n      for (int e = 0; e < CV; ++e)\n";
  os += "        acc[r][e] = cumo_ops::wadd(acc[r][e], __shfl_xor_sync(0xffffffffu, acc[r][e], off));\n";
  // The warps' partials, a row at a time, a thread a column of the tile
  // (M is the block's: every thread takes the barriers).
  os += "  #pragma unroll\n  for (int r = 0; r < MR; ++r) {\n";
  os += "    if (r >= M) break;\n";
  os += "    if (lane_row == 0)\n";
  os += "      #pragma unroll\n      for (int e = 0; e < CV; ++e) part[slice][lane_col * CV + e] = acc[r][e];\n";
  os += "    __syncthreads();\n";
  os += "    const IX j = tile * width + threadIdx.x;\n";
  os += "    if (threadIdx.x < width && j < N) {\n";
  os += "      " + a + " total = part[0][threadIdx.x];\n";
  os += "      for (int w = 1; w < " + slices +
        "; ++w) total = cumo_ops::wadd(total, part[w][threadIdx.x]);\n";
  os += "      if (splits == 1) {\n" + emitWrite(s, acc, 8) + "      }\n";
  os += "      else partials[(((long long)bi * splits + split) * M + r) * N + j] = total;\n";
  os += "    }\n";
  os += "    __syncthreads();\n";
  os += "  }\n";
  os += "  if (splits == 1) return;\n";
  os += "  __syncthreads();\n";
  os += "  if (threadIdx.x == 0)\n";
  os += "    last = cumo_k::arrive_last(counters + bi * tiles + tile, (unsigned int)splits);\n";
  os += "  __syncthreads();\n";
  os += "  if (!last) return;\n";
  // The splits' partials of the tile's M x width elements, a thread each,
  // their loads unrolled so that they are in flight together.
  os += "  for (IX t = threadIdx.x; t < M * width; t += blockDim.x) {\n";
  os += "    const IX r = t / width, j = tile * width + t % width;\n";
  os += "    if (j >= N) continue;\n";
  os += "    " + a + " total = __ldcg(partials + (((long long)bi * splits) * M + r) * N + j);\n";
  os += "    #pragma unroll 8\n";
  os += "    for (IX q = 1; q < splits; ++q)\n";
  os += "      total = cumo_ops::wadd(total, __ldcg(partials + (((long long)bi * splits + q) * M + r) * N + j));\n";
  os += emitWrite(s, acc, 4);
  os += "  }\n";
  os += "  if (threadIdx.x == 0) counters[bi * tiles + tile] = 0u;\n";
  os += "}\n";
}

namespace {
/// How the thread-per-column layout lays a product over the device: the
/// lanes across a column tile and the splits of k (gemvTiling).
///
/// The tiles are as wide as they can be while the batch's tiles give every
/// SM `tileBlocksPerSm` blocks, and no narrower than `minLaneBytes` of a
/// row a lane; then, while the grid is short of `splitBlocksPerSm` blocks
/// an SM, k is split, each run at least `splitLoads` loads of every thread
/// long.
struct GemvTilingRule {
  int64_t tileBlocksPerSm, minLaneBytes, splitBlocksPerSm, splitLoads;
};
/// bench/probes/gemv_layouts.cu's answer on the H200 (2026-12-05), which
/// timed every lane count and split side by side on the decode's shapes:
/// one lane a tile (a thread's 16-byte vector of a row, the warp's 32 lanes
/// on 32 rows) was fastest or within 10% wherever it left two blocks an SM,
/// and k split only paid where the tiles were fewer (the 3072 x 768
/// projection: 6.65 against 7.01 us in BFloat, with the partials folded by
/// a thread each; the serial fold before took 29.9). In the decode the
/// projections went from 11.1 to 9.3 us.
///
/// One rule whether or not the product has a prologue: the tiling fixes the
/// order of the fold over k, and a product with its row op in its prologue
/// must give the numbers the two kernels give. (bench/probes/
/// prologue_layouts.cu, H100, 2026-12-05: the layer_norm products were
/// fastest at the same lanes as the plain ones.)
constexpr GemvTilingRule kGemvTilingRule{2, 8, 4, 4};

size_t alignTo16(size_t n) { return (n + 15) / 16 * 16; }

/// The column tiles of n columns, `lanes` threads of `cv` columns a tile
/// (the kernel's `tiles`).
int64_t columnTiles(int64_t n, int64_t lanes, int64_t cv) {
  return (n + lanes * cv - 1) / (lanes * cv);
}

struct GemvTiling {
  int64_t lanes, tiles, splits;
};
GemvTiling gemvTiling(const Kernel &k, const GemvExtents &e, int64_t sms) {
  const GemvTilingRule &rule = kGemvTilingRule;
  int64_t cv = gemvColumnVector(k);
  int64_t bytes = int64_t(sizeOf(k.operands[1].dtype)) * cv;
  int64_t narrowest = std::clamp<int64_t>(rule.minLaneBytes / bytes, 1, int64_t(kWarpSize));
  GemvTiling t{int64_t(kWarpSize), 0, 1};
  while (t.lanes > narrowest &&
         columnTiles(e.n, t.lanes, cv) * e.batch < sms * rule.tileBlocksPerSm)
    t.lanes /= 2;
  t.tiles = columnTiles(e.n, t.lanes, cv);
  int64_t blocks = t.tiles * e.batch;
  int64_t run = int64_t(kGemvSlices) * (kWarpSize / t.lanes) * rule.splitLoads;
  int64_t want = sms * rule.splitBlocksPerSm / blocks;
  t.splits = std::clamp<int64_t>(std::min(want, e.k / run), 1, 1024);
  return t;
}
} // namespace

size_t gemvScratchBytes(const Kernel &k, const LaunchConfig &launch) {
  if (alongK(k) || launch.tileLanes == 0)
    return 0;
  GemvExtents e = gemvExtents(k);
  int64_t tiles = columnTiles(e.n, int64_t(launch.tileLanes), gemvColumnVector(k));
  int64_t splits = tiles && e.batch ? int64_t(launch.grid) / (tiles * e.batch) : 1;
  if (splits <= 1)
    return 0;
  size_t acc = sizeOf(matmulAccumulator(k.opaqueDtype));
  return alignTo16(size_t(e.batch * tiles) * 4) +
         alignTo16(size_t(e.batch * splits * e.m * e.n) * acc);
}

LaunchConfig gemvLaunch(const Kernel &k, const DeviceModel &model) {
  GemvExtents e = gemvExtents(k);
  int64_t sms = std::max(model.smCount, 1);
  LaunchConfig c;
  c.block = kGemvBlock;
  if (e.m == 0 || e.n == 0 || e.batch == 0) {
    c.grid = 0; // an empty result: nothing to launch
    return c;
  }
  // A prologue's rows live in shared memory (fitsPrologue bounds them),
  // and its terms after them where it keeps them (emitPrologue).
  if (k.hasPrologue()) {
    size_t rows = size_t(e.m * e.k) * sizeOf(k.opaqueDtype);
    c.sharedBytes = uint32_t(gemvPrologueTerms(k)
                                 ? alignTo16(rows) + size_t(e.m * e.k) *
                                                         sizeOf(rowAccumulator(k.opaqueDtype))
                                 : rows);
  }
  if (alongK(k)) {
    // As many lanes a column as k has vectors (or elements), up to
    // alongKLanes.
    int64_t perLane = gemvColumnsAligned(k) ? gemvVector(k.operands[1].dtype) : 1;
    int64_t lanes = alongKLanes(gemvRowsOf(k), isBatchedProduct(k));
    while (lanes > 1 && lanes * perLane > e.k)
      lanes /= 2;
    c.tileLanes = uint32_t(lanes);
    // As many columns a lane group at once as leave every SM a block.
    int64_t warps = kGemvBlock / kWarpSize, perWarp = kWarpSize / lanes;
    int64_t cols = alongKColumnsAtOnce(gemvRowsOf(k), isBatchedProduct(k));
    auto blocksFor = [&](int64_t cols) {
      int64_t perBlock = warps * perWarp * cols;
      return (e.batch * e.n + perBlock - 1) / perBlock;
    };
    while (cols > 1 && blocksFor(cols) < sms)
      cols /= 2;
    c.tileColumns = uint32_t(cols);
    c.grid = uint32_t(std::clamp<int64_t>(blocksFor(cols), 1, sms * kGemvMinBlocksPerSm));
    if (alongKStaged(k, e.m, e.k))
      c.sharedBytes = uint32_t(e.m * e.k * int64_t(sizeOf(matmulAccumulator(k.opaqueDtype))));
    return c;
  }
  GemvTiling t = gemvTiling(k, e, sms);
  c.tileLanes = uint32_t(t.lanes);
  c.grid = uint32_t(t.tiles * t.splits * e.batch);
  return c;
}

} // namespace cudagen
} // namespace cumo
