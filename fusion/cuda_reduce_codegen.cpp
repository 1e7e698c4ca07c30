// CUDA source for reductions: the device helpers every kernel carries
// (shuffles, warp and block folds), the tail of an elementwise kernel with
// full reductions (per-block partials, the last block to arrive folds
// them), and the entries of axis reductions (one thread, warp or block per
// output, chosen by analyzeKernel).
//
// Every fold has a fixed shape for a given launch: no atomics on values,
// no order that depends on which block finishes first. A result can then
// differ from the CPU's only by the order of a float reduction, and never
// between two runs of the same plan.
#include "fusion/cuda_kernel_shape.h"

#include "ops/reference.h"

#include "llvm/Support/ErrorHandling.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace cumo::cudagen {

std::string reduceStepExpr(OpKind op, const std::string &a,
                           const std::string &b) {
  switch (op) {
  case OpKind::Sum:
  case OpKind::Mean: return "cumo_ops::wadd(" + a + ", " + b + ")";
  case OpKind::Prod: return "cumo_ops::wmul(" + a + ", " + b + ")";
  case OpKind::Max: return "cumo_ops::reduce_max(" + a + ", " + b + ")";
  case OpKind::Min: return "cumo_ops::reduce_min(" + a + ", " + b + ")";
  case OpKind::QuantizeScale: return "cumo_ops::reduce_absmax(" + a + ", " + b + ")";
  default: break;
  }
  llvm_unreachable("not a reduction");
}

llvm::StringRef reduceFunctor(OpKind op) {
  switch (op) {
  case OpKind::Sum:
  case OpKind::Mean: return "cumo_k::SumOp()";
  case OpKind::Prod: return "cumo_k::ProdOp()";
  case OpKind::Max: return "cumo_k::MaxOp()";
  case OpKind::Min: return "cumo_k::MinOp()";
  case OpKind::QuantizeScale: return "cumo_k::AbsMaxOp()";
  default: break;
  }
  llvm_unreachable("not a reduction");
}

namespace {
std::string floatBits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "__int_as_float((int)0x%08" PRIx32 "u)", bits);
  return buf;
}
std::string doubleBits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  char buf[64];
  std::snprintf(buf, sizeof(buf),
                "__longlong_as_double((long long)0x%016" PRIx64 "ull)", bits);
  return buf;
}
} // namespace

std::string reduceIdentityExpr(OpKind op, DType acc) {
  // ref::reduceIdentity's value, spelled by its bits: NVRTC has no
  // INFINITY or <limits> without headers.
  return dispatchDType(acc, [&]<DType D, class T>() -> std::string {
    T v = ref::reduceIdentity<T>(op);
    char buf[64];
    if constexpr (kIsNarrowFloatC<T>) {
      std::snprintf(buf, sizeof(buf), "%s::of_bits((unsigned short)0x%04x)",
                    cType(acc).str().c_str(), unsigned(v.bits));
    } else if constexpr (std::is_same_v<T, cumo_ops::scomplex>) {
      return cType(acc).str() + "(" + floatBits(v.re) + ", " + floatBits(v.im) + ")";
    } else if constexpr (std::is_same_v<T, cumo_ops::dcomplex>) {
      return cType(acc).str() + "(" + doubleBits(v.re) + ", " + doubleBits(v.im) +
             ")";
    } else if constexpr (std::is_same_v<T, float>) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      std::snprintf(buf, sizeof(buf), "__int_as_float((int)0x%08" PRIx32 "u)",
                    bits);
    } else if constexpr (std::is_same_v<T, double>) {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      std::snprintf(buf, sizeof(buf),
                    "__longlong_as_double((long long)0x%016" PRIx64 "ull)", bits);
    } else if constexpr (std::is_signed_v<T>) {
      int64_t x = int64_t(v);
      if (x == INT64_MIN)
        std::snprintf(buf, sizeof(buf), "(%s)(-9223372036854775807ll - 1)",
                      cType(acc).str().c_str());
      else
        std::snprintf(buf, sizeof(buf), "(%s)(%" PRId64 "ll)",
                      cType(acc).str().c_str(), x);
    } else {
      std::snprintf(buf, sizeof(buf), "(%s)(%" PRIu64 "ull)",
                    cType(acc).str().c_str(), uint64_t(v));
    }
    return buf;
  });
}

