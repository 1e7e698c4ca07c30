// CUDA implementations of opaque ops, generated like fused kernels: one
// parameter block (cuda_params.cpp's opaque branch), sources that depend
// only on structure, so they go into CUDA graphs and replay as the others
// do. Each computes what the op's reference in ops/ computes, in the same
// order, so the two agree bit for bit.
#include "fusion/cuda_kernel_shape.h"

#include "core/error.h"
#include "ops/scan.h"

namespace cumo::cudagen {

namespace {

constexpr uint32_t kScanBlock = 128;

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
  os += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kScanBlock) +
        ") " + entry + "(const unsigned char *__restrict__ params) {\n";
  os += "  const CumoParams &P = *reinterpret_cast<const CumoParams *>(params);\n";
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

} // namespace

KernelShape analyzeOpaque(const Kernel &k) {
  KernelShape s;
  s.kind = Kernel::Kind::Opaque;
  s.rank = int32_t(k.domain.size());
  s.opaqueOp = k.opaqueOp;
  for (size_t i = 0; i < k.operandLoads.size(); ++i) {
    s.operandDtypes.push_back(k.loads[k.operandLoads[i]].dtype);
    s.operandRanks.push_back(int32_t(k.operandShapes[i].size()));
  }
  s.outDtype = k.stores[0].dtype;
  switch (k.opaqueOp) {
  case OpKind::CumSum:
  case OpKind::CumProd:
    s.flat = k.opaqueInts.empty();
    return s;
  default:
    noImplementation(k.opaqueOp);
  }
}

void emitOpaqueEntry(const KernelShape &s, const std::string &entry, std::string &os) {
  switch (s.opaqueOp) {
  case OpKind::CumSum:
  case OpKind::CumProd:
    return emitScan(s, entry, os);
  default:
    noImplementation(s.opaqueOp);
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
  default:
    noImplementation(k.opaqueOp);
  }
}

} // namespace cumo::cudagen
