// CUDA kernels of the fused row operations (ops/row_ops.h): a warp per
// short row, a block per long one (ops/row_layout.h decides, and the CPU
// reference folds in the same order). The row is read once into registers
// where it fits, with one 16-byte load per group when the rows are
// contiguous and aligned, and each pass (the sum, the centred sum of
// squares, the maximum ...) folds the registers; a warp reduces with
// shuffles alone, a block through one slot of shared memory per warp.
// Rows too long for the registers are read again by each pass.
#include "fusion/cuda_row_codegen.h"

#include "core/error.h"
#include "ops/row_layout.h"
#include "ops/row_ops.h"

#include <algorithm>
#include <cmath>

namespace cumo::cudagen {

void emitCachedGroups(const std::string &body, std::string &os) {
  os += "    #pragma unroll\n    for (int k = 0; k < CACHED; ++k) {\n";
  os += "      const IX g = lane + (IX)k * L;\n";
  os += "      if (g * G >= n) break;\n";
  os += body;
  os += "    }\n";
}

namespace {

constexpr uint32_t kMaxRowBlock = 1024;
/// The most passes (folds) a row op makes: layer_norm's and softmax's two.
constexpr size_t kMaxRowPasses = 2;
/// The warp-a-row layout's blocks an SM at least (its launch bounds).
constexpr uint32_t kRowWarpBlocksPerSm = 4;
/// A block-a-row launch that reads ahead: threads an SM (half of an H100's
/// or H200's 2048, at the 64 registers a thread of launch bounds 1024).
constexpr int64_t kReadAheadThreadsPerSm = 1024;

RowLayout layoutOf(const Kernel &k) {
  int64_t n = k.operandShapes[0].back();
  DType t = k.opaqueDtype;
  int64_t rows = n ? numElements(k.operandShapes[0]) / n : 0;
  return rowOpLayout(k.opaqueOp, rows, n, t, rowAccumulator(t));
}

/// Whether every row of operand 0 starts on a group boundary and runs
/// contiguously, and the result's rows too: then a group is one load.
bool groupsAreVectors(const Kernel &k, int64_t group) {
  const Load &x = k.operands[0];
  const Shape &shape = k.operandShapes[0];
  int64_t n = shape.back();
  if (group == 1 || n % group != 0 || x.index.strides.back() != 1 ||
      x.index.offset % group != 0 || k.stores[0].index.offset % group != 0)
    return false;
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    if (shape[d] > 1 && x.index.strides[d] % group != 0)
      return false;
  return true;
}

/// Whether the row kernel's warps (a warp a row) or blocks (a block a
/// row), looping over rows, load the next row while they work on this one:
/// BFloat rows of whole 16-byte groups held in registers, 2-D, and where a
/// warp takes the row, softmax's alone (the registers for both rows).
/// bench/kernel_times variants, 2026-12-06: a warp a row (H100), 32768 x
/// 1024, softmax 56.92 -> 50.70 us, layer_norm and rms_norm no faster
/// (57.33 -> 57.36, 54.31 -> 56.17), SFloat's softmax of 4096 x 768
/// neither (9.27 -> 9.29); a block a row (H200), 4096 x 4096: all three
/// faster (ops/row_layout.cpp, which gives BFloat's block rows the
/// registers for it, has the numbers).
bool readsNextRow(const Kernel &k, const RowLayout &l) {
  return k.opaqueDtype == DType::BFloat && k.operandShapes[0].size() == 2 &&
         l.cachedGroups > 0 && groupsAreVectors(k, l.group) &&
         (!l.warpPerRow() || rowResultOfLastTerm(k.opaqueOp));
}

/// Whether gamma and beta (operands 1 on) are read a group at a time
/// beside the row's: 1-D, unit-strided and starting on a group boundary.
/// Why: read an element at a time, at a stride of a group across the
/// warp's lanes, they take many more L1 accesses than the row itself; the
/// BFloat layer_norm of 32768 x 1024 took 105.7 us so, 74.6 with this and
/// the 2-D row start below (H100, 2026-12-05).
bool paramsAreVectors(const Kernel &k, int64_t group) {
  for (size_t i = 1; i < k.operands.size(); ++i) {
    const Load &p = k.operands[i];
    if (k.operandShapes[i].size() != 1 || p.index.strides.back() != 1 ||
        p.index.offset % group != 0)
      return false;
  }
  return true;
}

/// Whether every index the row kernel forms stays within
/// kNarrowIndexLimit: each operand's (indexMagnitude), and the result's
/// (written contiguously from its offset).
bool rowIndicesFit(const Kernel &k) {
  for (size_t o = 0; o < k.operands.size(); ++o)
    if (indexMagnitude(k.operands[o].index, k.operandShapes[o]) > kNarrowIndexLimit)
      return false;
  for (const Store &st : k.stores)
    if (std::fabs(double(st.index.offset)) + double(k.domainSize()) > kNarrowIndexLimit)
      return false;
  return double(k.domainSize()) <= kNarrowIndexLimit;
}

/// The routine that rounds a group of the row's results to its class two
/// to a word (core/element_types.h), or "" where it is not a sixteen-bit
/// float over a float accumulator.
std::string wordsOf(const KernelShape &s) {
  if (s.rowAccumulator != DType::SFloat)
    return "";
  if (s.outDtype == DType::BFloat)
    return "bfloat16_words";
  if (s.outDtype == DType::HFloat)
    return "half_words";
  return "";
}

/// Widens the G elements of the vector `word` (a uint4 of the row's class)
/// into the accumulator at `dest(e)` (an expression of the element's index
/// in the group), BFloat's a word at a time.
std::string widenGroup(const KernelShape &s, const std::string &word,
                       llvm::function_ref<std::string(const std::string &)> dest) {
  std::string t = cType(s.outDtype).str();
  if (s.outDtype == DType::BFloat && s.rowAccumulator == DType::SFloat)
    return "      #pragma unroll\n      for (int e = 0; e < G; e += 2)\n"
           "        cumo_ops::widen_bfloat16_word(reinterpret_cast<const unsigned int *>(&" +
           word + ")[e / 2], " + dest("e") + ", " + dest("e + 1") + ");\n";
  return "      #pragma unroll\n      for (int e = 0; e < G; ++e) " + dest("e") + " = " +
         castExpr(s.outDtype, s.rowAccumulator,
                  "reinterpret_cast<const " + t + " *>(&" + word + ")[e]") +
         ";\n";
}

/// One pass (RowPass). `keepTerms` (cached rows only): each element's
/// term replaces it in the registers, for a result of the term
/// (RowProgram::elementOfTerm). `loadsAhead` (uncached rows only): a lane
/// loads a whole group before it folds the group's elements, in the same
/// order, so the loads overlap where a test of the row's end before each
/// element kept one load and one add in turn. Taken by the products'
/// layer_norm prologue, whose row is in shared memory:
/// bench/probes/prologue_variants.rb's `ilp_stats` on a lent H100
/// (2026-12-06) made qkv 10.16 -> 8.90 us in SFloat and 9.09 -> 8.51 in
/// BFloat, fc 11.17 -> 9.91 and 9.62 -> 9.04, with the same bits.
///
/// In a cached row each element is tested against the row's end unless
/// WHOLE (a constant emitRowEntry declares: the row is whole groups): the
/// test, three to five instructions an element in each pass with 64-bit
/// indices, had been a quarter of a BFloat layer_norm's (ptxas, sm_90).
/// A block a row folds through `slots` (its own shared slots, a warp each:
/// cumo_k::block_allreduce).
void emitFold(const KernelShape &s, const RowPass &p, bool keepTerms, std::string &os,
              bool loadsAhead = false, const std::string &slots = "") {
  std::string a = cType(s.rowAccumulator).str();
  auto foldOf = [&](const std::string &term) {
    return p.acc + " = cumo_k::" + p.op + "()(" + p.acc + ", " + term + ");";
  };
  std::string fold = foldOf(p.term);
  // Group g's elements one at a time, each tested against the row's end.
  auto eachTested = [&](const std::string &in) {
    return in + "for (int e = 0; e < G && g * G + e < n; ++e) {\n" + in + "  const " + a +
           " x = load(g * G + e);\n" + in + "  " + fold + "\n" + in + "}\n";
  };
  os += "    " + a + " " + p.acc + " = " + p.identity + ";\n";
  if (s.rowCachedGroups > 0) {
    std::string each = "          const " + a + " x = v[k * G + e];\n          ";
    if (keepTerms)
      each += "const " + a + " t = " + p.term + ";\n"
              "          v[k * G + e] = t;\n          " + foldOf("t") + "\n";
    else
      each += fold + "\n";
    emitCachedGroups("      #pragma unroll\n      for (int e = 0; e < G; ++e) {\n"
                     "        if (WHOLE || g * G + e < n) {\n" + each +
                     "        }\n      }\n",
                     os);
  } else if (loadsAhead) {
    os += "    for (IX g = lane; g * G < n; g += L) {\n";
    os += "      if (g * G + G <= n) {\n";
    os += "        " + a + " group[G];\n";
    os += "        #pragma unroll\n";
    os += "        for (int e = 0; e < G; ++e) group[e] = load(g * G + e);\n";
    os += "        #pragma unroll\n";
    os += "        for (int e = 0; e < G; ++e) {\n";
    os += "          const " + a + " x = group[e];\n          " + fold + "\n        }\n";
    os += "      } else {\n" + eachTested("        ") + "      }\n    }\n";
  } else {
    os += "    for (IX g = lane; g * G < n; g += L)\n" + eachTested("      ");
  }
  // Every lane of the row takes the folded value.
  if (s.rowWarp) {
    os += "    " + p.acc + " = cumo_k::warp_reduce(" + p.acc + ", cumo_k::" + p.op + "());\n";
    os += "    " + p.acc + " = __shfl_sync(0xffffffffu, " + p.acc + ", 0);\n";
  } else {
    if (slots.empty())
      throw Error(ErrorKind::Internal, "[cuda codegen] a block's fold without its slots");
    os += "    " + p.acc + " = cumo_k::block_allreduce(" + p.acc + ", cumo_k::" + p.op + "(), (" +
          a + ")" + p.identity + ", " + slots + ");\n";
  }
}

/// The row's results: out[j] = `element` (of `value`, what the registers
/// hold of the element: x itself, or t, the last pass's term, and of `j`);
/// `groupLoads` (vector rows only) loads what `element` reads of group g.
void emitWrite(const KernelShape &s, const std::string &element, const char *value,
               const std::string &groupLoads, std::string &os) {
  std::string t = cType(s.outDtype).str(), a = cType(s.rowAccumulator).str();
  std::string store = castExpr(s.rowAccumulator, s.outDtype, element);
  if (s.rowCachedGroups > 0) {
    std::string body;
    if (s.rowVector && !wordsOf(s).empty()) {
      // A sixteen-bit row: the group's results in the accumulator, then
      // rounded two to a word (core/element_types.h).
      body += groupLoads;
      body += "      " + a + " y[G];\n";
      body += "      #pragma unroll\n      for (int e = 0; e < G; ++e) {\n";
      body += "        const IX j = g * G + e;\n";
      body += "        const " + a + " " + value + " = v[k * G + e];\n";
      body += "        y[e] = " + element + ";\n      }\n";
      body += "      uint4 w;\n";
      body += "      cumo_ops::" + wordsOf(s) + "(y, reinterpret_cast<unsigned int *>(&w));\n";
      body += "      *reinterpret_cast<uint4 *>(o + g * G) = w;\n";
    } else if (s.rowVector) {
      body += groupLoads;
      body += "      uint4 w;\n      " + t + " *wt = reinterpret_cast<" + t + " *>(&w);\n";
      body += "      #pragma unroll\n      for (int e = 0; e < G; ++e) {\n";
      body += "        const IX j = g * G + e;\n";
      body += "        const " + a + " " + value + " = v[k * G + e];\n";
      body += "        wt[e] = " + store + ";\n      }\n";
      body += "      *reinterpret_cast<uint4 *>(o + g * G) = w;\n";
    } else {
      body += "      #pragma unroll\n      for (int e = 0; e < G; ++e) {\n";
      body += "        const IX j = g * G + e;\n        if (j >= n) break;\n";
      body += "        const " + a + " " + value + " = v[k * G + e];\n";
      body += "        o[j] = " + store + ";\n      }\n";
    }
    emitCachedGroups(body, os);
  } else {
    os += "    for (IX j = lane; j < n; j += L) {\n";
    os += "      const " + a + " x = load(j);\n      o[j] = " + store + ";\n    }\n";
  }
}

} // namespace

bool isRowOp(OpKind op) {
  return op == OpKind::LayerNorm || op == OpKind::RmsNorm || op == OpKind::Softmax;
}

void analyzeRow(const Kernel &k, KernelShape &s) {
  RowLayout l = layoutOf(k);
  s.rowAccumulator = rowAccumulator(s.outDtype);
  s.rowWarp = l.warpPerRow();
  s.rowGroup = int32_t(l.group);
  s.rowCachedGroups = int32_t(l.cachedGroups);
  s.rowVector = l.cachedGroups > 0 && groupsAreVectors(k, l.group);
  s.rowParamsVector = s.rowVector && paramsAreVectors(k, l.group);
  // 32-bit indices in the block-a-row layout only: in the warp-a-row one,
  // held to 64 registers, they spilled 4-12 bytes a thread (ptxas sm_90,
  // the 32768 x 1024 row ops), where 64-bit ones spill none.
  s.rowNarrow = !s.rowWarp && rowIndicesFit(k);
  s.rowReadsAhead = readsNextRow(k, l);
}

void emitRowEntry(const KernelShape &s, const std::string &entry, std::string &os) {
  std::string t = cType(s.outDtype).str(), a = cType(s.rowAccumulator).str();
  int32_t rank = s.operandRanks[0];
  // A warp a row: at least kRowWarpBlocksPerSm blocks an SM, so ptxas
  // keeps a thread to 64 registers (it took 79 for the row ops of 1024
  // elements, three blocks an SM). bench/kernel_times, H100, 2026-12-05,
  // 32768 x 1024 BFloat: layer_norm 71.6 -> 67.7 us, rms_norm 65.7 ->
  // 59.6, softmax 78.7 -> 71.1; SFloat unchanged (94-95 us).
  // A warp a row that reads its next row ahead (readsNextRow) has two
  // blocks an SM, the registers for both rows.
  bool prefetch = s.rowReadsAhead;
  std::string bounds = s.rowWarp ? std::to_string(kRowsBlock) + ", " +
                                       std::to_string(prefetch ? 2 : kRowWarpBlocksPerSm)
                                 : std::to_string(kMaxRowBlock);
  emitKernelOpening(bounds, entry, os);
  // 32-bit indices where every one fits (and a block takes the row):
  // BFloat layer_norm at 4096 x 4096 38.2 -> 37.4 us, softmax 45.4 -> 43.8
  // (kernel_times variants, H100, 2026-12-05; a BFloat row is bound by its
  // arithmetic, ncu).
  os += std::string("  using IX = ") + (s.rowNarrow ? "int" : "long long") + ";\n";
  os += "  constexpr int G = " + std::to_string(s.rowGroup) + ";\n";
  if (s.rowCachedGroups > 0)
    os += "  constexpr int CACHED = " + std::to_string(s.rowCachedGroups) + ";\n";
  os += "  const IX n = (IX)P.in0_ext[" + std::to_string(rank - 1) + "];\n";
  os += "  const IX rows = n ? (IX)P.n / n : 0;\n";
  os += "  const IX step = (IX)P.in0_s[" + std::to_string(rank - 1) + "];\n";
  if (s.rowWarp) {
    os += "  const IX L = 32, lane = threadIdx.x & 31u;\n";
    os += "  const IX first = (IX)blockIdx.x * " + std::to_string(kRowsBlock / 32) +
          " + (threadIdx.x >> 5);\n";
    os += "  const IX stride = (IX)gridDim.x * " + std::to_string(kRowsBlock / 32) + ";\n";
  } else {
    os += "  const IX L = blockDim.x, lane = threadIdx.x;\n";
    os += "  const IX first = blockIdx.x, stride = gridDim.x;\n";
    // A warp's slot for each fold of a row, in two sets (block_allreduce).
    os += "  __shared__ " + a + " smem[2][" + std::to_string(kMaxRowPasses) + "][32];\n";
    os += "  unsigned int parity = 0;\n";
  }
  os += "  const " + a + " eps = (" + a + ")P.eps;\n";
  if (prefetch) {
    os += "  uint4 nxt[CACHED];\n";
    os += "  auto fetch = [&](IX r) {\n";
    os += "    const IX b = (IX)P.in0_off + r * (IX)P.in0_s[0];\n";
    os += "    #pragma unroll\n    for (int k = 0; k < CACHED; ++k) {\n";
    os += "      const IX g = lane + (IX)k * L;\n";
    os += "      if (g * G < n) nxt[k] = *reinterpret_cast<const uint4 *>(P.in0 + b + g * G);\n";
    os += "    }\n  };\n";
    os += "  if (first < rows) fetch(first);\n";
  }
  // The loop over the rows, emitted below once for each value of WHOLE
  // that the launch may take (emitFold).
  std::string outer = std::move(os);
  os.clear();
  os += std::string("  for (IX row = first; row < rows; row += stride") +
        (s.rowWarp ? "" : ", parity ^= 1u") + ") {\n";
  os += "    IX base = (IX)P.in0_off;\n";
  if (rank == 2) {
    // The row is the first index (no division: a 64-bit one per row cost
    // as much as a pass over a short row).
    os += "    base += row * (IX)P.in0_s[0];\n";
  } else {
    os += "    {\n      IX r = row;\n";
    os += "      for (int d = " + std::to_string(rank - 2) + "; d >= 0; --d) {\n";
    os += "        IX q = cumo_k::divmod(r, (IX)P.in0_ext[d], r);\n";
    os += "        base += r * (IX)P.in0_s[d];\n        r = q;\n";
    os += "      }\n    }\n";
  }
  os += "    " + t + " *o = P.out + (IX)P.out_off + row * n;\n";
  os += "    auto load = [&](IX j) -> " + a + " {\n";
  os += "      return " + castExpr(s.outDtype, s.rowAccumulator, "P.in0[base + j * step]") +
        ";\n    };\n";
  // gamma and beta: a group at a time beside the row's where they allow
  // (groupLoads, in the write's loop), else an element at a time.
  std::string groupLoads;
  auto param = [&](int i) {
    std::string p = "P.in" + std::to_string(i), pv = "pv" + std::to_string(i);
    if (size_t(i) >= s.operandRanks.size())
      return std::string("(no operand " + std::to_string(i) + ")"); // the op reads none
    if (!s.rowParamsVector)
      return castExpr(s.outDtype, s.rowAccumulator,
                      p + "[(IX)" + p + "_off + j * (IX)" + p + "_s[0]]");
    groupLoads += "      const uint4 " + pv + "w = *reinterpret_cast<const uint4 *>(" + p +
                  " + (IX)" + p + "_off + g * G);\n";
    groupLoads += "      " + a + " " + pv + "[G];\n";
    groupLoads += widenGroup(s, pv + "w", [&](const std::string &e) { return pv + "[" + e + "]"; });
    return pv + "[e]";
  };
  if (s.rowCachedGroups > 0) {
    os += "    " + a + " v[CACHED * G];\n";
    std::string body;
    if (prefetch) {
      // This row from what the last fetch loaded; the next row's loads go
      // out before this one is worked on.
      os += "    uint4 cur[CACHED];\n";
      os += "    #pragma unroll\n    for (int k = 0; k < CACHED; ++k) cur[k] = nxt[k];\n";
      os += "    if (row + stride < rows) fetch(row + stride);\n";
      body += "      const uint4 w = cur[k];\n";
      body += widenGroup(s, "w", [](const std::string &e) { return "v[k * G + " + e + "]"; });
    } else if (s.rowVector) {
      body += "      const uint4 w = *reinterpret_cast<const uint4 *>(P.in0 + base + g * G);\n";
      body += widenGroup(s, "w", [](const std::string &e) { return "v[k * G + " + e + "]"; });
    } else {
      body += "      #pragma unroll\n      for (int e = 0; e < G; ++e)\n";
      body += "        if (g * G + e < n) v[k * G + e] = load(g * G + e);\n";
    }
    emitCachedGroups(body, os);
  }
  // A result of the last pass's term (softmax's exponential) keeps the
  // term in the registers rather than computing it twice, where a warp
  // takes the row, and in a sixteen-bit class where a block does.
  // bench/kernel_times, H100, 2026-12-05, softmax, kept against computed
  // twice: 32768 x 1024 SFloat 95.1 and 101.8 us, BFloat 78.7 and 88.3;
  // a block a row, 4096 x 4096, BFloat 40.3 and 45.6 but SFloat 87.0 and
  // 51.2, a loss we have not explained.
  RowProgram program = rowProgram(s, s.opaqueOp, param(1), param(2));
  bool sixteenBit = isNarrowFloat(s.outDtype);
  bool terms = (s.rowWarp || sixteenBit) && s.rowCachedGroups > 0 &&
               !program.elementOfTerm.empty();
  if (program.passes.size() > kMaxRowPasses)
    throw Error(ErrorKind::Internal, "[cuda codegen] a row op of more passes than slots");
  for (size_t i = 0; i < program.passes.size(); ++i) {
    emitFold(s, program.passes[i], terms && i + 1 == program.passes.size(), os,
             /*loadsAhead=*/false, "smem[parity][" + std::to_string(i) + "]");
    os += program.passes[i].finish;
  }
  os += program.perRow;
  emitWrite(s, terms ? program.elementOfTerm : program.element, terms ? "t" : "x", groupLoads,
            os);
  os += "  }\n";
  // Vector rows are whole groups (groupsAreVectors); other cached rows
  // are tested once a launch, the row loop compiled for each answer.
  std::string loop = std::move(os);
  os = std::move(outer);
  if (s.rowCachedGroups == 0 || s.rowVector) {
    os += "  constexpr bool WHOLE = " + std::string(s.rowVector ? "true" : "false") + ";\n";
    os += "  (void)WHOLE;\n" + loop;
  } else {
    os += "  if (n % G == 0) {\n  constexpr bool WHOLE = true;\n" + loop;
    os += "  } else {\n  constexpr bool WHOLE = false;\n" + loop + "  }\n";
  }
  os += "}\n";
}

RowProgram rowProgram(const KernelShape &s, OpKind op, const std::string &gamma,
                      const std::string &beta) {
  std::string a = cType(s.rowAccumulator).str();
  RowProgram p;
  switch (op) {
  case OpKind::LayerNorm:
    p.passes.push_back({"total", "SumOp", "(" + a + ")0", "x",
                        "    const " + a + " mean = total / (" + a + ")n;\n", {"mean"}});
    p.passes.push_back({"squares", "SumOp", "(" + a + ")0", "(x - mean) * (x - mean)",
                        "    const " + a + " sd = cumo_ops::m_sqrt(squares / (" + a +
                            ")n + eps);\n",
                        {"sd"}});
    p.perRow = "    const cumo_ops::divisor<" + a + "> sd_q(sd);\n";
    p.element = "cumo_ops::layer_norm_element(x, mean, sd_q, " + gamma + ", " + beta + ")";
    return p;
  case OpKind::RmsNorm:
    p.passes.push_back({"squares", "SumOp", "(" + a + ")0", "x * x",
                        "    const " + a + " rms = cumo_ops::m_sqrt(squares / (" + a +
                            ")n + eps);\n",
                        {"rms"}});
    p.perRow = "    const cumo_ops::divisor<" + a + "> rms_q(rms);\n";
    p.element = "cumo_ops::rms_norm_element(x, rms_q, " + gamma + ")";
    return p;
  case OpKind::Softmax:
    p.passes.push_back({"m", "RowMaxOp", "(" + a + ")(0.0 / 0.0)", "x", "", {"m"}});
    p.passes.push_back({"total", "SumOp", "(" + a + ")0", "cumo_ops::m_exp(x - m)", "", {"total"}});
    if (isNarrowFloat(s.outDtype)) {
      // A sixteen-bit result keeps 8 (bfloat16) or 11 (half) of the
      // quotient's 24 bits: its product with the row's reciprocal (within
      // 1.5 float ulps of the quotient) rounds to the same value but where
      // the quotient lies that close to a rounding boundary, about one
      // element in 2^14 in bfloat16, and then to the other neighbour, one
      // instruction where the exactly rounded division took seven. H100,
      // 2026-12-07 (bench/probes/softmax_math_variants.rb): BFloat 4096 x
      // 4096 31.8 -> 28.1 us, 32768 x 1024 50.2 -> 49.4.
      p.perRow = "    const " + a + " total_r = (" + a + ")1 / total;\n";
      p.element = "cumo_ops::m_exp(x - m) * total_r";
      p.elementOfTerm = "t * total_r";
      return p;
    }
    p.perRow = "    const cumo_ops::divisor<" + a + "> total_q(total);\n";
    p.element = "cumo_ops::quotient(cumo_ops::m_exp(x - m), total_q)";
    // Each element is its exponential, the last pass's term, divided
    // (rowResultOfLastTerm).
    p.elementOfTerm = "cumo_ops::quotient(t, total_q)";
    return p;
  default:
    throw Error(ErrorKind::Internal, "[cuda codegen] not a row operation");
  }
}

bool rowResultOfLastTerm(OpKind op) { return op == OpKind::Softmax; }

void emitRowPass(const KernelShape &s, const RowPass &p, std::string &os) {
  emitFold(s, p, /*keepTerms=*/false, os, /*loadsAhead=*/s.rowCachedGroups == 0);
  os += p.finish;
}

LaunchConfig launchRows(const RowLayout &l, int64_t rows, const DeviceModel &model,
                        int64_t warpBlocksPerSm) {
  int64_t sms = std::max(model.smCount, 1), cap = sms * 32;
  LaunchConfig c;
  if (l.warpPerRow()) {
    int64_t perBlock = kRowsBlock / 32;
    c.block = kRowsBlock;
    c.grid = uint32_t(std::min<int64_t>((rows + perBlock - 1) / perBlock, sms * warpBlocksPerSm));
  } else {
    c.block = uint32_t(l.lanes);
    c.grid = uint32_t(std::min<int64_t>(rows, cap));
  }
  return c;
}

LaunchConfig rowLaunch(const Kernel &k, const DeviceModel &model) {
  int64_t n = k.operandShapes[0].back();
  // A warp a row of a sixteen-bit class: one wave of the blocks an SM
  // holds, each warp looping over rows, rather than a block per eight
  // rows. bench/kernel_times variants, H100, 2026-12-06, BFloat 32768 x
  // 1024 (4096 blocks against 528): layer_norm 57.33 -> 55.64 us, rms_norm
  // 54.31 -> 53.18, softmax 56.92 -> 54.87 (its next row's prefetch needs
  // the loop: 65.03 a block per eight rows at 17:08). Wider classes the
  // other way: SFloat, same case and call (17:08), a block per eight rows
  // against one wave, layer_norm 94.86 against 99.85, rms_norm 93.94
  // against 98.00, softmax 93.03 against 99.21 (DFloat not measured).
  // (A cap of 2^20 blocks an SM: the grid stays far below CUDA's limit and
  // the warps loop past it.)
  bool oneWave = sizeOf(k.opaqueDtype) <= 2;
  RowLayout l = layoutOf(k);
  int64_t rows = n ? k.domainSize() / n : 0;
  LaunchConfig c = launchRows(l, rows, model, oneWave ? kRowWarpBlocksPerSm : int64_t{1} << 20);
  // A block a row that reads its next row ahead: one wave of half an SM's
  // threads (64 registers each, launch bounds 1024), each block looping
  // over its rows (the variants of ops/row_layout.cpp's BFloat rule: 528
  // blocks of 256 lanes at 4096 x 4096).
  if (!l.warpPerRow() && readsNextRow(k, l))
    c.grid = uint32_t(std::min<int64_t>(
        rows, std::max(model.smCount, 1) * std::max<int64_t>(1, kReadAheadThreadsPerSm / l.lanes)));
  return c;
}

} // namespace cumo::cudagen