llvm::StringRef devicePreamble() {
  return R"(namespace cumo_k {

// Programmatic dependent launch (sm_90 on): in a CUDA graph a kernel may
// start while the one before it is still running, so its launch and its
// parameter reads overlap that kernel's tail. Every kernel calls this
// before its first access to memory another kernel writes or reads: it
// returns once the kernels before it have completed and their writes are
// visible, and at once outside such a launch.
__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Counts the calling block in at `counter` and answers whether it is the
// last of `blocks` to arrive. One thread calls it, after a barrier that
// follows the block's partials: the atomic is a release (by the barrier,
// of every thread's writes before it) and an acquire (of the other
// blocks' partials, for what the last block reads after its next
// barrier), at GPU scope, where a fence on each side of a plain atomic
// had been. The emulator has neither: its blocks run one after another.
__device__ __forceinline__ bool arrive_last(unsigned int *counter, unsigned int blocks) {
#if defined(__CUDA_ARCH__)
  unsigned int before;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
               : "=r"(before) : "l"(counter) : "memory");
  return before == blocks - 1;
#else
  return atomicAdd(counter, 1u) == blocks - 1;
#endif
}

// A compile-time int passed as a value: a kernel that specializes its
// common launch passes its constants to a generic lambda as these.
template <int N> struct fixed_int { static constexpr int value = N; };

// Row-major unravelling (x >= 0, d > 0): the quotient, and the remainder
// in `rem`. Unsigned 32-bit division is several times cheaper than 64-bit,
// so 64-bit indices take it too when both operands fit.
__device__ __forceinline__ int divmod(int x, int d, int &rem) {
  unsigned int q = (unsigned int)x / (unsigned int)d;
  rem = x - (int)q * d;
  return (int)q;
}
__device__ __forceinline__ long long divmod(long long x, long long d,
                                            long long &rem) {
  if ((((unsigned long long)x | (unsigned long long)d) >> 32) == 0) {
    unsigned int q = (unsigned int)x / (unsigned int)d;
    rem = x - (long long)q * d;
    return (long long)q;
  }
  long long q = x / d;
  rem = x - q * d;
  return q;
}

// Shuffles move 32- and 64-bit words; narrower values travel widened,
// the structs of the sixteen-bit floats and the complex classes by parts.
template <class T>
__device__ __forceinline__ T shfl_down(T v, unsigned int delta) {
  if constexpr (sizeof(T) < 4)
    return (T)__shfl_down_sync(0xffffffffu, (int)v, delta);
  else
    return __shfl_down_sync(0xffffffffu, v, delta);
}
__device__ __forceinline__ cumo_ops::half shfl_down(cumo_ops::half v,
                                                    unsigned int delta) {
  return cumo_ops::half::of_bits(
      (unsigned short)__shfl_down_sync(0xffffffffu, (int)v.bits, delta));
}
__device__ __forceinline__ cumo_ops::bfloat16 shfl_down(cumo_ops::bfloat16 v,
                                                        unsigned int delta) {
  return cumo_ops::bfloat16::of_bits(
      (unsigned short)__shfl_down_sync(0xffffffffu, (int)v.bits, delta));
}
__device__ __forceinline__ cumo_ops::scomplex shfl_down(cumo_ops::scomplex v,
                                                        unsigned int delta) {
  return cumo_ops::scomplex(__shfl_down_sync(0xffffffffu, v.re, delta),
                            __shfl_down_sync(0xffffffffu, v.im, delta));
}
__device__ __forceinline__ cumo_ops::dcomplex shfl_down(cumo_ops::dcomplex v,
                                                        unsigned int delta) {
  return cumo_ops::dcomplex(__shfl_down_sync(0xffffffffu, v.re, delta),
                            __shfl_down_sync(0xffffffffu, v.im, delta));
}

