// Pattern recognition: the row-wise computations a user writes out of
// operators (softmax as max, subtract, exp, sum, divide; layer_norm from
// mean and var, or from the mean of squares; rms_norm; quantize_symmetric's
// scale and its use), found by their shape rather than by their spelling.
//
// A row group is a set of nodes over one domain D (rank >= 2) whose
// reductions fold only the last axis of D and whose elementwise members
// read those folds broadcast back along it: everything a row needs is in
// the row, so one kernel computes the whole group with a warp or a block
// per row (Kernel::Kind::Rowwise), each intermediate in the dtype the user's
// ops give it. Without the group, each fold is a kernel of its own and each
// read-back another (a written-out softmax was four kernels).
//
// Members: reductions over D's last axis (or over every axis of a D of one
// row); elementwise nodes of shape D ("element" members) or of D's row
// shape, D[:-1] or D[:-1] + [1], or of one element where D has one row
// ("row" members: `var + eps`, `sqrt(var + eps)`); views and reshapes that only
// add or drop that unit axis. An elementwise node joins when it reads a
// member through a map that keeps each row in its row, and nothing it reads
// from outside depends on the group. Groups over one domain that an
// elementwise node reads together merge when neither depends on the other.
// A group is kept when some element member reads the folds back: a lone
// reduction stays an axis reduction.
#pragma once

#include "core/affine_map.h"
#include "core/shape.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace cumo {

class Node;
struct Schedule;

struct RowGroup {
  Shape domain;
  /// Indices into Schedule::nodes, in recording order.
  llvm::SmallVector<uint32_t, 8> members;
  /// Members that are reductions (a subset of `members`).
  llvm::SmallVector<uint32_t, 2> reductions;
};

/// Rows shorter than this stay with axis reductions: a warp per row would
/// leave most of its lanes idle.
constexpr int64_t kMinRowLength = 32;

/// A full reduction of an array of one row ([1, n]) joins a row group, as
/// a reduction over its last axis would, up to this length: one block
/// then folds the row, its folds read back in the same kernel (argmax's
/// max, its candidates' min and the answer: one kernel, where a full
/// reduction over many blocks and its consumers took three). A longer row
/// keeps its reductions over many blocks. Measured on an H100
/// (bench/probes/one_row_reduction.rb, 2026-12-07 08:05 UTC, device us a
/// call, the reduction kernels against one block, two rounds): argmax
/// SFloat 8.0 -> 5.0 at 1024, 8.2 -> 5.8 at 8192, 8.2 -> 7.8 at 16384,
/// 8.6 -> 16.7 at 50257 (BFloat 8.5 -> 5.3, 9.0 -> 8.2, 8.6 -> 9.2, 8.8 ->
/// 17.9); x / x.sum SFloat 6.2 -> 4.8 at 1024, 6.4 -> 5.1 at 8192, level at
/// 16384, 6.6 -> 25.1 at 50257, but BFloat's one block wins only at 1024
/// (6.7 -> 4.9) and loses 0.4-0.9 us at 4096 and 8192. In the decode the
/// one block at 50257 cost 10 us a token. So the bound is 8192.
constexpr int64_t kMaxOneRowLength = 8192;

/// Finds the row groups among `s`'s nodes (structure only: facts are not
/// read or changed).
llvm::SmallVector<RowGroup, 2> findRowGroups(const Schedule &s);

/// Whether `shape` is D itself, or D's row shape (D[:-1], D[:-1] + [1], or for a D
/// of one row any shape of one element).
bool isElementShape(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> domain);
bool isRowShape(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> domain);

/// The map from D's coordinates to those of a member of `shape` (an
/// element or a row shape): the row's coordinates, and the element's
/// position along the row for an element member (0 for D[:-1] + [1]).
AffineMap rowMemberMap(llvm::ArrayRef<int64_t> domain, llvm::ArrayRef<int64_t> shape);

/// A reshape that only adds or drops a trailing unit axis (between D[:-1]
/// and D[:-1] + [1]): the map from its coordinates to its input's.
std::optional<AffineMap> unitAxisReshapeMap(const Node *reshape);

} // namespace cumo
