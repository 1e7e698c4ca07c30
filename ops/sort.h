// Sorts: sort, sort_index and median, along one axis or over every element
// in row-major order (keeping the shape) when no axis is given, as Numo
// does. Each is an opaque op whose line order is sort_less
// (ops/portable_ops.h): a total order, so the CPU reference and the CUDA
// kernels answer the same bits. NaN sorts last, as Numo's sort puts it;
// sort_index breaks ties by position (a stable sort). median is the sort
// followed by an op that reads each sorted line's middle.
#pragma once

#include "core/array.h"
#include "ops/opaque.h"

#include <optional>

namespace cumo {

/// `a` sorted along `axis`, or over all elements.
NodeRef sortOp(const ArrayHandle &a, std::optional<int64_t> axis);

/// The flat (row-major) indices of `a`'s elements in sorted order along
/// `axis`, or over all elements: Int32, or Int64 past 2**32 elements.
NodeRef sortIndexOp(const ArrayHandle &a, std::optional<int64_t> axis);

/// The median along `axis` (or of all elements): NaN is ignored, unless
/// `propagateNan`, when a line holding one answers NaN; an even count
/// averages the two middle elements in the class's arithmetic.
NodeRef medianOp(const ArrayHandle &a, std::optional<int64_t> axis,
                 bool keepdims, bool propagateNan);

/// The reference implementations (OpaqueCall: ints = {axis} or {}; the
/// median's scalar is 1 when it propagates NaN).
void sortReference(const OpaqueCall &call);

/// How many elements a line of the call's operand holds, and how many lines.
struct SortLines {
  int64_t length = 0;
  int64_t count = 0;
};
SortLines sortLinesOf(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> ints);

} // namespace cumo
