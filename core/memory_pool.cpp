#include "core/memory_pool.h"

#include "core/error.h"

namespace cumo {

namespace {
// The pool asks for a GC after it has grown by this much without one, so
// that wrappers the GC has not yet reached return their blocks before the
// pool takes more from the device.
constexpr size_t kGrowthBeforeCallback = size_t(256) << 20;
} // namespace

Buffer::~Buffer() {
  if (pool_)
    pool_->release(ptr_, bytes_, internal_);
}

MemoryPool::~MemoryPool() { freeCached(); }

size_t MemoryPool::roundedSize(size_t bytes) {
  if (bytes == 0)
    return 0;
  constexpr size_t kSmall = 512;
  if (bytes <= (size_t(1) << 20))
    return (bytes + kSmall - 1) / kSmall * kSmall;
  // Larger blocks: eight classes per power of two, so at most 12.5% waste.
  size_t top = size_t(1) << (63 - __builtin_clzll(bytes - 1) + 1);
  size_t step = top / 16;
  return (bytes + step - 1) / step * step;
}

void *MemoryPool::takeCached(size_t rounded) {
  auto it = free_.find(rounded);
  if (it == free_.end() || it->second.empty())
    return nullptr;
  void *p = it->second.pop_back_val();
  return p;
}

Ref<Buffer> MemoryPool::allocate(size_t bytes) {
  size_t rounded = roundedSize(bytes);
  if (rounded == 0)
    return Ref<Buffer>(new Buffer(nullptr, nullptr, 0));
  void *p = obtain(rounded);
  used_ += rounded;
  allocatedSinceCollect_ += rounded;
  return Ref<Buffer>(new Buffer(this, p, rounded));
}

Ref<Buffer> MemoryPool::allocateInternal(size_t bytes) {
  size_t rounded = roundedSize(bytes);
  if (rounded == 0)
    return Ref<Buffer>(new Buffer(nullptr, nullptr, 0, true));
  void *p = obtain(rounded);
  internal_ += rounded;
  return Ref<Buffer>(new Buffer(this, p, rounded, true));
}

bool MemoryPool::wouldGrow(llvm::ArrayRef<size_t> bytes) const {
  llvm::SmallDenseMap<size_t, size_t, 8, SizeClassKey> wanted;
  for (size_t b : bytes)
    if (size_t rounded = roundedSize(b))
      ++wanted[rounded];
  for (auto [rounded, count] : wanted) {
    auto it = free_.find(rounded);
    if (!enabled_ || it == free_.end() || it->second.size() < count)
      return true;
  }
  return false;
}

void *MemoryPool::obtain(size_t rounded) {
  void *p = enabled_ ? takeCached(rounded) : nullptr;
  if (!p) {
    if (onPressure_ && !inCallback_ &&
        grownSinceCallback_ + rounded > kGrowthBeforeCallback) {
      inCallback_ = true;
      onPressure_();
      inCallback_ = false;
      grownSinceCallback_ = 0;
      noteCollected();
      p = takeCached(rounded);
    }
  }
  if (!p) {
    p = raw_.allocate(rounded);
    if (!p) {
      freeCached();
      if (onPressure_ && !inCallback_) {
        inCallback_ = true;
        onPressure_();
        inCallback_ = false;
        p = takeCached(rounded);
      }
      if (!p)
        p = raw_.allocate(rounded);
      if (!p)
        throw Error(ErrorKind::OutOfMemory,
                    std::string("[") + raw_.name() + "] out of memory allocating " +
                        std::to_string(rounded) + " bytes (pool holds " +
                        std::to_string(total_) + ")");
    }
    total_ += rounded;
    grownSinceCallback_ += rounded;
  }
  return p;
}

void MemoryPool::release(void *ptr, size_t bytes, bool internal) {
  (internal ? internal_ : used_) -= bytes;
  if (!enabled_) {
    raw_.deallocate(ptr, bytes);
    total_ -= bytes;
    return;
  }
  free_[bytes].push_back(ptr);
}

void MemoryPool::freeCached() {
  for (auto &entry : free_) {
    for (void *p : entry.second) {
      raw_.deallocate(p, entry.first);
      total_ -= entry.first;
    }
    entry.second.clear();
  }
  free_.clear();
}

void MemoryPool::setEnabled(bool on) {
  enabled_ = on;
  if (!on)
    freeCached();
}

} // namespace cumo
