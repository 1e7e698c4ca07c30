// The index reductions: max_index and min_index (flat indices into the
// whole array, as Numo answers them) and argmax and argmin (indices along
// the reduced axes). NaN is skipped and the first of equal extremes wins,
// as in Numo's f_max_index; a row of nothing but NaN answers 0.
//
// Lines up to kMaxOneRowLength (fusion/row_groups.h) are recorded as the
// reductions and elementwise ops they are made of: the extreme, then the
// least index where an element equals it (where a row group takes them,
// one kernel with a block a row). A longer line is one node (OpKind::ArgMax
// or ArgMin) whose kernel folds pairs (value, index) over many blocks a
// line, and the line's splits in its last block: one kernel where the
// reductions took three (the decode's argmax over a vocabulary of 50257).
// Neither answer depends on the order a fold meets the elements in: both
// pick the least index among equal extremes.
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

/// The lines of an ArgMax or ArgMin node's operand of `shape` over
/// `reducedAxes`: a line's elements are its reduced coordinates in
/// row-major order, the lines its kept ones'.
struct ArgLines {
  int64_t count = 1;  ///< lines
  int64_t length = 1; ///< elements a line
};
ArgLines argLinesOf(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> reducedAxes);

struct OpaqueCall;
/// Computes an ArgMax or ArgMin node on the host (the CPU executor, and
/// the reference the CUDA kernel is compared with). Its integer
/// attributes: flat (1: max_index's flat index into the whole array), then
/// the reduced axes; its scalar: nan: true.
void argReduceReference(const OpaqueCall &call);

} // namespace cumo