// Lane 0's value, in every lane of the warp (a row's fold, handed to all
// of the row's lanes), by the same parts as shfl_down.
template <class T>
__device__ __forceinline__ T shfl_first(T v) {
  if constexpr (sizeof(T) < 4)
    return (T)__shfl_sync(0xffffffffu, (int)v, 0);
  else
    return __shfl_sync(0xffffffffu, v, 0);
}
__device__ __forceinline__ cumo_ops::half shfl_first(cumo_ops::half v) {
  return cumo_ops::half::of_bits((unsigned short)__shfl_sync(0xffffffffu, (int)v.bits, 0));
}
__device__ __forceinline__ cumo_ops::bfloat16 shfl_first(cumo_ops::bfloat16 v) {
  return cumo_ops::bfloat16::of_bits(
      (unsigned short)__shfl_sync(0xffffffffu, (int)v.bits, 0));
}
__device__ __forceinline__ cumo_ops::scomplex shfl_first(cumo_ops::scomplex v) {
  return cumo_ops::scomplex(__shfl_sync(0xffffffffu, v.re, 0),
                            __shfl_sync(0xffffffffu, v.im, 0));
}
__device__ __forceinline__ cumo_ops::dcomplex shfl_first(cumo_ops::dcomplex v) {
  return cumo_ops::dcomplex(__shfl_sync(0xffffffffu, v.re, 0),
                            __shfl_sync(0xffffffffu, v.im, 0));
}

// A read of another block's partial that the compiler may not cache
// (volatile), member by member for the structs.
template <class T>
__device__ __forceinline__ T vload(const unsigned char *p) {
  return *(const volatile T *)p;
}
template <>
__device__ __forceinline__ cumo_ops::half vload<cumo_ops::half>(
    const unsigned char *p) {
  return cumo_ops::half::of_bits(((const volatile cumo_ops::half *)p)->bits);
}
template <>
__device__ __forceinline__ cumo_ops::bfloat16 vload<cumo_ops::bfloat16>(
    const unsigned char *p) {
  return cumo_ops::bfloat16::of_bits(((const volatile cumo_ops::bfloat16 *)p)->bits);
}
template <>
__device__ __forceinline__ cumo_ops::scomplex vload<cumo_ops::scomplex>(
    const unsigned char *p) {
  const volatile cumo_ops::scomplex *z = (const volatile cumo_ops::scomplex *)p;
  return cumo_ops::scomplex(z->re, z->im);
}
template <>
__device__ __forceinline__ cumo_ops::dcomplex vload<cumo_ops::dcomplex>(
    const unsigned char *p) {
  const volatile cumo_ops::dcomplex *z = (const volatile cumo_ops::dcomplex *)p;
  return cumo_ops::dcomplex(z->re, z->im);
}

// The reduction steps of ref::reduceStep. Each also combines two partial
// results: reduce_max and reduce_min treat NaN (their float identity, "no
// number yet") as absent on either side.
struct SumOp {
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const {
    return cumo_ops::wadd(a, b);
  }
};
struct ProdOp {
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const {
    return cumo_ops::wmul(a, b);
  }
};
struct MaxOp {
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const {
    return cumo_ops::reduce_max(a, b);
  }
};
struct AbsMaxOp {
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const {
    return cumo_ops::reduce_absmax(a, b);
  }
};
// A softmax row's maximum, NaN as absent as in MaxOp: fmax, one
// instruction where MaxOp's comparisons and select take four. The two may
// differ only in the sign of a zero maximum, which exp(x - m) does not see.
struct RowMaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ __forceinline__ double operator()(double a, double b) const { return fmax(a, b); }
};
struct MinOp {
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const {
    return cumo_ops::reduce_min(a, b);
  }
};

// Folds a warp's values into lane 0 (a fixed tree).
template <class A, class Op>
__device__ __forceinline__ A warp_reduce(A v, Op op) {
  for (unsigned int o = 16; o > 0; o >>= 1)
    v = op(v, shfl_down(v, o));
  return v;
}

// Each warp's fold of its values (answered) into its slot of `smem`, then
// the block's barrier: the first half of block_reduce and block_allreduce.
template <class A, class Op>
__device__ __forceinline__ A fold_warps(A v, Op op, A *smem) {
  v = warp_reduce(v, op);
  if ((threadIdx.x & 31u) == 0)
    smem[threadIdx.x >> 5] = v;
  __syncthreads();
  return v;
}

// Folds a block's values into thread 0: each warp, then the warps' results
// in order. `smem` has a slot per warp; every thread must call this.
template <class A, class Op>
__device__ __forceinline__ A block_reduce(A v, Op op, A identity, A *smem) {
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  v = fold_warps(v, op, smem);
  if (warp == 0) {
    v = lane < (blockDim.x >> 5) ? smem[lane] : identity;
    v = warp_reduce(v, op);
  }
  __syncthreads(); // the caller may reuse smem at once
  return v;
}

