// Index arrays and Bit masks in [] and []=, as Numo takes them: each index
// selects along its own axis (orthogonal, not numpy's zipped indices), and a
// single index into an array of several axes selects among its elements in
// row-major order. The host knows every position (a Ruby Array, or an index
// or mask array read back, which is a sync, as Numo's masks need a count),
// so a selection is a table of flat positions: a read gathers them (a copy,
// where Numo answers an index view), a write replaces them. Both are opaque
// ops whose operands are the array, the uploaded table and, for a write,
// the values.
#pragma once

#include "core/array.h"
#include "ops/indexing.h"
#include "ops/opaque.h"

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
};

/// What the items select: the result's shape and, in its row-major order,
/// the flat row-major position of each element in the indexed array.
struct Selection {
  Shape shape;
  std::vector<int64_t> positions;
};

/// Checks `items` against `shape` as [] does (errors name `op`) and lists
/// the positions they select.
Selection fancySelection(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<FancyItem> items,
                         std::string_view op);

/// The elements of `a` at `sel`, a new array of sel.shape.
NodeRef gatherOp(const ArrayHandle &a, const Selection &sel);

/// `a` with the elements at `sel` replaced by `values` (of sel.shape, in
/// a's class). A position selected twice takes the last value, as Numo's
/// loop writes it.
NodeRef indexWriteOp(const ArrayHandle &a, const Selection &sel, const NodeRef &values);

/// The reference implementations (OpaqueCall operands: the array and the
/// position table; for a write also the values, and the table's second
/// row says which value each sorted position takes).
void fancyIndexReference(const OpaqueCall &call);

} // namespace cumo
