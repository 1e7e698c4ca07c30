// CUDA implementations of opaque ops, generated like fused kernels: one
// parameter block (cuda_params.cpp's opaque branch), sources that depend
// only on structure, so they go into CUDA graphs and replay as the others
// do. Each computes what the op's reference in ops/ computes, in the same
// order, so the two agree bit for bit.
#include "fusion/cuda_kernel_shape.h"
#include "fusion/cuda_row_codegen.h"
#include "fusion/library_epilogue.h"

#include "core/error.h"
#include "ops/matmul.h"

#include <algorithm>
#include "ops/scan.h"
#include "ops/sort.h"

namespace cumo::cudagen {

namespace {

constexpr uint32_t kScanBlock = 128;
/// Threads of the block that sorts one line.
constexpr uint32_t kSortBlock = 256;

[[noreturn]] void noImplementation(OpKind op) {
  throw Error(ErrorKind::Internal,
              "[cuda codegen] no CUDA implementation of " + std::string(opName(op)));
}

/// A scan: one thread walks each line (the whole array when flat), in the
/// reference's order.
void emitScan(const KernelShape &s, const std::string &entry, std::string &os) {
  int32_t rank = s.operandRanks[0];
  DType in = s.operandDtypes[0];
  DType acc = scanAccumulator(s.opaqueOp, s.outDtype);
  std::string accT = cType(acc).str();
  OpKind step = s.opaqueOp == OpKind::CumSum ? OpKind::Sum : OpKind::Prod;
  std::string r = std::to_string(std::max(rank, 1));
  emitKernelOpening(std::to_string(kScanBlock), entry, os);
  os += "  const int rank = " + std::to_string(rank) + ";\n";
  os += "  long long len = " + std::string(s.flat ? "P.n" : "(rank ? P.in0_ext[P.axis] : 1)") + ";\n";
  os += "  long long lines = len ? P.n / len : 0;\n";
  os += "  for (long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x; line < lines;\n"
        "       line += (long long)gridDim.x * blockDim.x) {\n";
  os += "    long long c[" + r + "];\n";
  os += "    long long rest = line;\n";
  os += "    for (int d = rank - 1; d >= 0; --d) {\n";
  os += "      if (" + std::string(s.flat ? "true" : "d == P.axis") + ") { c[d] = 0; continue; }\n";
  os += "      c[d] = rest % P.in0_ext[d];\n      rest /= P.in0_ext[d];\n    }\n";
  os += "    " + accT + " total = (" + accT + ")(" + (step == OpKind::Sum ? "0" : "1") + ");\n";
  os += "    for (long long i = 0; i < len; ++i) {\n";
  if (s.flat)
    os += "      long long q = i;\n"
          "      for (int d = rank - 1; d >= 0; --d) { c[d] = q % P.in0_ext[d]; q /= P.in0_ext[d]; }\n";
  else
    os += "      c[P.axis] = i;\n";
  os += "      long long src = P.in0_off, dst = 0, stride = 1;\n";
  os += "      for (int d = rank - 1; d >= 0; --d) {\n"
        "        src += c[d] * P.in0_s[d];\n        dst += c[d] * stride;\n"
        "        stride *= P.in0_ext[d];\n      }\n";
  os += "      const " + accT + " x = " + castExpr(in, acc, "P.in0[src]") + ";\n";
  os += "      total = " + reduceStepExpr(step, "total", "x") + ";\n";
  os += "      P.out[P.out_off + dst] = " + castExpr(acc, s.outDtype, "total") + ";\n";
  os += "    }\n  }\n}\n";
}

/// The geometry of a sort's lines (ops/sort.h), as the reference walks
/// them: `len` elements a line, `lines` lines counted over the kept axes,
/// and `in_at(line_in, i)`, the offset of a line's i-th element.
void emitSortLines(const KernelShape &s, std::string &os) {
  int32_t rank = s.operandRanks[0];
  std::string r = std::to_string(std::max(rank, 1));
  os += "  const int rank = " + std::to_string(rank) + ";\n";
  os += "  long long len = 1, lines = 1;\n";
  os += "  for (int d = 0; d < rank; ++d) {\n";
  if (s.flat)
    os += "    len *= P.in0_ext[d];\n";
  else
    os += "    if (d == P.axis) len = P.in0_ext[d]; else lines *= P.in0_ext[d];\n";
  os += "  }\n";
  // The distance between a line's elements in a contiguous array of the
  // operand's shape.
  os += "  long long ostep = 1;\n";
  if (!s.flat)
    os += "  for (int d = rank - 1; d > P.axis; --d) ostep *= P.in0_ext[d];\n";
  os += "  auto in_at = [&](long long ibase, long long i) -> long long {\n";
  if (s.flat) {
    os += "    long long at = P.in0_off;\n";
    os += "    for (int d = rank - 1; d >= 0; --d) {\n"
          "      at += (i % P.in0_ext[d]) * P.in0_s[d];\n      i /= P.in0_ext[d];\n    }\n";
    os += "    return at + 0 * ibase;\n";
  } else {
    os += "    return ibase + i * P.in0_s[P.axis];\n";
  }
  os += "  };\n";
}

/// The start of line `line`: where its first element lies in a contiguous
/// array of the operand's shape (`obase`) and in the operand (`ibase`).
void emitLineStart(const KernelShape &s, std::string &os) {
  os += "    long long rest = line, obase = 0, ibase = P.in0_off, stride = 1;\n";
  if (!s.flat)
    os += "    for (int d = rank - 1; d >= 0; --d) {\n"
          "      if (d == P.axis) { stride *= P.in0_ext[d]; continue; }\n"
          "      long long c = rest % P.in0_ext[d];\n      rest /= P.in0_ext[d];\n"
          "      obase += c * stride;\n      ibase += c * P.in0_s[d];\n"
          "      stride *= P.in0_ext[d];\n    }\n";
}

/// sort and sort_index: a block per line, sorting it in the result with a
/// bitonic network for any length (each merge's first step compares
/// mirrored pairs, so every step sorts ascending and positions past the
/// end, which would hold +infinity, never move). sort_less is a total
/// order, so the result is the reference's, bit for bit; sort_index sorts
/// line positions by (value, position) and writes flat indices last.
void emitSort(const KernelShape &s, const std::string &entry, std::string &os) {
  bool index = s.opaqueOp == OpKind::SortIndex;
  std::string t = cType(s.operandDtypes[0]).str(), o = cType(s.outDtype).str();
  emitKernelOpening(std::to_string(kSortBlock), entry, os);
  emitSortLines(s, os);
  os += "  for (long long line = blockIdx.x; line < lines; line += gridDim.x) {\n";
  emitLineStart(s, os);
  os += "    " + o + " *e = P.out + P.out_off + obase;\n";
  os += "    for (long long i = threadIdx.x; i < len; i += blockDim.x)\n";
  os += index ? "      e[i * ostep] = (" + o + ")i;\n"
              : "      e[i * ostep] = P.in0[in_at(ibase, i)];\n";
  os += "    __syncthreads();\n";
  os += "    for (long long k = 2; k / 2 < len; k <<= 1) {\n";
  os += "      for (long long j = k >> 1; j > 0; j >>= 1) {\n";
  os += "        for (long long i = threadIdx.x; i < len; i += blockDim.x) {\n";
  os += "          const long long q = j == (k >> 1) ? (i ^ (k - 1)) : (i ^ j);\n";
  os += "          if (q <= i || q >= len) continue;\n";
  os += "          const " + o + " a = e[i * ostep], b = e[q * ostep];\n";
  if (index) {
    os += "          const " + t + " va = P.in0[in_at(ibase, (long long)a)];\n";
    os += "          const " + t + " vb = P.in0[in_at(ibase, (long long)b)];\n";
    os += "          const bool swap = cumo_ops::sort_less(vb, va) ||\n"
          "                            (!cumo_ops::sort_less(va, vb) && b < a);\n";
  } else {
    os += "          const bool swap = cumo_ops::sort_less(b, a);\n";
  }
  os += "          if (swap) { e[i * ostep] = b; e[q * ostep] = a; }\n";
  os += "        }\n        __syncthreads();\n      }\n    }\n";
  if (index) {
    os += "    for (long long i = threadIdx.x; i < len; i += blockDim.x)\n";
    os += "      e[i * ostep] = (" + o + ")(obase + (long long)e[i * ostep] * ostep);\n";
    os += "    __syncthreads();\n";
  }
  os += "  }\n}\n";
}

/// median of a sorted operand: a thread per line, as the reference.
void emitSortedMedian(const KernelShape &s, const std::string &entry, std::string &os) {
  std::string t = cType(s.operandDtypes[0]).str();
  emitKernelOpening(std::to_string(kScanBlock), entry, os);
  emitSortLines(s, os);
  os += "  for (long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x;"
        " line < lines;\n       line += (long long)gridDim.x * blockDim.x) {\n";
  emitLineStart(s, os);
  os += "    auto x = [&](long long i) { return P.in0[in_at(ibase, i)]; };\n";
  os += "    " + t + " m;\n";
  // An empty line: NaN, or 0 for an integer class.
  std::string none = isFloat(s.operandDtypes[0]) ? "(" + t + ")(0.0 / 0.0)" : "(" + t + ")0";
  os += "    if (len == 0) {\n      m = " + none + ";\n    } else {\n";
  os += "      long long c = len;\n";
  os += "      if (!P.propagate)\n        while (c > 0 && cumo_ops::sort_isnan(x(c - 1))) --c;\n";
  os += "      if (c == 0 || cumo_ops::sort_isnan(x(c - 1))) m = x(len - 1);\n";
  os += "      else if (c % 2 == 0) m = cumo_ops::median_pair(x(c / 2 - 1), x(c / 2));\n";
  os += "      else m = x((c - 1) / 2);\n    }\n";
  os += "    P.out[P.out_off + line] = m;\n  }\n}\n";
}

/// The offset of row-major element `flat` of operand i, as a C expression
/// (a lambda the kernel defines).
void emitOffsetOf(const KernelShape &s, size_t i, std::string &os) {
  std::string n = std::to_string(i), p = "P.in" + n;
  os += "  auto at" + n + " = [&](long long flat) -> long long {\n";
  os += "    long long at = " + p + "_off;\n";
  // A 0-dim operand has no extents or strides in the block to loop over.
  if (s.operandRanks[i] == 0) {
    os += "    (void)flat;\n    return at;\n  };\n";
    return;
  }
  os += "    for (int d = " + std::to_string(s.operandRanks[i]) + " - 1; d >= 0; --d) {\n";
  os += "      at += (flat % " + p + "_ext[d]) * " + p + "_s[d];\n";
  os += "      flat /= " + p + "_ext[d];\n    }\n    return at;\n  };\n";
}

/// `tab<i>(k)`: element k, in row-major order, of Int64 operand i (a
/// position table), read directly when the operand is contiguous (the
/// tables the engine computes are), through at<i> otherwise.
void emitTableRead(const KernelShape &s, size_t i, std::string &os) {
  std::string n = std::to_string(i), p = "P.in" + n;
  emitOffsetOf(s, i, os);
  os += "  bool dense" + n + " = true;\n";
  if (s.operandRanks[i] > 0) {
    os += "  {\n    long long step = 1;\n";
    os += "    for (int d = " + std::to_string(s.operandRanks[i]) + " - 1; d >= 0; --d) {\n";
    os += "      dense" + n + " = dense" + n + " && (" + p + "_ext[d] == 1 || " + p +
          "_s[d] == step);\n";
    os += "      step *= " + p + "_ext[d];\n    }\n  }\n";
  }
  os += "  auto tab" + n + " = [&](long long k) -> long long {\n";
  os += "    return (long long)" + p + "[dense" + n + " ? " + p + "_off + k : at" + n +
        "(k)];\n  };\n";
}

/// gather: a thread per element of the result, reading the array at the
/// table's position. A table computed on the device is checked: a position
/// outside the array flags the error word and reads 0.
void emitGather(const KernelShape &s, const std::string &entry, std::string &os) {
  emitKernelOpening(std::to_string(kScanBlock), entry, os);
  emitOffsetOf(s, 0, os);
  emitTableRead(s, 1, os);
  if (s.checksIndex) {
    os += "  long long size = 1;\n";
    os += "  for (int d = 0; d < " + std::to_string(s.operandRanks[0]) +
          "; ++d) size *= P.in0_ext[d];\n";
  }
  os += "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < P.n;\n"
        "       i += (long long)gridDim.x * blockDim.x) {\n";
  os += "    const long long p = tab1(i);\n";
  if (s.checksIndex) {
    os += "    if (p < 0 || p >= size) {\n";
    emitFlagIndex(os, 6);
    os += "      P.out[P.out_off + i] = " + zeroExpr(s.outDtype) + ";\n";
    os += "      continue;\n    }\n";
  }
  os += "    P.out[P.out_off + i] = P.in0[at0(p)];\n  }\n}\n";
}

/// index_write: the result already holds the array (an elementwise kernel
/// copied it there); a thread per selected element writes its value at its
/// position. In a host table each position is there once (the host marked
/// earlier writes of a position -1). A table computed on the device is
/// checked (a position outside the array flags the error word and writes
/// nothing) and may repeat a position: the last selection that names it
/// writes, as the reference's loop leaves it, and the others skip, so no
/// two threads write one element and the answer is deterministic. Each
/// thread looks for a later selection of its position, scanning down from
/// the last while the threads of a warp read the same entry (a broadcast):
/// at most m(m-1)/2 comparisons for m selections. Decode's row writes are
/// small (m = 768 for GPT-2's rows: under 300,000 comparisons in all); a
/// write of 100,000 selections at device positions takes up to 5e9
/// (milliseconds, by estimate: not measured). A sort, or a claim word per
/// element of the array, would bring that to m log m or m, at the cost of
/// more kernels or memory for every write. Where the selection cannot name a
/// position twice (decode's `cache[true, true, pos, true] = kv`: ranges and
/// a one-element index), there is nothing to look for.
void emitIndexWrite(const KernelShape &s, const std::string &entry, std::string &os) {
  emitKernelOpening(std::to_string(kScanBlock), entry, os);
  emitTableRead(s, 0, os);
  for (int32_t w = 0; w < s.writes; ++w)
    emitOffsetOf(s, size_t(w) + 1, os);
  os += "  long long m = 1;\n";
  os += "  for (int d = 0; d < " + std::to_string(s.operandRanks[0]) +
        "; ++d) m *= P.in0_ext[d];\n";
  os += "  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < m;\n"
        "       j += (long long)gridDim.x * blockDim.x) {\n";
  os += "    const long long p = tab0(j);\n";
  os += "    if (p < 0 || p >= P.n) {\n";
  if (s.checksIndex)
    emitFlagIndex(os, 6);
  os += "      continue;\n    }\n";
  if (s.checksIndex && !s.distinctPositions) {
    os += "    bool later = false;\n";
    os += "    for (long long k = m - 1; k > j && !later; --k)\n";
    os += "      later = tab0(k) == p;\n";
    os += "    if (later) continue;\n";
  }
  for (int32_t w = 0; w < s.writes; ++w) {
    std::string out = w ? "P.out" + std::to_string(w) : "P.out";
    std::string in = std::to_string(w + 1);
    os += "    " + out + "[" + out + "_off + p] = P.in" + in + "[at" + in + "(j)];\n";
  }
  os += "  }\n}\n";
}

} // namespace

KernelShape analyzeOpaque(const Kernel &k) {
  KernelShape s;
  s.kind = Kernel::Kind::Opaque;
  s.rank = int32_t(k.domain.size());
  s.opaqueOp = k.opaqueOp;
  for (size_t i = 0; i < k.operands.size(); ++i) {
    s.operandDtypes.push_back(k.operands[i].dtype);
    s.operandRanks.push_back(int32_t(k.operandShapes[i].size()));
  }
  s.outDtype = k.opaqueDtype;
  // Only the generated small product computes consumers where it writes
  // (fusion/epilogue.h); the schedule gives no other op an epilogue but a
  // cuBLAS product's that cuBLASLt computes (fusion/library_epilogue.h),
  // which no code of ours does.
  bool library = k.opaqueOp == OpKind::MatMul && !isSmallProduct(k);
  if (k.hasEpilogue() && library) {
    requireLibraryEpilogue(k);
  } else if (k.hasEpilogue()) {
    if (!isSmallProduct(k) || !k.reduces.empty())
      throw Error(ErrorKind::Internal, "[cuda codegen] an epilogue on " +
                                           std::string(opName(k.opaqueOp)) +
                                           " other than a small product's");
    analyzeElements(k, s);
  }
  switch (k.opaqueOp) {
  case OpKind::CumSum:
  case OpKind::CumProd:
  case OpKind::Sort:
  case OpKind::SortIndex:
  case OpKind::SortedMedian:
    s.flat = k.opaqueInts.empty();
    return s;
  case OpKind::Gather:
  case OpKind::IndexWrite:
    // The integer attribute says the table was computed on the device
    // (ops/fancy_index.h, readsDeviceTable).
    s.checksIndex = !k.opaqueInts.empty() && k.opaqueInts[0] != 0;
    s.distinctPositions = k.opaqueInts.size() > 1 && k.opaqueInts[1] != 0;
    if (k.opaqueOp == OpKind::IndexWrite)
      s.writes = int32_t(k.stores.size());
    return s;
  case OpKind::MatMul:
    // An epilogue's index write at device positions checks them as the
    // index kernel would (the error word and the kernel's tag).
    s.checksIndex = llvm::any_of(s.stores, [](const StoreShape &st) { return st.throughChecked; });
    if (isSmallProduct(k))
      analyzeGemv(k, s);
    return s;
  default:
    if (!isRowOp(k.opaqueOp))
      noImplementation(k.opaqueOp);
    analyzeRow(k, s);
    return s;
  }
}

/// A matrix product for the classes cuBLAS has no gemm for (the
/// integers): a thread per output element, summing over k in the
/// reference's order (ops/matmul.cpp), the batch axes right-aligned and
/// broadcast. The float and complex classes go to cuBLAS instead
/// (graph/cuda/cublas_matmul.h); this kernel computes them too, the same
/// way, where a caller asks for it.
void emitMatmul(const KernelShape &s, const std::string &entry, std::string &os) {
  int32_t ra = s.operandRanks[0], rb = s.operandRanks[1];
  int32_t br = std::max({ra - 2, rb - 2, 0});
  DType acc = matmulAccumulator(s.outDtype);
  std::string accT = cType(acc).str();
  emitKernelOpening(std::to_string(kScanBlock), entry, os);
  os += "  const long long K = P.in0_ext[" + std::to_string(ra - 1) + "];\n";
  os += "  const long long N = " + (ra == 1 ? std::string("1") : "P.in0_ext[" + std::to_string(ra - 2) + "]") + ";\n";
  os += "  const long long M = " + (rb == 1 ? std::string("1") : "P.in1_ext[" + std::to_string(rb - 1) + "]") + ";\n";
  os += "  const long long a_r = " + (ra == 1 ? std::string("0") : "P.in0_s[" + std::to_string(ra - 2) + "]") +
        ", a_c = P.in0_s[" + std::to_string(ra - 1) + "];\n";
  os += "  const long long b_r = P.in1_s[" + std::to_string(rb == 1 ? 0 : rb - 2) + "], b_c = " +
        (rb == 1 ? std::string("0") : "P.in1_s[" + std::to_string(rb - 1) + "]") + ";\n";
  os += "  const " + accT + " alpha = (" + accT + ")(P.alpha);\n";
  os += "  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < P.n;\n"
        "       e += (long long)gridDim.x * blockDim.x) {\n";
  os += "    long long rest = e / M;\n";
  os += "    long long ao = P.in0_off + (rest % N) * a_r, bo = P.in1_off + (e % M) * b_c;\n";
  os += "    rest /= N;\n";
  for (int32_t d = br - 1; d >= 0; --d) {
    int32_t da = d - (br - std::max(ra - 2, 0)), db = d - (br - std::max(rb - 2, 0));
    std::string ea = da >= 0 ? "P.in0_ext[" + std::to_string(da) + "]" : "1LL";
    std::string eb = db >= 0 ? "P.in1_ext[" + std::to_string(db) + "]" : "1LL";
    os += "    {\n      const long long ea = " + ea + ", eb = " + eb + ";\n";
    os += "      const long long c = rest % (ea > eb ? ea : eb);\n";
    os += "      rest /= (ea > eb ? ea : eb);\n";
    if (da >= 0)
      os += "      if (ea != 1) ao += c * P.in0_s[" + std::to_string(da) + "];\n";
    if (db >= 0)
      os += "      if (eb != 1) bo += c * P.in1_s[" + std::to_string(db) + "];\n";
    os += "    }\n";
  }
  os += "    " + accT + " total = (" + accT + ")(0);\n";
  os += "    for (long long p = 0; p < K; ++p)\n";
  os += "      total = cumo_ops::wadd(total, cumo_ops::wmul(" +
        castExpr(s.operandDtypes[0], acc, "P.in0[ao + p * a_c]") + ", " +
        castExpr(s.operandDtypes[1], acc, "P.in1[bo + p * b_r]") + "));\n";
  os += "    P.out[P.out_off + e] = " + castExpr(acc, s.outDtype, "cumo_ops::wmul(alpha, total)") + ";\n";
  os += "  }\n}\n";
}

void emitOpaqueEntry(const KernelShape &s, const std::string &entry, std::string &os) {
  switch (s.opaqueOp) {
  case OpKind::CumSum:
  case OpKind::CumProd:
    return emitScan(s, entry, os);
  case OpKind::Sort:
  case OpKind::SortIndex:
    return emitSort(s, entry, os);
  case OpKind::SortedMedian:
    return emitSortedMedian(s, entry, os);
  case OpKind::Gather:
    return emitGather(s, entry, os);
  case OpKind::IndexWrite:
    return emitIndexWrite(s, entry, os);
  case OpKind::MatMul:
    return s.gemvRows ? emitGemv(s, entry, os) : emitMatmul(s, entry, os);
  default:
    if (!isRowOp(s.opaqueOp))
      noImplementation(s.opaqueOp);
    return emitRowEntry(s, entry, os);
  }
}

LaunchConfig opaqueLaunch(const Kernel &k, const DeviceModel &model) {
  LaunchConfig c;
  switch (k.opaqueOp) {
  case OpKind::CumSum:
  case OpKind::CumProd: {
    int64_t n = k.domainSize();
    int64_t len = k.opaqueInts.empty() ? n
                  : k.domain.empty()   ? 1
                                       : k.domain[k.opaqueInts[0]];
    int64_t lines = len ? n / len : 0;
    c.block = kScanBlock;
    int64_t cap = int64_t(std::max(model.smCount, 1)) * 16;
    c.grid = uint32_t(std::min<int64_t>((lines + kScanBlock - 1) / kScanBlock, cap));
    return c;
  }
  case OpKind::Sort:
  case OpKind::SortIndex:
  case OpKind::SortedMedian: {
    const Shape &in = k.operandShapes[0];
    SortLines lines = sortLinesOf(in, k.opaqueInts);
    int64_t cap = int64_t(std::max(model.smCount, 1)) * 16;
    if (k.opaqueOp == OpKind::SortedMedian) {
      c.block = kScanBlock;
      c.grid = uint32_t(std::min<int64_t>((lines.count + kScanBlock - 1) / kScanBlock, cap));
    } else {
      // Nothing to sort in an empty line.
      c.block = kSortBlock;
      c.grid = lines.length ? uint32_t(std::min<int64_t>(lines.count, cap)) : 0;
    }
    return c;
  }
  case OpKind::MatMul:
    if (isSmallProduct(k))
      return gemvLaunch(k, model);
    [[fallthrough]];
  case OpKind::Gather:
  case OpKind::IndexWrite: {
    // A write's threads are its selections, not the array's elements.
    int64_t n = k.opaqueOp == OpKind::IndexWrite ? numElements(k.operandShapes[0])
                                                 : k.domainSize();
    int64_t cap = int64_t(std::max(model.smCount, 1)) * 16;
    c.block = kScanBlock;
    c.grid = uint32_t(std::min<int64_t>((n + kScanBlock - 1) / kScanBlock, cap));
    return c;
  }
  default:
    if (!isRowOp(k.opaqueOp))
      noImplementation(k.opaqueOp);
    return rowLaunch(k, model);
  }
}

} // namespace cumo::cudagen
