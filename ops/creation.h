// Arrays made from nothing (constants, sequences, random numbers) or from
// host bytes, and writes of a whole value into an array or a view of one.
#pragma once

#include "core/array.h"

#include <cstddef>

namespace cumo {

/// Checks a shape given by the caller (non-negative extents).
void checkShape(std::string_view op, llvm::ArrayRef<int64_t> shape);

NodeRef fillNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &v);
/// start + step * i over the row-major index i.
NodeRef seqNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &start,
                const Scalar &step);
/// Uniform in [low, high) (integers: low..high-1), from a counter-based
/// generator, so both executors give the same numbers for the same seed.
NodeRef randNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &low,
                 const Scalar &high);
/// Uninitialized memory, as Numo's new gives.
NodeRef emptyNode(DType dtype, llvm::ArrayRef<int64_t> shape);
/// A materialized array holding `bytes` (row-major elements of `dtype`).
NodeRef uploadNode(DType dtype, llvm::ArrayRef<int64_t> shape, const void *bytes);

/// Seeds the generator rand draws from (Cumo::NArray.srand).
void seedRandom(uint64_t seed);

/// Writes `value` (already of the target's shape and dtype) into what
/// `target` sees: the whole storage becomes `value`, or a slice of it is
/// updated.
void assignValue(ArrayHandle &target, NodeRef value, std::string_view op);

} // namespace cumo
