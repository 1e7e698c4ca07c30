// Indexing: integers, ranges (with steps), true (a whole axis), false (the
// rest of the axes) and :new (a new axis of length one). Every such index
// answers a view: a new layout over the same storage, so writes through it
// reach the array it came from.
#pragma once

#include "core/array.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string_view>

namespace cumo {

struct IndexItem {
  enum class Kind : uint8_t { Int, Range, All, NewAxis, Rest };
  Kind kind = Kind::All;
  int64_t value = 0;   ///< Int
  int64_t begin = 0;   ///< Range
  int64_t end = 0;     ///< Range
  bool hasBegin = false, hasEnd = false, exclusive = false;
  int64_t step = 1;    ///< Range

  static IndexItem integer(int64_t i) {
    IndexItem it;
    it.kind = Kind::Int;
    it.value = i;
    return it;
  }
  static IndexItem all() { return IndexItem(); }
};

/// The layout `items` select out of `layout`. A single index into an array
/// of more than one axis indexes its elements in row-major order, as Numo
/// does; that needs a contiguous layout, and `flatNeedsCopy` is set instead
/// when the layout is not.
Layout indexLayout(const Layout &layout, llvm::ArrayRef<IndexItem> items,
                   std::string_view op, bool *flatNeedsCopy = nullptr);

} // namespace cumo
