// Shapes, strides and broadcasting. Strides and offsets count elements, not
// bytes: every dtype here is stored one element per slot (Bit included).
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cumo {

/// Axes a shape or its strides hold without the heap: a GPT-2 decode's
/// attention reaches five (batch, head, position, ...), and at four every
/// such shape and its strides grew on the heap (bench/host_cost.rb,
/// 2026-12-07: 1.611M -> 1.581M host instructions a BFloat token, with the
/// handle's layout taken once). Copying the elements one by one rather
/// than by SmallVector's memcpy call was tried: 0.4% of a CG iteration,
/// nothing in the decode, not kept.
constexpr unsigned kInlineDims = 6;
using Shape = llvm::SmallVector<int64_t, kInlineDims>;
using Strides = llvm::SmallVector<int64_t, kInlineDims>;

/// A shape holding a copy of `a`.
inline Shape toShape(llvm::ArrayRef<int64_t> a) { return Shape(a.begin(), a.end()); }

/// The number of elements of a shape (1 for a 0-dim shape).
inline int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Whether `shape` of `elementBytes`-byte elements has a size and a byte
/// count that int64 holds (a shape such as [2**62, 4] wraps to 0).
bool sizeFits(llvm::ArrayRef<int64_t> shape, size_t elementBytes);

/// Row-major strides of a contiguous array of this shape.
Strides contiguousStrides(llvm::ArrayRef<int64_t> shape);

/// "[3,5]", as Numo prints shapes.
std::string shapeToString(llvm::ArrayRef<int64_t> shape);

/// The shape two operands broadcast to (numpy rules, right-aligned), or
/// nullopt when some axis disagrees.
std::optional<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                     llvm::ArrayRef<int64_t> b);

/// True when `from` broadcasts to `to` without changing `to`.
bool broadcastsTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

/// Where an array lives inside a flat buffer: element (c0, c1, ...) is at
/// offset + sum(ci * strides[i]).
struct Layout {
  Shape shape;
  Strides strides;
  int64_t offset = 0;

  static Layout contiguous(llvm::ArrayRef<int64_t> shape, int64_t offset = 0);
  /// Makes this the contiguous layout of `shape` in place.
  void setContiguous(llvm::ArrayRef<int64_t> shape, int64_t offset = 0);
  int64_t size() const { return numElements(shape); }
  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  /// Contiguous in the relaxed sense: axes of length one are ignored, since
  /// they are only ever indexed at zero (the spec's "A Length-One Axis Does
  /// Not Break Contiguity").
  bool isContiguous() const;
  /// Strides exactly contiguousStrides(shape) (axes of length one
  /// included), without building them.
  bool isRowMajor() const;
  /// Contiguous and starting at offset zero over `storageSize` elements.
  bool isWhole(int64_t storageSize) const;
  /// The smallest and one past the largest element offset touched (for
  /// bounds checks); {offset, offset} when empty.
  std::pair<int64_t, int64_t> extent() const;
  bool operator==(const Layout &o) const {
    return shape == o.shape && strides == o.strides && offset == o.offset;
  }
};

} // namespace cumo
