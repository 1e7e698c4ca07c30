// Matrix products: numpy's matmul (ops/matmul_layout.h has the shapes),
// Numo's dot and gemm. One opaque MatMul node computes alpha * (a @ b):
// cuBLAS on the GPU for the float and complex classes (the sixteen-bit
// floats accumulate in single precision and round once, so alpha scales
// the accumulator before the rounding, as the spec's gemm example needs),
// a generated kernel for the integers, and the reference below on the CPU.
// An operand whose core cuBLAS cannot read where it lies is copied once at
// the call (Stats::matmul_copies counts them); a transposed view is not.
#pragma once

#include "core/array.h"
#include "core/scalar.h"
#include "ops/opaque.h"

#include <string_view>

namespace cumo {

/// alpha * (a @ b) with numpy's semantics; `op` names the method in
/// messages. Both operands meet at their promoted class.
NodeRef matmulOp(std::string_view op, const ArrayHandle &a, const ArrayHandle &b,
                 const Scalar &alpha = Scalar::ofInt(1));

/// Numo's dot: matmul, except that two vectors answer their inner product
/// as a fusable reduction (the CG solver's (p * ap).sum).
NodeRef dotOp(const ArrayHandle &a, const ArrayHandle &b);

/// gemm: alpha * (a @ b) + beta * c, c (when given) of the product's shape.
NodeRef gemmOp(const ArrayHandle &a, const ArrayHandle &b, const Scalar &alpha,
               const Scalar &beta, const ArrayHandle *c);

/// The class a product of class `t` accumulates in: single precision for
/// the sixteen-bit floats, the class itself otherwise (integers wrap, as
/// numpy's do).
DType matmulAccumulator(DType t);

/// Rows of the small operand a small product has at most.
constexpr int64_t kMaxSmallRows = 16;
/// Outputs of a small product, its whole batch, at most.
constexpr int64_t kMaxSmallOutputs = int64_t(1) << 26;

/// Whether a product of class `t` of operands shaped `a` and `b` is small:
/// a few rows (up to kMaxSmallRows, or a vector) times one matrix or
/// vector, or a batch of such matrices by matrices (decode's attention:
/// one query row by each head's keys), a real float class, k > 0, at most
/// kMaxSmallOutputs outputs. The GPU computes these with
/// a generated matrix-vector kernel (fusion/cuda_gemv_codegen.cpp) rather
/// than cuBLAS, and so fusion can run their elementwise consumers inside
/// it (fusion/epilogue.h): one rule for the schedule and the executors.
bool isSmallProduct(DType t, llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// CUMO_ALLOW_TF32: SFloat and SComplex products on the tensor cores as
/// TF32 (off by default: single precision bit for bit). Read once.
bool allowTf32();

/// The reference implementation: each output the sum over k in order.
void matmulReference(const OpaqueCall &call);

} // namespace cumo
