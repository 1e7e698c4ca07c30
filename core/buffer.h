// A block of memory from a pool, refcounted. Device memory for the CUDA
// executor, host memory for the CPU executor; the core does not care which.
#pragma once

#include "core/free_list.h"
#include "core/ref_counted.h"

#include "llvm/ADT/IntrusiveRefCntPtr.h"

#include <cstddef>

namespace cumo {

template <class T> using Ref = llvm::IntrusiveRefCntPtr<T>;

class MemoryPool;

class Buffer : public RefCounted<Buffer> {
public:
  Buffer(MemoryPool *pool, void *ptr, size_t bytes, bool internal = false)
      : pool_(pool), ptr_(ptr), bytes_(bytes), internal_(internal) {}
  ~Buffer();
  CUMO_FREE_LIST_ALLOCATED(Buffer)
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  void *data() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  MemoryPool *pool() const { return pool_; }
  /// Engine memory (a cached graph's arena), not an array's.
  bool internal() const { return internal_; }

private:
  MemoryPool *pool_;
  void *ptr_;
  size_t bytes_;
  bool internal_;
};

} // namespace cumo
