// The nan: true reductions, Numo's _nan functions (numo/types/float_macro.h):
// sum, prod and mean skip NaN; max and min answer NaN for a line holding
// one (by default they skip it); var, stddev and rms fold the numbers
// only. They are recorded as the ops they are made of (nan_to and nan_if
// of ops/portable_ops.h, isnan, and the plain reductions), so they fuse
// like any written-out formula. Integer classes hold no NaN: the plain op.
// cumsum, cumprod and mulsum follow Numo's m_cumsum_nan and m_mulsum_nan:
// a scan skips NaN once it holds a number (a prefix of NaN alone stays
// NaN), and mulsum skips the products with a NaN factor.
#pragma once

#include "core/array.h"
#include "ops/statistics.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>

namespace cumo {

/// sum, prod, mean, max or min of `a` over `axes` with nan: true.
NodeRef nanReduceOp(OpKind op, const ArrayHandle &a, llvm::ArrayRef<int64_t> axes,
                    bool keepdims);

/// var, stddev or rms over the numbers of `a` (statisticOp's classes).
NodeRef nanStatisticOp(Statistic which, const ArrayHandle &a,
                       llvm::ArrayRef<int64_t> axes, bool keepdims);

/// cumsum or cumprod of `a` along `axis` (scanOp's) with nan: true.
NodeRef nanScanOp(OpKind op, const ArrayHandle &a, std::optional<int64_t> axis);

/// mulsum of `a` and `b` over `axes` with nan: true.
NodeRef nanMulsumOp(const ArrayHandle &a, const Operand &b, llvm::ArrayRef<int64_t> axes,
                    bool keepdims);

} // namespace cumo
