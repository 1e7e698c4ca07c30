// The index reductions: max_index and min_index (flat indices into the
// whole array, as Numo answers them) and argmax and argmin (indices along
// the reduced axes). NaN is skipped and the first of equal extremes wins,
// as in Numo's f_max_index; a row of nothing but NaN answers 0. Each is
// recorded as the reductions and elementwise ops it is made of: the
// extreme, then the least index where an element equals it, so the GPU runs
// the kernels every reduction runs and the answer cannot depend on the
// order the reduction folds in.
#pragma once

#include "core/array.h"

#include "llvm/ADT/ArrayRef.h"

namespace cumo {

enum class IndexReduction : uint8_t { MaxIndex, MinIndex, ArgMax, ArgMin };

/// The method name of `which` ("max_index" ...), for messages.
const char *indexReductionName(IndexReduction which);

/// The index reduction `which` of `a` over `axes` (empty: all). Answers
/// Int32 when every index fits a signed 32-bit integer, else Int64
/// (indexResultType). NaN is skipped, unless `propagateNan` (nan: true),
/// when a line holding one answers the index of its first NaN.
NodeRef indexReductionOp(IndexReduction which, const ArrayHandle &a,
                         llvm::ArrayRef<int64_t> axes, bool keepdims,
                         bool propagateNan = false);

} // namespace cumo
