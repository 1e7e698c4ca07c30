// An array's memory handed to something outside the engine's plans: a
// kernel a user wrote (graph/user_kernels.h), an asynchronous copy through
// pinned host memory (NArray#get and #set). Everything pending is computed
// first, so what it reads is up to date and what it writes is seen by what
// is recorded after; memory it may write becomes the array's own first, so
// the write shows only where Numo's semantics put it (the array and its
// views, never a dup or a reshape that shares the values).
#pragma once

#include "core/array.h"
#include "core/buffer.h"

#include <cstddef>

namespace cumo {

/// Where an array's elements lie: `bytes` at `offset` in `buffer`,
/// row-major and contiguous.
struct ElementMemory {
  Ref<Buffer> buffer;
  size_t offset = 0;
  size_t bytes = 0;
  void *address() const { return static_cast<char *>(buffer->data()) + offset; }
};

/// `a`'s elements for a reader: pending work computed, `a` materialized.
/// Its elements must be contiguous (ArgumentError naming `op`), and a Bit
/// array, whose elements are packed, is a TypeError.
ElementMemory readableElements(ArrayHandle &a, const char *op);

/// `a`'s elements for a writer: as readableElements, and the array's
/// storage given values of its own first (a copy) when another array, a
/// view's materialized node or a pending op shares them; memory is
/// allocated for an array never written.
ElementMemory writableElements(ArrayHandle &a, const char *op);

/// As readableElements or writableElements, for an array that may step
/// through memory: address() is element (0, 0, ...), and element c lies
/// sum(c[d] * a.layout().strides[d]) elements from it (the storage's value
/// laid out whole, row-major, first). `bytes` is 0.
ElementMemory stridedElements(ArrayHandle &a, const char *op, bool forWrite);

} // namespace cumo
