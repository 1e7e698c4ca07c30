// How a row-wise kernel (layer_norm, rms_norm, softmax) spreads one row over
// threads, as data both executors read: the CUDA kernels are laid out so
// (fusion/cuda_row_codegen.cpp), and the CPU reference folds each row's
// sums in the same order, so the two agree bit for bit.
//
// A row of n elements is cut into groups of `group` consecutive elements
// (16 bytes of the stored class: one vector load). Group g goes to lane
// g % lanes, which folds its groups in order, each group's elements in
// order; then the lanes are folded by the warp tree (32 lanes: a warp per
// row) or the block tree (more: a block per row) of fusion/reduce_order.h.
#pragma once

#include "core/dtype.h"
#include "core/op_kind.h"

#include <cstdint>

namespace cumo {

/// Groups a lane of a block-a-row layout aims at, unless told otherwise
/// (rowLayoutFor): enough bytes in flight per thread, few enough threads
/// idle at the row's end.
constexpr int64_t kRowGroupsPerLane = 4;

struct RowLayout {
  int64_t lanes = 32;   ///< threads per row: 32 (a warp) or a block's
  int64_t group = 1;    ///< consecutive elements a lane takes at a time
  /// Groups a lane can hold in registers between the row's passes (the
  /// kernel's cache, the same for every row length it fits); 0 when the
  /// row is too long to hold and every pass reads it again.
  int64_t cachedGroups = 0;
  bool warpPerRow() const { return lanes == 32; }
};

/// The layout of a row of `n` elements of class `t`, accumulated in `acc`.
RowLayout rowLayout(int64_t n, DType t, DType acc);

/// The layout of row op `op`'s own kernel over `rows` rows of `n`
/// elements (the explicit layer_norm, rms_norm and softmax; the CPU
/// reference's too): rowLayout's, but for many BFloat layer_norm or
/// rms_norm rows that a warp would hold at more than three groups a lane,
/// a block of 64 lanes of two groups (its kernel then reads each next row
/// ahead, fusion/cuda_row_codegen.cpp). Few rows keep rowLayout's, which
/// a small product's prologue folds in (fusion/prologue.h: at most 24 KB
/// of rows), so an op gives the same numbers fused or not.
RowLayout rowOpLayout(OpKind op, int64_t rows, int64_t n, DType t, DType acc);

/// The layout of a row of `n` elements grouped by 16 bytes of
/// `elementBytes`-byte elements, of which a lane holds `cachedBytes` bytes
/// per element in registers (0: nothing is held, only the length decides
/// between a warp and a block), and at most `maxCached` elements. A block
/// a row has the fewest lanes (64 to 1024) that take the row in
/// `groupsPerLane` groups each; fewer than kRowGroupsPerLane also hold only
/// that many.
RowLayout rowLayoutFor(int64_t n, int64_t elementBytes, int64_t cachedBytes,
                       int64_t maxCached = INT64_MAX,
                       int64_t groupsPerLane = kRowGroupsPerLane);

} // namespace cumo
