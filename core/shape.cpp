#include "core/shape.h"

#include "llvm/ADT/STLExtras.h"

namespace cumo {

bool sizeFits(llvm::ArrayRef<int64_t> shape, size_t elementBytes) {
  if (llvm::is_contained(shape, 0))
    return true; // empty, whatever the other extents
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return false;
  int64_t bytes;
  return !__builtin_mul_overflow(n, int64_t(elementBytes), &bytes);
}

Strides contiguousStrides(llvm::ArrayRef<int64_t> shape) {
  Strides s(shape.size());
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = step;
    step *= shape[i];
  }
  return s;
}

std::string shapeToString(llvm::ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::optional<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                     llvm::ArrayRef<int64_t> b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool broadcastsTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i])
      return false;
  return true;
}

void Layout::setContiguous(llvm::ArrayRef<int64_t> shape, int64_t offset) {
  // Into the vectors as they stand: no temporary to move from, no
  // allocation once they have room, and one loop that copies the extents
  // and writes the strides, where assign and resize had called memcpy and
  // memset (a materialized node takes this layout: about 50k host
  // instructions a GPT-2 token, callgrind, 2026-12-07). `shape` may be
  // this->shape itself: its size then stays, and so do its elements.
  size_t n = shape.size();
  this->shape.resize_for_overwrite(n);
  strides.resize_for_overwrite(n);
  int64_t step = 1;
  for (size_t i = n; i-- > 0;) {
    int64_t extent = shape[i];
    this->shape[i] = extent;
    strides[i] = step;
    step *= extent;
  }
  this->offset = offset;
}

bool Layout::isRowMajor() const {
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (strides[i] != step)
      return false;
    step *= shape[i];
  }
  return true;
}

Layout Layout::contiguous(llvm::ArrayRef<int64_t> shape, int64_t offset) {
  Layout l;
  l.setContiguous(shape, offset);
  return l;
}

bool Layout::isContiguous() const {
  for (int64_t d : shape)
    if (d == 0)
      return true; // no element to be out of order
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1)
      continue;
    if (strides[i] != expected)
      return false;
    expected *= shape[i];
  }
  return true;
}

bool Layout::isWhole(int64_t storageSize) const {
  return offset == 0 && size() == storageSize && isContiguous();
}

std::pair<int64_t, int64_t> Layout::extent() const {
  if (size() == 0)
    return {offset, offset};
  int64_t lo = offset, hi = offset;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t span = (shape[i] - 1) * strides[i];
    if (span < 0)
      lo += span;
    else
      hi += span;
  }
  return {lo, hi + 1};
}

} // namespace cumo
