#include "core/release_queue.h"

#include "core/array.h"
#include "core/device.h"

namespace cumo {

ReleaseQueue &ReleaseQueue::get() {
  static ReleaseQueue *queue = new ReleaseQueue();
  return *queue;
}

void ReleaseQueue::push(ArrayHandle *h) {
  std::lock_guard<std::mutex> lock(mutex_);
  queued_.push_back(h);
  ++count_;
}

void ReleaseQueue::pushPinned(void *host, std::unique_ptr<DeviceEvent> copy,
                              Ref<Buffer> copying) {
  std::lock_guard<std::mutex> lock(mutex_);
  pinned_.push_back({host, std::move(copy), std::move(copying)});
  ++count_;
}

void ReleaseQueue::pushRelease(void (*release)(void *), void *object) {
  std::lock_guard<std::mutex> lock(mutex_);
  releases_.emplace_back(release, object);
  ++count_;
}

size_t ReleaseQueue::drain() {
  std::vector<PinnedRelease> pinned;
  std::vector<std::pair<void (*)(void *), void *>> releases;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    draining_.swap(queued_);
    pinned.swap(pinned_);
    releases.swap(releases_);
    count_ = 0;
  }
  for (PinnedRelease &p : pinned) {
    if (p.copy)
      p.copy->synchronize();
    currentDevice().freePinned(p.host);
  }
  for (auto [release, object] : releases)
    release(object);
  size_t n = draining_.size();
  ArrayHandle *const *hs = draining_.data();
  // A GC frees wrappers in batches (thousands in a loop), made long ago and
  // cold by now, and each release chases handle -> storage -> node (several
  // lines) -> buffer, one cache miss after another: the drain was most of
  // the release cost. Prefetch the chain a few handles ahead, a stage
  // apart, so the misses overlap. Every object a prefetch reads through is
  // alive: handle i + k is not deleted before iteration i + k.
  constexpr size_t kStage = 4;
  auto lines = [](const void *p, size_t bytes) {
    const char *c = static_cast<const char *>(p);
    for (size_t off = 0; off < bytes; off += 64)
      __builtin_prefetch(c + off);
    __builtin_prefetch(c + bytes - 1);
  };
  for (size_t i = 0; i < n; ++i) {
    if (i + 4 * kStage < n)
      lines(hs[i + 4 * kStage], sizeof(ArrayHandle));
    if (i + 3 * kStage < n)
      lines(hs[i + 3 * kStage]->storageRef().get(), sizeof(Storage));
    if (i + 2 * kStage < n)
      lines(hs[i + 2 * kStage]->storage().current(), sizeof(Node));
    if (i + kStage < n)
      if (const Buffer *b = hs[i + kStage]->storage().current()->buffer().get())
        __builtin_prefetch(b);
    ArrayHandle *h = hs[i];
    delete h; // may free nodes and buffers: we are at a safe point
  }
  draining_.clear();
  return n;
}

} // namespace cumo
