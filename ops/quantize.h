// quantize_symmetric (the spec's "Fused Operations"): each row of x along
// its last axis to Int8 with one scale per row, scale = max(|x|) / 127 and
// xq = round(x / scale), ties away from zero. A row of zeros answers 0 for
// both; a row holding an infinity or a NaN answers it in its scale and
// zeros in the row. The scale is in the class the row accumulates in
// (SFloat for HFloat and BFloat, x's own otherwise), and so is the
// division. Recorded as the ops it is made of: the row's absmax (a
// reduction keeping NaN) and one elementwise op on x and the row's scale
// (ops/portable_ops.h's quantize_symmetric_element), so it runs as two
// kernels, a reduction and an elementwise one.
#pragma once

#include "core/array.h"

#include <utility>

namespace cumo {

/// {xq, scale}: xq an Int8 array shaped like x, scale shaped like x
/// without its last axis.
std::pair<NodeRef, NodeRef> quantizeSymmetricOp(const ArrayHandle &x);

} // namespace cumo
