#include "ops/fancy_index.h"

#include "core/error.h"
#include "ops/creation.h"
#include "ops/record.h"
#include "ops/reference.h"

#include <algorithm>
#include <map>
#include <string>

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

/// The positions along an axis of `n` that a plain item selects (the
/// integer's one, a range's, every one for `true`).
std::vector<int64_t> itemPositions(const IndexItem &it, int64_t n, std::string_view op) {
  Layout l = indexLayout(Layout::contiguous({n}), {it}, op);
  std::vector<int64_t> out;
  if (l.ndim() == 0) {
    out.push_back(l.offset);
    return out;
  }
  for (int64_t k = 0; k < l.shape[0]; ++k)
    out.push_back(l.offset + k * l.strides[0]);
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
    checkMask(items[0], total, "an array", op);
    sel.shape = items[0].listShape;
    for (int64_t p : items[0].positions)
      sel.positions.push_back(
          normalized(p, total, " for an array of " + std::to_string(total) + " elements", op));
    return sel;
  }
  // The structure (how many axes, rest, new axes) and the plain items are
  // checked as a plain index would be, lists standing in as `true`.
  std::vector<IndexItem> plain;
  for (const FancyItem &f : items)
    plain.push_back(f.isList ? IndexItem::all() : f.item);
  indexLayout(Layout::contiguous(toShape(shape)), plain, op);

  int64_t rank = int64_t(shape.size()), explicitAxes = 0;
  for (const FancyItem &f : items)
    if (f.isList || (f.item.kind != IndexItem::Kind::Rest &&
                     f.item.kind != IndexItem::Kind::NewAxis))
      ++explicitAxes;
  std::vector<std::vector<int64_t>> along; // per axis of `shape`
  int64_t axis = 0;
  auto every = [&](int64_t d) { return itemPositions(IndexItem::all(), shape[d], op); };
  for (const FancyItem &f : items) {
    if (!f.isList && f.item.kind == IndexItem::Kind::NewAxis) {
      sel.shape.push_back(1);
      continue;
    }
    if (!f.isList && f.item.kind == IndexItem::Kind::Rest) {
      for (int64_t k = 0; k < rank - explicitAxes; ++k, ++axis) {
        along.push_back(every(axis));
        sel.shape.push_back(shape[axis]);
      }
      continue;
    }
    std::vector<int64_t> ps;
    if (f.isList) {
      std::string where = " for axis " + std::to_string(axis) + " of length " +
                          std::to_string(shape[axis]);
      checkMask(f, shape[axis], "axis " + std::to_string(axis), op);
      for (int64_t p : f.positions)
        ps.push_back(normalized(p, shape[axis], where, op));
    } else {
      ps = itemPositions(f.item, shape[axis], op);
    }
    // An integer removes its axis; every other item keeps one.
    if (f.isList || f.item.kind != IndexItem::Kind::Int)
      sel.shape.push_back(int64_t(ps.size()));
    along.push_back(std::move(ps));
    ++axis;
  }
  for (; axis < rank; ++axis) {
    along.push_back(every(axis));
    sel.shape.push_back(shape[axis]);
  }
  // Row-major over the selected positions of every axis.
  Strides contiguous = contiguousStrides(shape);
  int64_t count = 1;
  for (const auto &ps : along)
    count *= int64_t(ps.size());
  sel.positions.reserve(size_t(count));
  std::vector<size_t> c(along.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t flat = 0;
    for (size_t d = 0; d < along.size(); ++d)
      flat += along[d][c[d]] * contiguous[d];
    sel.positions.push_back(flat);
    for (size_t d = along.size(); d-- > 0;) {
      if (++c[d] < along[d].size())
        break;
      c[d] = 0;
    }
  }
  return sel;
}

NodeRef gatherOp(const ArrayHandle &a, const Selection &sel) {
  Shape tableShape = {int64_t(sel.positions.size())};
  NodeRef table = uploadNode(DType::Int64, tableShape, sel.positions.data());
  return record(OpKind::Gather, a.dtype(), sel.shape, {a.value(), table});
}

NodeRef indexWriteOp(const ArrayHandle &a, const Selection &sel, const NodeRef &values) {
  // The last write of a position wins; sorted, so a kernel finds each
  // position by bisection and no two threads write one element.
  std::map<int64_t, int64_t> last;
  for (size_t i = 0; i < sel.positions.size(); ++i)
    last[sel.positions[i]] = int64_t(i);
  std::vector<int64_t> table;
  table.reserve(2 * last.size());
  for (const auto &[position, source] : last)
    table.push_back(position);
  for (const auto &[position, source] : last)
    table.push_back(source);
  Shape tableShape = {2, int64_t(last.size())};
  NodeRef t = uploadNode(DType::Int64, tableShape, table.data());
  return record(OpKind::IndexWrite, a.dtype(), a.shape(), {a.value(), t, values});
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

/// Entry (row, k) of the position table.
int64_t tableAt(const OpaqueOperand &t, int64_t row, int64_t k) {
  const int64_t *p = static_cast<const int64_t *>(t.data);
  if (t.shape.size() == 1)
    return p[t.offset + k * t.strides[0]];
  return p[t.offset + row * t.strides[0] + k * t.strides[1]];
}

template <class T>
void gather(const OpaqueCall &call) {
  const OpaqueOperand &in = call.operands[0], &table = call.operands[1];
  const T *src = static_cast<const T *>(in.data);
  T *dst = static_cast<T *>(call.out);
  int64_t n = numElements(call.outShape);
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[offsetOf(in, tableAt(table, 0, i))];
}

template <class T>
void indexWrite(const OpaqueCall &call) {
  const OpaqueOperand &in = call.operands[0], &table = call.operands[1],
                      &values = call.operands[2];
  const T *src = static_cast<const T *>(in.data);
  const T *val = static_cast<const T *>(values.data);
  T *dst = static_cast<T *>(call.out);
  int64_t n = numElements(call.outShape);
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[offsetOf(in, i)];
  int64_t m = table.shape[1];
  for (int64_t k = 0; k < m; ++k)
    dst[tableAt(table, 0, k)] = val[offsetOf(values, tableAt(table, 1, k))];
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
