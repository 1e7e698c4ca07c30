// Index arrays and Bit masks in [] and []=, as Numo takes them: each index
// selects along its own axis (orthogonal, not numpy's zipped indices), and a
// single index into an array of several axes selects among its elements in
// row-major order. A selection is a table of flat row-major positions: a
// read gathers them (a copy, where Numo answers an index view), a write
// replaces them. Both are opaque ops; a write's kernel writes the selected
// elements over a copy of the array that an elementwise kernel made before
// it (fusion/schedule.cpp), so it costs the selection, not the array.
//
// Where the table comes from:
// - every index is known on the host (Ruby Arrays, ranges, integers, Bit
//   masks read back, which is a sync, as Numo's masks need a count): the
//   host checks each position at the call and uploads the table;
// - some index is an integer NArray: its values stay on the device and the
//   table is an Int64 node computed there (ops/device_index.h), so there is
//   no sync and the plan depends on no index value. A position out of range
//   cannot raise at the call: the kernel flags it in the device's error word
//   (kErrorIndexOutOfRange) and the next force point raises IndexError,
//   naming [] or []= and the line that recorded it.
#pragma once

#include "core/array.h"
#include "ops/device_index.h"
#include "ops/indexing.h"
#include "ops/opaque.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace cumo {

/// One index of [] or []=: an IndexItem, or a list of positions (negative
/// ones count from the end) along one axis, or over every element when it
/// is the only index.
struct FancyItem {
  IndexItem item;
  bool isList = false;
  std::vector<int64_t> positions;
  /// The shape of the index array (for a single index, the selection's).
  Shape listShape;
  /// A Bit mask's element count (its true positions are `positions`):
  /// it must cover the axis, or every element when it is the only index.
  int64_t maskLength = -1;
  /// An integer NArray whose values stay on the device (`positions` is
  /// empty; listShape is its shape). Among several indices its elements
  /// lie along one axis of the result in row-major order, and a 0-dim one
  /// removes its axis, as an integer does.
  const ArrayHandle *device = nullptr;
};

/// What the items select: the result's shape and, in its row-major order,
/// the flat row-major position of each element in the indexed array.
struct Selection {
  Shape shape;
  /// Known on the host: the positions themselves, checked.
  std::vector<int64_t> positions;
  /// Some index on the device: how the device computes them (unchecked).
  DevicePositions device;
  bool onDevice = false;
};

/// Checks `items` against `shape` as [] does (errors name `op`) and says
/// what they select. Records nothing: the ops below record the table.
Selection fancySelection(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<FancyItem> items,
                         std::string_view op);

/// The elements of `a` at `sel`, a new array of sel.shape.
NodeRef gatherOp(const ArrayHandle &a, const Selection &sel);

/// `a` with the elements at `sel` replaced by `values` (of sel.shape, in
/// a's class). A position selected twice takes the last value, as Numo's
/// loop writes it.
NodeRef indexWriteOp(const ArrayHandle &a, const Selection &sel, const NodeRef &values);

/// A device position out of range, on the host, as the CUDA kernels flag
/// it: the bit in `errorWord` (Device::errorWord; nothing when null), and
/// `tag` in its second word if it is the smallest a failed check left.
void flagIndexOutOfRange(uint32_t *errorWord, uint32_t tag);

/// Whether IndexWrite node `n` cannot name a position twice: a host table
/// (the host marked earlier writes of a position -1), or a device table
/// whose selection cannot repeat one (positionsAreDistinct, its second
/// integer attribute).
bool writesDistinctPositions(const Node &n);

/// Whether a Gather or IndexWrite node reads a table computed on the
/// device, whose positions its kernel must check (and, for a write, whose
/// repeated positions it must resolve): its integer attribute.
bool readsDeviceTable(const Node &n);

/// The Ruby method a Gather or IndexWrite node comes from ("[]", "[]="),
/// for the error raised when its kernel found a position out of range.
std::string_view fancyIndexOpName(OpKind op);

/// The reference implementations. Gather's operands are the array and the
/// table; IndexWrite's the table and the values, written over `out`,
/// which already holds the array. A table computed on the device
/// (OpaqueCall::ints[0] != 0) may hold positions out of range: those
/// elements read 0 or are not written, and kErrorIndexOutOfRange is set.
void fancyIndexReference(const OpaqueCall &call);

} // namespace cumo
