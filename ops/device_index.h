// The position table of an index selection whose index arrays are on the
// device (decode's `wte[tok, true]`, `k_cache[pos, true] = k`): recorded as
// elementwise Int64 nodes, so it fuses into one kernel with whatever
// computed the indices, and nothing is read back. Each selected position is
//
//   offset + sum over the axes of term_axis(coordinates of the result)
//
// where a host-known axis (a range, `true`, a Ruby Array) contributes its
// positions times the axis's stride, and an index array contributes
// index_normalize(i, extent) * stride: -1 times the stride when i is out of
// range, and index_add keeps a sum -1 once a term is negative. The
// gather or write kernel then flags every position outside the array
// (ops/fancy_index.h). Every value here (offsets, strides, extents, range
// starts and steps) is a kernel parameter, never part of a kernel's
// source: a loop indexing a different element each time runs the same plan.
#pragma once

#include "core/array.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace cumo {

/// One summand of every selected position.
struct PositionTerm {
  enum class Kind : uint8_t {
    Affine, ///< start + k * step along `axis` (a range, `true`)
    List,   ///< host-known values along `axis` (a Ruby Array, a mask)
    Index,  ///< an integer NArray's values, normalized, times `stride`
  };
  Kind kind = Kind::Affine;
  /// The result axis it varies along; -1 for none (a 0-dim index array,
  /// the same for every element), and for a single index array, whose own
  /// shape is the result's.
  int64_t axis = -1;
  int64_t count = 0, start = 0, step = 0; ///< Affine, already times the stride
  std::vector<int64_t> values;             ///< List, already times the stride
  const ArrayHandle *index = nullptr;      ///< Index
  int64_t extent = 0;                      ///< Index: the axis it indexes
  int64_t stride = 1;                      ///< Index: that axis's stride
};

struct DevicePositions {
  /// What integer indices add, when there are any (whether there are is
  /// part of the plan's structure; the offset's value is not).
  bool hasOffset = false;
  int64_t offset = 0;
  std::vector<PositionTerm> terms;
};

/// Whether no two selected elements of `p` can have one position: every
/// term varies along its own axis of the result, positions along an axis
/// are within its extent (an index outside it is flagged, not written), so
/// the sum is distinct unless a term repeats a value along its axis, which
/// only a list with a repeat or an index array of more than one element
/// can do (the device's values are not known).
bool positionsAreDistinct(const DevicePositions &p);

/// Records the Int64 table of `shape` (the selection's) that `p` describes:
/// the flat row-major position of each selected element, or a value outside
/// 0 ... size - 1 where an index array's value was out of range.
NodeRef devicePositionTable(const DevicePositions &p, llvm::ArrayRef<int64_t> shape);

} // namespace cumo