// block_reduce's fold, in its order, answered to every thread: each warp
// folds the warps' partials itself, where block_reduce's warp 0 did and
// two more barriers handed its result to the rest (the row kernels had
// four barriers a fold). One barrier: `smem` must not be written again
// until every thread has read it, so the row kernels give each fold of a
// row its own slots, in two sets that alternate from row to row (a thread
// writing a set again has passed a barrier that every thread reaches only
// after reading it).
template <class A, class Op>
__device__ __forceinline__ A block_allreduce(A v, Op op, A identity, A *smem) {
  fold_warps(v, op, smem);
  v = (threadIdx.x & 31u) < (blockDim.x >> 5) ? smem[threadIdx.x & 31u] : identity;
  return shfl_first(warp_reduce(v, op));
}

} // namespace cumo_k

)";
}

std::string foldFinishExpr(OpKind op, DType accumulator, const std::string &total,
                           const std::string &count) {
  std::string a = cType(accumulator).str();
  if (op == OpKind::Mean)
    return "cumo_ops::div(" + total + ", " +
           (isComplex(accumulator) ? convertExpr(DType::Int64, accumulator, count)
                                   : "(" + a + ")" + count) +
           ")";
  if (op == OpKind::QuantizeScale)
    return "cumo_ops::div(" + total + ", (" + a + ")" + std::to_string(kQuantizeLevels) + ")";
  return total;
}

namespace {

/// Mean's division (QuantizeScale's by 127), then the conversion to the stored dtype (the CPU's
/// finishReductions), written to output `o` of reduction `i`.
void emitFinish(const KernelShape &s, size_t i, const std::string &acc,
                const std::string &o, std::string &os, int indent) {
  const ReduceShape &r = s.reduces[i];
  std::string a = cType(r.accumulator).str();
  std::string rd = "P.rd" + std::to_string(i);
  std::string x = foldFinishExpr(r.op, r.accumulator, acc, rd + "_count");
  line(os, indent, "{");
  line(os, indent + 2, "const " + a + " m = " + x + ";");
  line(os, indent + 2, rd + "[" + o + "] = " + castExpr(r.accumulator, r.dtype, "m") +
                           ";");
  line(os, indent, "}");
}

std::string partialSlot(const KernelShape &s, size_t i,
                        const std::string &block) {
  llvm::SmallVector<DType, 2> accs;
  for (const ReduceShape &r : s.reduces)
    accs.push_back(r.accumulator);
  return "(P.partials + ((unsigned long long)" + std::to_string(i) +
         " * gridDim.x + " + block + ") * " +
         std::to_string(partialBytes(accs)) + ")";
}

/// Declares `f` and folds `bound` partials into it in the order a
/// reducing kernel's last block folds them: thread t takes partials t,
/// t + blockDim.x, ... in order (`partialAt` reads partial `b`), then the
/// block tree (`red`: its shared slots). Both the last block
/// (emitGridReduceTail) and a fold in a later kernel (emitFolds) emit it,
/// so that the two give the same bits.
void emitPartialsFold(OpKind op, DType accumulator, const std::string &index,
                      const std::string &bound, const std::string &partialAt,
                      const std::string &red, std::string &os) {
  std::string id = reduceIdentityExpr(op, accumulator);
  line(os, 4, cType(accumulator).str() + " f = " + id + ";");
  line(os, 4, "for (" + index + " b = threadIdx.x; b < " + bound + "; b += blockDim.x)");
  line(os, 6, "f = " + reduceStepExpr(op, "f", partialAt) + ";");
  line(os, 4, "f = cumo_k::block_reduce(f, " + reduceFunctor(op).str() + ", " + id + ", " +
                  red + ");");
}

} // namespace

