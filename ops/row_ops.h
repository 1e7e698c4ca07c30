// The fused row operations of the spec's "Fused Operations": layer_norm,
// rms_norm and softmax along the last axis, each an opaque op that runs as
// one row-wise kernel (fusion/cuda_row_codegen.cpp) with the spec's
// numerics: every class accumulates in single precision (double for
// DFloat) and rounds once at the end; layer_norm and rms_norm divide by the
// row length; softmax subtracts the row's maximum before exponentiating.
// The CPU reference below folds each row in the kernels' order
// (ops/row_layout.h), so the two executors agree bit for bit up to the
// libraries' exp.
#pragma once

#include "core/array.h"
#include "ops/opaque.h"

namespace cumo {

/// (x - mean) / sqrt(var + eps) * gamma + beta along the last axis.
NodeRef layerNormOp(const ArrayHandle &x, const ArrayHandle &gamma, const ArrayHandle &beta,
                    double eps);

/// x / sqrt(mean(x * x) + eps) * gamma along the last axis.
NodeRef rmsNormOp(const ArrayHandle &x, const ArrayHandle &gamma, double eps);

/// exp(x - max) / sum(exp(x - max)) along the last axis.
NodeRef softmaxOp(const ArrayHandle &x);

/// Checks the receiver of a row operation: a float class with a last axis.
void checkRows(std::string_view op, const ArrayHandle &x);

/// The class a row operation of class `t` accumulates in.
DType rowAccumulator(DType t);

/// The reference implementation (operands x, gamma, beta as the op has
/// them; the scalar is eps).
void rowOpReference(const OpaqueCall &call);

} // namespace cumo
