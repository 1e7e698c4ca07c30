// Reductions: sum, prod, max, min, mean over some axes (all by default),
// answering a 0-dim array when everything is reduced (dot is in ops/matmul.h).
#pragma once

#include "core/array.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <string_view>

namespace cumo {

/// The class a reduction answers for an input of class `t`.
DType reductionResultType(OpKind op, DType t);

/// `axes` of `a` checked (in range, none twice, `a` not empty; errors name
/// `op`), made non-negative and sorted; every axis when `axes` is empty.
llvm::SmallVector<int64_t, 4> reductionAxes(std::string_view op, const ArrayHandle &a,
                                            llvm::ArrayRef<int64_t> axes);

/// `op` over `axes` of `a` (empty: every axis; negative axes count from
/// the end). With `keepdims` the reduced axes stay with length one.
NodeRef reduceOp(OpKind op, const ArrayHandle &a, llvm::ArrayRef<int64_t> axes,
                 bool keepdims);

} // namespace cumo
