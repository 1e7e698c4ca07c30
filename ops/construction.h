// Construction beyond fill, seq and rand: eye, logseq (Numo's logspace)
// and rand_norm, each built from existing nodes (fills, sequences, uniform
// generators, elementwise math and slice writes).
#pragma once

#include "core/array.h"

namespace cumo {

/// a.eye(value, offset): `value` on the diagonal `offset` of the last two
/// axes (above the main one when positive), zero elsewhere; a zero fill
/// and a write into the diagonal view. DimensionError below two axes,
/// ArgumentError for an offset past the axes, as Numo raises.
void eyeInto(ArrayHandle &a, const Scalar &value, int64_t offset);

/// base ** (begin + i * step) over the row-major index i, in the float
/// class `dtype` (Numo's logseq).
NodeRef logseqNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &begin,
                   const Scalar &step, const Scalar &base);

/// Normal random numbers of mean `mu` and standard deviation `sigma`, in
/// the float class `dtype`: the Box-Muller transform of two uniform draws
/// of the counter-based generator, sqrt(-2 log(1 - u1)) * cos(2 pi u2),
/// computed in `dtype`. Both executors give the same numbers for a seed.
NodeRef randNormNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &mu,
                     const Scalar &sigma);

} // namespace cumo