void emitGridReduceTail(const KernelShape &s, std::string &os) {
  // Each block folds its threads, leaves one partial per reduction, and
  // counts itself in; the last to arrive folds the partials of every block
  // (thread t takes blocks t, t + blockDim.x, ... in order, then the block
  // tree), so the answer depends on the grid, never on timing. A deferred
  // reduction's partials go to its own buffer instead, for the kernel that
  // reads it to fold (emitFolds), and block 0 fills the slots past the
  // grid with the identity, which leaves that fold the same.
  line(os, 2, "// Full reductions: block partials, folded by the last block.");
  bool foldedHere = false;
  for (size_t i = 0; i < s.reduces.size(); ++i) {
    const ReduceShape &r = s.reduces[i];
    std::string a = cType(r.accumulator).str(), n = std::to_string(i);
    line(os, 2, "__shared__ " + a + " red" + n + "[32];");
    line(os, 2, "acc" + n + " = cumo_k::block_reduce(acc" + n + ", " +
                    reduceFunctor(r.op).str() + ", " +
                    reduceIdentityExpr(r.op, r.accumulator) + ", red" + n +
                    ");");
    foldedHere |= !r.deferred;
  }
  if (foldedHere)
    line(os, 2, "__shared__ bool last;");
  line(os, 2, "if (threadIdx.x == 0) {");
  for (size_t i = 0; i < s.reduces.size(); ++i) {
    std::string a = cType(s.reduces[i].accumulator).str(), n = std::to_string(i);
    if (s.reduces[i].deferred)
      line(os, 4, "P.pd" + n + "[blockIdx.x] = acc" + n + ";");
    else
      line(os, 4, "*(" + a + " *)" + partialSlot(s, i, "blockIdx.x") + " = acc" + n + ";");
  }
  if (foldedHere)
    line(os, 4, "last = cumo_k::arrive_last(P.counter, gridDim.x);");
  line(os, 2, "}");
  for (size_t i = 0; i < s.reduces.size(); ++i) {
    const ReduceShape &r = s.reduces[i];
    if (!r.deferred)
      continue;
    std::string n = std::to_string(i);
    line(os, 2, "if (blockIdx.x == 0)");
    line(os, 4, "for (long long b = (long long)gridDim.x + threadIdx.x; b < P.pd" + n +
                    "_n; b += blockDim.x)");
    line(os, 6, "P.pd" + n + "[b] = " + reduceIdentityExpr(r.op, r.accumulator) + ";");
  }
  if (!foldedHere)
    return;
  line(os, 2, "__syncthreads();");
  line(os, 2, "if (!last)");
  line(os, 4, "return;");
  for (size_t i = 0; i < s.reduces.size(); ++i) {
    const ReduceShape &r = s.reduces[i];
    if (r.deferred)
      continue;
    std::string a = cType(r.accumulator).str(), n = std::to_string(i);
    line(os, 2, "{");
    std::string partial =
        isStructType(r.accumulator)
            ? "cumo_k::vload<" + a + ">(" + partialSlot(s, i, "b") + ")"
            : "*(volatile " + a + " *)" + partialSlot(s, i, "b");
    emitPartialsFold(r.op, r.accumulator, "unsigned int", "gridDim.x", partial, "red" + n, os);
    line(os, 4, "if (threadIdx.x == 0)");
    emitFinish(s, i, "f", "0", os, 6);
    line(os, 2, "}");
  }
  // Left at zero for the next launch (the executor zeroes it only once).
  line(os, 2, "if (threadIdx.x == 0)");
  line(os, 4, "*P.counter = 0u;");
}

void emitFoldValues(const KernelShape &s, std::string &os) {
  // At file scope, so that the element loops read them as they are.
  for (size_t i = 0; i < s.folds.size(); ++i)
    os += "__shared__ " + cType(s.folds[i].dtype).str() + " fold" + std::to_string(i) + ";\n";
  if (!s.folds.empty())
    os += "\n";
}

void emitFolds(const KernelShape &s, std::string &os) {
  // Every block folds each earlier reduction's partials as that kernel's
  // last block would have (emitGridReduceTail): thread t takes slots t,
  // t + blockDim.x, ... in order, then the block tree, then the finish.
  // Block 0 stores the result for whatever reads it after this kernel.
  for (size_t i = 0; i < s.folds.size(); ++i) {
    const FoldShape &f = s.folds[i];
    std::string a = cType(f.accumulator).str(), n = std::to_string(i);
    line(os, 2, "__shared__ " + a + " fold_red" + n + "[32];");
    line(os, 2, "{");
    emitPartialsFold(f.op, f.accumulator, "long long", "P.fd" + n + "_n", "P.fd" + n + "[b]",
                     "fold_red" + n, os);
    line(os, 4, "if (threadIdx.x == 0) {");
    line(os, 6, "const " + a + " m = " +
                    foldFinishExpr(f.op, f.accumulator, "f", "P.fd" + n + "_count") + ";");
    line(os, 6, "fold" + n + " = " + castExpr(f.accumulator, f.dtype, "m") + ";");
    line(os, 6, "if (blockIdx.x == 0)");
    line(os, 8, "*P.fd" + n + "_out = fold" + n + ";");
    line(os, 4, "}");
    line(os, 2, "}");
  }
  if (!s.folds.empty())
    line(os, 2, "__syncthreads();");
}

