// Dims: the extents or the strides of an array (core/shape.h's Shape and
// Strides), a SmallVector of int64_t that copies and moves its elements
// in place.
#pragma once

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <utility>

namespace cumo {

/// Axes a Dims holds without the heap: a GPT-2 decode's attention reaches
/// five (batch, head, position, ...), which at four grew every such shape
/// and its strides on the heap (about 33k host instructions a token,
/// callgrind, 2026-12-07).
constexpr unsigned kInlineDims = 6;

/// A SmallVector<int64_t, kInlineDims> whose copies and moves of elements
/// held in place copy them one by one. Why: SmallVector copies or moves
/// inline elements with a memcpy call of the run-time size, and Layouts
/// move through every view (indexLayout, the view's handle): callgrind of
/// the CG loop at 512x512 (CPU executor, kernels skipped, 2026-12-07) put
/// SmallVector<long>'s move assignment and its memcpy at about 5k of the
/// iteration's 116k instructions.
class Dims : public llvm::SmallVector<int64_t, kInlineDims> {
  using Base = llvm::SmallVector<int64_t, kInlineDims>;

public:
  using Base::Base;
  using Base::operator=;
  Dims() = default;
  Dims(const Dims &o) : Base() { copyFrom(o); }
  Dims(Dims &&o) noexcept : Base() { take(std::move(o)); }
  Dims &operator=(const Dims &o) {
    if (this != &o)
      copyFrom(o);
    return *this;
  }
  Dims &operator=(Dims &&o) noexcept {
    if (this != &o)
      take(std::move(o));
    return *this;
  }

private:
  void copyFrom(const Dims &o) {
    size_t n = o.size();
    if (n > kInlineDims) {
      this->assign(o.begin(), o.end());
      return;
    }
    // Within the inline capacity (or what this holds already) only the size changes.
    this->resize_for_overwrite(n);
    int64_t *d = this->data();
    const int64_t *s = o.data();
    switch (n) {
    case 6: d[5] = s[5]; [[fallthrough]];
    case 5: d[4] = s[4]; [[fallthrough]];
    case 4: d[3] = s[3]; [[fallthrough]];
    case 3: d[2] = s[2]; [[fallthrough]];
    case 2: d[1] = s[1]; [[fallthrough]];
    case 1: d[0] = s[0]; [[fallthrough]];
    default: break;
    }
  }
  void take(Dims &&o) {
    if (o.isSmall()) {
      copyFrom(o);
      o.clear();
      return;
    }
    Base::operator=(std::move(static_cast<Base &>(o)));
  }
};
static_assert(kInlineDims == 6, "Dims::copyFrom copies up to six elements in place");

} // namespace cumo
