// Scans: cumsum and cumprod, along one axis, or over every element in
// row-major order (keeping the shape) when no axis is given, as Numo does.
#pragma once

#include "core/array.h"
#include "ops/opaque.h"

#include <optional>

namespace cumo {

/// The scan `op` (CumSum or CumProd) of `a` along `axis` (negative counts
/// from the end), or over all elements when there is none.
NodeRef scanOp(OpKind op, const ArrayHandle &a, std::optional<int64_t> axis);

/// The dtype a scan accumulates in: cumsum of the sixteen-bit floats widens
/// to single precision (the spec's Half Precision); cumprod never widens.
DType scanAccumulator(OpKind op, DType t);

/// The reference implementation (OpaqueCall: ints = {axis} or {}).
void scanReference(const OpaqueCall &call);

} // namespace cumo
