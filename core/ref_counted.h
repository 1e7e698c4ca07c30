// The intrusive reference count of nodes and buffers: llvm::RefCountedBase's
// protocol (Retain, Release, deleting itself at zero, so Ref<T> holds it),
// plus how many references there are. An index write may take its base's
// buffer for its own only when nothing else can see that buffer: the base
// node held by the write alone, the buffer by the base alone
// (graph/engine.cpp, in-place writes).
#pragma once

#include <cassert>

namespace cumo {

template <class Derived> class RefCounted {
public:
  void Retain() const { ++count_; }
  void Release() const {
    assert(count_ > 0 && "released more often than retained");
    if (--count_ == 0)
      delete static_cast<const Derived *>(this);
  }
  /// The references held now.
  unsigned useCount() const { return count_; }

protected:
  RefCounted() = default;
  RefCounted(const RefCounted &) {}
  RefCounted &operator=(const RefCounted &) = delete;
  ~RefCounted() = default;

private:
  mutable unsigned count_ = 0;
};

} // namespace cumo
