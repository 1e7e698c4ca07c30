// The nan: true reductions, Numo's _nan functions (numo/types/float_macro.h):
// sum, prod and mean skip NaN; max and min answer NaN for a line holding
// one (by default they skip it); var, stddev and rms fold the numbers
// only. They are recorded as the ops they are made of (nan_to and nan_if
// of ops/portable_ops.h, isnan, and the plain reductions), so they fuse
// like any written-out formula. Integer classes hold no NaN: the plain op.
#pragma once

#include "core/array.h"
#include "ops/statistics.h"

#include "llvm/ADT/ArrayRef.h"

namespace cumo {

/// sum, prod, mean, max or min of `a` over `axes` with nan: true.
NodeRef nanReduceOp(OpKind op, const ArrayHandle &a, llvm::ArrayRef<int64_t> axes,
                    bool keepdims);

/// var, stddev or rms over the numbers of `a` (statisticOp's classes).
NodeRef nanStatisticOp(Statistic which, const ArrayHandle &a,
                       llvm::ArrayRef<int64_t> axes, bool keepdims);

} // namespace cumo
