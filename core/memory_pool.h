// A caching allocator over a raw allocator (cudaMalloc, or aligned host
// memory). Freed blocks are kept in size classes and handed out again, so a
// loop that allocates the same sizes every iteration stops calling the raw
// allocator after its first iteration. Nothing here knows about CUDA or Ruby.
#pragma once

#include "core/buffer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstddef>
#include <functional>

namespace cumo {

/// Where a pool gets memory. allocate returns nullptr when out of memory.
class RawAllocator {
public:
  virtual ~RawAllocator() = default;
  virtual void *allocate(size_t bytes) = 0;
  virtual void deallocate(void *ptr, size_t bytes) = 0;
  virtual const char *name() const = 0;
};

class MemoryPool {
public:
  explicit MemoryPool(RawAllocator &raw) : raw_(raw) {}
  ~MemoryPool();

  /// A block of at least `bytes` (0 gives a valid, empty buffer). Out of
  /// memory frees the cache, asks `onPressure` (Ruby's GC) to release what
  /// it can, retries once, then throws ErrorKind::OutOfMemory.
  Ref<Buffer> allocate(size_t bytes);
  /// A block for the engine's own caches (graph arenas, parameter blocks):
  /// counted in totalBytes and internalBytes, not in usedBytes, which
  /// answers what arrays hold.
  Ref<Buffer> allocateInternal(size_t bytes);

  /// Gives every cached block back to the raw allocator.
  void freeCached();

  /// Off: a released block goes straight back to the raw allocator.
  void setEnabled(bool on);
  bool enabled() const { return enabled_; }

  size_t usedBytes() const { return used_; }   ///< handed out, not returned
  size_t internalBytes() const { return internal_; } ///< held by engine caches
  size_t totalBytes() const { return total_; } ///< taken from the allocator
  size_t cachedBytes() const { return total_ - used_; }
  /// The share of usedBytes the host's GC was last told of (ruby/
  /// noteDeviceMemory keeps it; the pool only holds it).
  size_t reportedToHost = 0;

  /// Called before the pool grows past `growthThreshold` beyond what it
  /// holds, and on out of memory: a chance to run the GC so that dead
  /// wrappers return their blocks.
  void setPressureCallback(std::function<void()> cb) {
    onPressure_ = std::move(cb);
  }

  /// The size a request is rounded to (its size class).
  static size_t roundedSize(size_t bytes);

  /// Whether allocating blocks of these sizes, all at once, would take
  /// memory from the raw allocator: the cache has too few of some class.
  bool wouldGrow(llvm::ArrayRef<size_t> bytes) const;
  /// Bytes handed out to arrays since the last noteCollected(): what a GC
  /// now could give back at most.
  size_t allocatedSinceCollect() const { return allocatedSinceCollect_; }
  /// Whether a GC is worth its cost before allocating `bytes`: the pool
  /// would otherwise grow, and since the last GC it has handed out at
  /// least collectBudget() (the larger of growthBudget and what arrays
  /// held after that GC, so a program whose live memory grows collects a
  /// logarithmic number of times). Without it a loop whose large results
  /// die at once grew the pool by a budget every cycle: 7.9 GB after 2000
  /// ops of 64 MB, one result alive.
  bool collectionDue(llvm::ArrayRef<size_t> bytes) const {
    return allocatedSinceCollect_ >= collectBudget() && wouldGrow(bytes);
  }
  size_t collectBudget() const { return std::max(growthBudget_, usedAtCollect_); }
  /// After a GC, once what it freed went back: the count starts again.
  void noteCollected() {
    allocatedSinceCollect_ = 0;
    usedAtCollect_ = used_;
  }
  /// The least collectBudget() (CUMO_GC_GROWTH_BYTES, default 256 MiB).
  void setGrowthBudget(size_t bytes) { growthBudget_ = bytes; }

private:
  friend class Buffer;
  void release(void *ptr, size_t bytes, bool internal);
  void *obtain(size_t rounded);
  void *takeCached(size_t rounded);

  /// Size classes as DenseMap keys. The default hash of an integer is
  /// key * 37, whose low bits are those of the key: every class is a
  /// multiple of 512, so all of them shared a bucket of any table under
  /// 512 and each lookup probed past all the others (a decode step's 215
  /// blocks spent 80k instructions a token in the pool's two lookups,
  /// callgrind, 2026-12-07). This hash mixes the high bits down.
  struct SizeClassKey : llvm::DenseMapInfo<size_t> {
    static unsigned getHashValue(size_t k) {
      return unsigned((k * 0x9E3779B97F4A7C15ull) >> 32);
    }
  };

  RawAllocator &raw_;
  llvm::DenseMap<size_t, llvm::SmallVector<void *, 4>, SizeClassKey> free_;
  size_t used_ = 0;
  size_t internal_ = 0;
  size_t total_ = 0;
  size_t grownSinceCallback_ = 0;
  size_t allocatedSinceCollect_ = 0;
  size_t usedAtCollect_ = 0;
  size_t growthBudget_ = size_t(256) << 20;
  bool enabled_ = true;
  bool inCallback_ = false;
  std::function<void()> onPressure_;
};

} // namespace cumo
