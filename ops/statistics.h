// Statistics built from reductions, as Numo defines them
// (numo/types/real_accum.h): var divides the sum of |x - mean|^2 by n - 1,
// stddev is its square root, rms is sqrt(sum(|x|^2) / n), ptp is max - min,
// minmax answers both, mulsum is the sum of a product. They are recorded as
// the ops they are made of, so fusion folds them like any written-out
// formula (var is two kernels: the mean, then the squared deviations).
#pragma once

#include "core/array.h"
#include "ops/operand.h"

#include "llvm/ADT/ArrayRef.h"

#include <utility>

namespace cumo {

enum class Statistic : uint8_t { Var, Stddev, Rms };

/// The method name of `which` ("var", "stddev", "rms"), for messages.
const char *statisticName(Statistic which);

/// var, stddev or rms of `a` over `axes` (empty: all). Float and complex
/// classes only (Numo has them for no other); the answer is the real class
/// of `a`. HFloat and BFloat compute in single precision and round once
/// (the spec's Half Precision: a variance past 65504 saturates, its square
/// root does not).
NodeRef statisticOp(Statistic which, const ArrayHandle &a,
                    llvm::ArrayRef<int64_t> axes, bool keepdims);

/// |x|^2 in x's real class: x * x for a real x (exactly |x| * |x|), abs
/// then the square for a complex one, as Numo's m_square(m_abs(x)).
NodeRef absSquaredOf(const NodeRef &x);

/// max - min over `axes`, in `a`'s class; NaN for a line holding one
/// when `propagateNan` (nan: true), else NaN is skipped.
NodeRef ptpOp(const ArrayHandle &a, llvm::ArrayRef<int64_t> axes, bool keepdims,
              bool propagateNan = false);

/// (min, max) over `axes`, NaN as ptpOp treats it.
std::pair<NodeRef, NodeRef> minmaxOp(const ArrayHandle &a, llvm::ArrayRef<int64_t> axes,
                                     bool keepdims, bool propagateNan = false);

/// a * b (broadcast; b an array or a host number) for a mulsum over `axes`,
/// both checked as mulsum checks them.
NodeRef mulsumProduct(const ArrayHandle &a, const Operand &b, llvm::ArrayRef<int64_t> axes);

/// The sum of a * b (broadcast) over `axes`.
NodeRef mulsumOp(const ArrayHandle &a, const Operand &b, llvm::ArrayRef<int64_t> axes,
                 bool keepdims);

} // namespace cumo
