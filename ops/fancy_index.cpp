#include "ops/fancy_index.h"

#include "core/device.h"
#include "core/error.h"
#include "core/host_hooks.h"
#include "ops/creation.h"
#include "ops/record.h"
#include "ops/reference.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <string>
#include <unordered_set>

namespace cumo {

namespace {

/// `p` (negative from the end) as a position along an axis of `n`.
int64_t normalized(int64_t p, int64_t n, const std::string &where, std::string_view op) {
  int64_t i = p < 0 ? p + n : p;
  if (i < 0 || i >= n)
    opError(ErrorKind::Index, op,
            "index " + std::to_string(p) + " is out of range" + where);
  return i;
}

/// A mask must be as long as what it selects from.
void checkMask(const FancyItem &f, int64_t n, const std::string &what, std::string_view op) {
  if (f.maskLength >= 0 && f.maskLength != n)
    opError(ErrorKind::Shape, op,
            "a mask of " + std::to_string(f.maskLength) + " elements for " + what + " of " +
                std::to_string(n));
}

/// What one index picks along one axis of the indexed array.
struct AxisPick {
  std::vector<int64_t> positions;      ///< a list's, known on the host, checked
  /// A plain item (an integer, a range, `true`): `count` positions from
  /// `start` by `step`, kept as three numbers. A decode step's cache
  /// writes take `true` along three axes each; expanding them into lists
  /// that only their first two entries were read from took 9% of its
  /// host instructions (callgrind, 2026-12-07).
  bool affine = false;
  int64_t start = 0, step = 0, count = 0;
  int64_t resultAxis = -1;             ///< -1: the index removes its axis
  const ArrayHandle *device = nullptr; ///< an index array on the device

