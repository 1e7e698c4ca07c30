// An affine map between coordinate spaces: in[k] = offset[k] + sum_d
// matrix[k][d] * out[d]. Slices, transposes, broadcasts, new axes and
// integer indices are all affine, so a chain of them composes into one map
// and a fused kernel addresses every load with one dot product.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace cumo {

struct AffineMap {
  int64_t inRank = 0;  ///< rows: coordinates of the space mapped into
  int64_t outRank = 0; ///< columns: coordinates of the space mapped from
  llvm::SmallVector<int64_t, 16> matrix; ///< row-major, inRank x outRank
  llvm::SmallVector<int64_t, 4> offset;  ///< inRank entries

  static AffineMap identity(int64_t rank);
  /// The map from coordinates of `outShape` to those of `inShape` that
  /// numpy broadcasting implies (right-aligned; axes of length one read 0).
  static AffineMap broadcast(llvm::ArrayRef<int64_t> inShape,
                             llvm::ArrayRef<int64_t> outShape);

  int64_t at(int64_t k, int64_t d) const { return matrix[k * outRank + d]; }
  int64_t &at(int64_t k, int64_t d) { return matrix[k * outRank + d]; }
  bool isIdentity() const;

  /// this ∘ inner: first `inner` (from its out space to its in space), then
  /// this one. Requires inner.inRank == outRank.
  AffineMap compose(const AffineMap &inner) const;

  /// The strides and offset that address a buffer laid out with `strides`
  /// and `offset` over this map's in-space, in terms of its out-space.
  void applyToLayout(llvm::ArrayRef<int64_t> strides, int64_t offset,
                     llvm::SmallVectorImpl<int64_t> &outStrides,
                     int64_t &outOffset) const;

  bool operator==(const AffineMap &o) const {
    return inRank == o.inRank && outRank == o.outRank && matrix == o.matrix &&
           offset == o.offset;
  }
  /// A hash of the whole map, values included (for CSE inside one kernel).
  uint64_t hash() const;
};

} // namespace cumo
