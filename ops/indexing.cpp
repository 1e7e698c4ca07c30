#include "ops/indexing.h"

#include "core/error.h"

#include <string>

namespace cumo {

namespace {

struct AxisSelection {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
  bool drop = false; ///< an integer index removes the axis
};

AxisSelection selectAxis(const IndexItem &it, int64_t n, int64_t axis,
                         std::string_view op) {
  auto where = [&] {
    return " for axis " + std::to_string(axis) + " of length " +
           std::to_string(n);
  };
  AxisSelection sel;
  switch (it.kind) {
  case IndexItem::Kind::Int: {
    int64_t i = it.value < 0 ? it.value + n : it.value;
    if (i < 0 || i >= n)
      opError(ErrorKind::Index, op,
              "index " + std::to_string(it.value) + " is out of range" + where());
    sel.start = i;
    sel.count = 1;
    sel.drop = true;
    return sel;
  }
  case IndexItem::Kind::All:
    sel.count = n;
    return sel;
  case IndexItem::Kind::Range: {
    // Numo's na_parse_range: both ends must lie on the axis (no clamping);
    // an inverted range is an empty view.
    if (it.step == 0)
      opError(ErrorKind::Argument, op, "a range step of 0");
    auto text = [&] {
      return (it.hasBegin ? std::to_string(it.begin) : std::string()) +
             (it.exclusive ? "..." : "..") +
             (it.hasEnd ? std::to_string(it.end) : std::string()) +
             " is out of range for size=" + std::to_string(n);
    };
    int64_t b = it.hasBegin ? it.begin : (it.step > 0 ? 0 : n - 1);
    if (b < 0)
      b += n;
    if (b < 0 || b >= n)
      opError(ErrorKind::Range, op, text());
    int64_t e = it.hasEnd ? it.end : (it.step > 0 ? n - 1 : 0);
    if (it.hasEnd && e < 0)
      e += n;
    if (it.hasEnd && it.exclusive)
      e += it.step > 0 ? -1 : 1;
    if (e < 0 || e >= n)
      opError(ErrorKind::Range, op, text());
    sel.start = b;
    sel.step = it.step;
    sel.count = std::max<int64_t>((e - b) / it.step + 1, 0);
    return sel;
  }
  default:
    break;
  }
  throw Error(ErrorKind::Internal, "[index] unexpected index kind");
}

} // namespace

Layout indexLayout(const Layout &layout, llvm::ArrayRef<IndexItem> items,
                   std::string_view op, bool *flatNeedsCopy) {
  if (flatNeedsCopy)
    *flatNeedsCopy = false;
  // One index into a multi-axis array walks its elements in row-major order.
  if (items.size() == 1 && layout.ndim() > 1 &&
      items[0].kind != IndexItem::Kind::Rest &&
      items[0].kind != IndexItem::Kind::NewAxis) {
    if (!layout.isContiguous()) {
      if (flatNeedsCopy) {
        *flatNeedsCopy = true;
        return layout;
      }
      opError(ErrorKind::Index, op, "a flat index into a strided view");
    }
    int64_t start = layout.size() ? layout.extent().first : layout.offset;
    Layout flat = Layout::contiguous({layout.size()}, start);
    return indexLayout(flat, items, op);
  }

  int64_t explicitAxes = 0;
  int64_t rests = 0;
  for (const IndexItem &it : items) {
    if (it.kind == IndexItem::Kind::Rest)
      ++rests;
    else if (it.kind != IndexItem::Kind::NewAxis)
      ++explicitAxes;
  }
  if (rests > 1)
    opError(ErrorKind::Index, op, "more than one rest index (false)");
  if (explicitAxes > layout.ndim() || (rests == 0 && explicitAxes != layout.ndim() &&
                                       !items.empty()))
    opError(ErrorKind::Index, op,
            "# of index(=" + std::to_string(explicitAxes) +
                ") should be equal to ndim(=" + std::to_string(layout.ndim()) +
                ") or 1");

  Layout out;
  out.offset = layout.offset;
  int64_t axis = 0;
  for (const IndexItem &it : items) {
    if (it.kind == IndexItem::Kind::NewAxis) {
      out.shape.push_back(1);
      out.strides.push_back(0);
      continue;
    }
    if (it.kind == IndexItem::Kind::Rest) {
      int64_t keep = layout.ndim() - explicitAxes;
      for (int64_t k = 0; k < keep; ++k, ++axis) {
        out.shape.push_back(layout.shape[axis]);
        out.strides.push_back(layout.strides[axis]);
      }
      continue;
    }
    AxisSelection sel = selectAxis(it, layout.shape[axis], axis, op);
    out.offset += sel.start * layout.strides[axis];
    if (!sel.drop) {
      out.shape.push_back(sel.count);
      out.strides.push_back(sel.step * layout.strides[axis]);
    }
    ++axis;
  }
  for (; axis < layout.ndim(); ++axis) {
    out.shape.push_back(layout.shape[axis]);
    out.strides.push_back(layout.strides[axis]);
  }
  return out;
}

} // namespace cumo