void emitAxisReduceEntry(const KernelShape &s, llvm::StringRef entry,
                         std::string &os) {
  llvm::SmallVector<int32_t, 4> kept, reduced;
  for (int32_t d = 0; d < s.rank; ++d)
    (llvm::is_contained(s.reduceAxes, d) ? reduced : kept).push_back(d);

  os += "template <class I>\n__device__ __forceinline__ void cumo_loop("
        "const CumoParams &P) {\n";
  std::string first, step, reducedFirst, reducedStep;
  switch (s.strategy) {
  case ReduceStrategy::Thread:
    // One thread per output folds in the CPU's order.
    first = "(I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x";
    step = "(I)gridDim.x * (I)blockDim.x";
    reducedFirst = "0";
    reducedStep = "1";
    break;
  case ReduceStrategy::Warp:
    line(os, 2, "const unsigned int lane = threadIdx.x & 31u;");
    first = "((I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x) >> 5";
    step = "((I)gridDim.x * (I)blockDim.x) >> 5";
    reducedFirst = "(I)lane";
    reducedStep = "32";
    break;
  case ReduceStrategy::Block:
    for (size_t i = 0; i < s.reduces.size(); ++i)
      line(os, 2, "__shared__ " + cType(s.reduces[i].accumulator).str() +
                      " red" + std::to_string(i) + "[32];");
    first = "(I)blockIdx.x";
    step = "(I)gridDim.x";
    reducedFirst = "(I)threadIdx.x";
    reducedStep = "(I)blockDim.x";
    break;
  default:
    llvm_unreachable("an axis reduction without an axis strategy");
  }
  line(os, 2, "for (I o = " + first + "; o < (I)P.outs; o += " + step + ") {");
  emitDomainCoords(s, os, 4);
  emitUnravel(os, 4, "o", kept);
  for (size_t i = 0; i < s.reduces.size(); ++i) {
    const ReduceShape &r = s.reduces[i];
    line(os, 4, cType(r.accumulator).str() + " acc" + std::to_string(i) +
                    " = " + reduceIdentityExpr(r.op, r.accumulator) + ";");
  }
  line(os, 4, "for (I jr = " + reducedFirst + "; jr < (I)P.len; jr += " +
                  reducedStep + ") {");
  emitUnravel(os, 6, "jr", reduced);
  // The flat domain index, for loads that address linearly.
  std::string flat = s.rank ? "c0_0" : "0";
  for (int32_t d = 1; d < s.rank; ++d)
    flat = "(" + flat + ") * " + indexParam("ext[" + std::to_string(d) + "]") +
           " + c0_" + std::to_string(d);
  line(os, 6, "const I idx = " + flat + ";");
  emitElementBody(s, os, 6);
  line(os, 4, "}");
  for (size_t i = 0; i < s.reduces.size(); ++i) {
    const ReduceShape &r = s.reduces[i];
    std::string n = std::to_string(i), acc = "acc" + n;
    switch (s.strategy) {
    case ReduceStrategy::Thread:
      emitFinish(s, i, acc, "o", os, 4);
      break;
    case ReduceStrategy::Warp:
      line(os, 4, acc + " = cumo_k::warp_reduce(" + acc + ", " +
                      reduceFunctor(r.op).str() + ");");
      line(os, 4, "if (lane == 0)");
      emitFinish(s, i, acc, "o", os, 6);
      break;
    default:
      line(os, 4, acc + " = cumo_k::block_reduce(" + acc + ", " +
                      reduceFunctor(r.op).str() + ", " +
                      reduceIdentityExpr(r.op, r.accumulator) + ", red" + n +
                      ");");
      line(os, 4, "if (threadIdx.x == 0)");
      emitFinish(s, i, acc, "o", os, 6);
      break;
    }
  }
  line(os, 2, "}");
  os += "}\n\n";

  emitEntryHead(entry, os);
  emitIndexDispatch("cumo_loop", "P", os);
  os += "}\n";
}

size_t partialBytes(llvm::ArrayRef<DType> accumulators) {
  for (DType a : accumulators)
    if (sizeOf(a) > kPartialBytes)
      return kWidePartialBytes;
  return kPartialBytes;
}

} // namespace cumo::cudagen