  int64_t size() const { return affine ? count : int64_t(positions.size()); }
  int64_t at(int64_t k) const { return affine ? start + k * step : positions[size_t(k)]; }
};

/// The pick of a plain item along an axis of `n` (the integer's one
/// position, a range's, every one for `true`), checked as [] checks it.
AxisPick plainPick(const IndexItem &it, int64_t n, std::string_view op) {
  AxisPick p;
  p.affine = true;
  if (it.kind == IndexItem::Kind::All) {
    p.step = 1;
    p.count = n;
    return p;
  }
  Layout l = indexLayout(Layout::contiguous({n}), {it}, op);
  p.start = l.offset;
  p.step = l.ndim() == 0 ? 0 : l.strides[0];
  p.count = l.ndim() == 0 ? 1 : l.shape[0];
  return p;
}

/// The terms of positions some of whose picks are on the device.
DevicePositions deviceTerms(llvm::ArrayRef<AxisPick> along, llvm::ArrayRef<int64_t> shape,
                            llvm::ArrayRef<int64_t> strides) {
  DevicePositions out;
  out.terms.reserve(along.size());
  for (size_t d = 0; d < along.size(); ++d) {
    const AxisPick &p = along[d];
    PositionTerm t;
    t.axis = p.resultAxis;
    if (p.device) {
      t.kind = PositionTerm::Kind::Index;
      t.index = p.device;
      t.extent = shape[d];
      t.stride = strides[d];
      out.terms.push_back(std::move(t));
      continue;
    }
    if (p.resultAxis < 0) { // an integer
      out.hasOffset = true;
      out.offset += p.at(0) * strides[d];
      continue;
    }
    t.count = p.size();
    if (p.affine) {
      // Its positions and their spacing are kernel parameters of a seq.
      t.kind = PositionTerm::Kind::Affine;
      t.start = t.count ? p.start * strides[d] : 0;
      t.step = t.count > 1 ? p.step * strides[d] : 0;
    } else {
      t.kind = PositionTerm::Kind::List;
      for (int64_t q : p.positions)
        t.values.push_back(q * strides[d]);
    }
    out.terms.push_back(std::move(t));
  }
  return out;
}

} // namespace

Selection fancySelection(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<FancyItem> items,
                         std::string_view op) {
  if (shape.empty())
    opError(ErrorKind::Index, op, "an index array into a 0-dim array");
  Selection sel;
  int64_t total = numElements(shape);
  if (items.size() == 1 && items[0].isList) {
    // One index: the elements in row-major order.
    const FancyItem &f = items[0];
    checkMask(f, total, "an array", op);
    sel.shape = f.listShape;
    if (f.device) {
      PositionTerm t;
      t.kind = PositionTerm::Kind::Index;
      t.index = f.device;
      t.extent = total;
      sel.device.terms.push_back(std::move(t));
      sel.onDevice = true;
      return sel;
    }
    for (int64_t p : f.positions)
      sel.positions.push_back(
          normalized(p, total, " for an array of " + std::to_string(total) + " elements", op));
    return sel;
  }
  // The structure (how many axes, rest, new axes) and the plain items are
  // checked as a plain index would be, lists standing in as `true`.
  // Small vectors: a decode step makes 26 selections, each of a few axes.
  llvm::SmallVector<IndexItem, 4> plain;
  for (const FancyItem &f : items)
    plain.push_back(f.isList ? IndexItem::all() : f.item);
  indexLayout(Layout::contiguous(toShape(shape)), plain, op);

  int64_t rank = int64_t(shape.size()), explicitAxes = 0;
  for (const FancyItem &f : items)
    if (f.isList || (f.item.kind != IndexItem::Kind::Rest &&
                     f.item.kind != IndexItem::Kind::NewAxis))
      ++explicitAxes;
  llvm::SmallVector<AxisPick, 4> along; // per axis of `shape`
  int64_t axis = 0;
  auto every = [&](int64_t d) {
    AxisPick p = plainPick(IndexItem::all(), shape[d], op);
    p.resultAxis = int64_t(sel.shape.size());
    sel.shape.push_back(shape[d]);
    return p;
  };
  for (const FancyItem &f : items) {
    if (!f.isList && f.item.kind == IndexItem::Kind::NewAxis) {
      sel.shape.push_back(1);
      continue;
    }
    if (!f.isList && f.item.kind == IndexItem::Kind::Rest) {
      for (int64_t k = 0; k < rank - explicitAxes; ++k, ++axis)
        along.push_back(every(axis));
      continue;
    }
    AxisPick pick;
    if (f.device) {
      pick.device = f.device;
    } else if (f.isList) {
      std::string where = " for axis " + std::to_string(axis) + " of length " +
                          std::to_string(shape[axis]);
      checkMask(f, shape[axis], "axis " + std::to_string(axis), op);
      for (int64_t p : f.positions)
        pick.positions.push_back(normalized(p, shape[axis], where, op));
    } else {
      pick = plainPick(f.item, shape[axis], op);
    }
    // An integer removes its axis, and so does a 0-dim index array; every
    // other item keeps one (an index array's elements in row-major order).
    bool removes = f.device ? f.listShape.empty()
                            : !f.isList && f.item.kind == IndexItem::Kind::Int;
    if (!removes) {
      pick.resultAxis = int64_t(sel.shape.size());
      sel.shape.push_back(f.device ? numElements(f.listShape) : pick.size());
    }
    along.push_back(std::move(pick));
    ++axis;
  }
  for (; axis < rank; ++axis)
    along.push_back(every(axis));
  Strides contiguous = contiguousStrides(shape);
  if (llvm::any_of(along, [](const AxisPick &p) { return p.device != nullptr; })) {
    sel.device = deviceTerms(along, shape, contiguous);
    sel.onDevice = true;
    return sel;
  }
  // Row-major over the selected positions of every axis.
  int64_t count = 1;
  for (const AxisPick &p : along)
    count *= p.size();
  sel.positions.reserve(size_t(count));
  std::vector<int64_t> c(along.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t flat = 0;
    for (size_t d = 0; d < along.size(); ++d)
      flat += along[d].at(c[d]) * contiguous[d];
    sel.positions.push_back(flat);
    for (size_t d = along.size(); d-- > 0;) {
      if (++c[d] < along[d].size())
        break;
      c[d] = 0;
    }
  }
  return sel;
}

namespace {

/// The table of a selection known on the host.
NodeRef hostTable(llvm::ArrayRef<int64_t> positions) {
  Shape shape = {int64_t(positions.size())};
  return uploadNode(DType::Int64, shape, positions.data());
}

/// Marks a node whose kernel reads a table computed on the device, with
/// the line that recorded it (reported if a position is out of range).
void markDeviceTable(Node &n) {
  n.extra().axes.assign(1, 1);
  if (HostHooks::get().sourceLocation)
    n.extra().recordedAt = HostHooks::get().sourceLocation();
}

} // namespace

NodeRef gatherOp(const ArrayHandle &a, const Selection &sel) {
  NodeRef in = a.value();
  if (!sel.onDevice)
    return record(OpKind::Gather, a.dtype(), sel.shape, {in, hostTable(sel.positions)});
  NodeRef table = devicePositionTable(sel.device, sel.shape);
  NodeRef n = record(OpKind::Gather, a.dtype(), sel.shape, {in, table});
  markDeviceTable(*n);
  return n;
}

NodeRef indexWriteOp(const ArrayHandle &a, const Selection &sel, const NodeRef &values) {
  NodeRef base = a.value();
  if (sel.onDevice) {
    // Repeated positions are resolved by the kernel (the last one wins).
    NodeRef table = devicePositionTable(sel.device, sel.shape);
    NodeRef n = record(OpKind::IndexWrite, a.dtype(), a.shape(), {base, table, values});
    markDeviceTable(*n);
    n->extra().axes.push_back(positionsAreDistinct(sel.device) ? 1 : 0);
    return n;
  }
  // The last write of a position wins, as Numo's loop writes: the host
  // drops the earlier ones (-1, which the kernel skips), so no two
  // threads write one element.
  std::vector<int64_t> table(sel.positions);
  std::unordered_set<int64_t> seen;
  seen.reserve(table.size());
  for (size_t i = table.size(); i-- > 0;)
    if (!seen.insert(table[i]).second)
      table[i] = -1;
  return record(OpKind::IndexWrite, a.dtype(), a.shape(), {base, hostTable(table), values});
}

bool readsDeviceTable(const Node &n) {
  return n.hasExtra() && !n.extra().axes.empty() && n.extra().axes[0] != 0;
}

bool writesDistinctPositions(const Node &n) {
  return !readsDeviceTable(n) || (n.extra().axes.size() > 1 && n.extra().axes[1] != 0);
}

std::string_view fancyIndexOpName(OpKind op) {
  return op == OpKind::IndexWrite ? "[]=" : "[]";
}

void flagIndexOutOfRange(uint32_t *errorWord, uint32_t tag) {
  if (!errorWord)
    return;
  errorWord[0] |= kErrorIndexOutOfRange;
  errorWord[1] = std::min(errorWord[1], tag);
}

namespace {

/// The offset of row-major element `flat` of `o`.
int64_t offsetOf(const OpaqueOperand &o, int64_t flat) {
  int64_t at = o.offset;
  for (size_t d = o.shape.size(); d-- > 0;) {
    at += (flat % o.shape[d]) * o.strides[d];
    flat /= o.shape[d];
  }
  return at;
}

/// Position k of a table, in row-major order.
int64_t tableAt(const OpaqueOperand &t, int64_t k) {
  return static_cast<const int64_t *>(t.data)[offsetOf(t, k)];
}

/// Whether the table was computed on the device (readsDeviceTable).
bool checksPositions(const OpaqueCall &call) {
  return !call.ints.empty() && call.ints[0] != 0;
}

template <class T>
void gather(const OpaqueCall &call) {
  const OpaqueOperand &in = call.operands[0], &table = call.operands[1];
  const T *src = static_cast<const T *>(in.data);
  T *dst = static_cast<T *>(call.out);
  bool check = checksPositions(call);
  int64_t size = numElements(in.shape);
  int64_t n = numElements(call.outShape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t p = tableAt(table, i);
    if (check && (p < 0 || p >= size)) {
      flagIndexOutOfRange(call.errorWord, call.checkTag);
      dst[i] = T{};
      continue;
    }
    dst[i] = src[offsetOf(in, p)];
  }
}

/// In selection order, so the last write of a position wins.
template <class T>
void indexWrite(const OpaqueCall &call) {
  const OpaqueOperand &table = call.operands[0], &values = call.operands[1];
  const T *val = static_cast<const T *>(values.data);
  T *dst = static_cast<T *>(call.out);
  bool check = checksPositions(call);
  int64_t size = numElements(call.outShape);
  int64_t m = numElements(table.shape);
  for (int64_t k = 0; k < m; ++k) {
    int64_t p = tableAt(table, k);
    if (p < 0 || p >= size) {
      // In a host table, -1 marks a position written again later.
      if (check)
        flagIndexOutOfRange(call.errorWord, call.checkTag);
      continue;
    }
    dst[p] = val[offsetOf(values, k)];
  }
}

} // namespace

void fancyIndexReference(const OpaqueCall &call) {
  dispatchDType(call.outDtype, [&]<DType D, class C>() {
    if (call.op == OpKind::Gather)
      gather<C>(call);
    else
      indexWrite<C>(call);
  });
}

} // namespace cumo
