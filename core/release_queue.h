// Handles whose Ruby wrappers were collected. A wrapper's free function may
// run inside any Ruby allocation, also in the middle of recording an op, so
// it only queues its handle here; the engine releases the queue at its next
// safe point (before recording, before a flush), never inside the GC.
#pragma once

#include "core/buffer.h"

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace cumo {

class ArrayHandle;
class DeviceEvent;

class ReleaseQueue {
public:
  static ReleaseQueue &get();
  /// From the GC: no allocation beyond the vector's, no Ruby, no CUDA.
  void push(ArrayHandle *h);
  /// From the GC: a pinned host buffer (Cumo::CUDA::PinnedMemory) whose
  /// copy in flight, if any, `copy` marks and whose array's memory
  /// `copying` keeps; freed at the next safe point, after that copy (a
  /// free of pinned memory waits for the device).
  void pushPinned(void *host, std::unique_ptr<DeviceEvent> copy, Ref<Buffer> copying);
  /// From the GC: `release(object)` to run at the next safe point (a loaded
  /// kernel library, which may not be unloaded while its kernels run).
  void pushRelease(void (*release)(void *), void *object);
  /// At a safe point: deletes every queued handle, frees every queued
  /// pinned buffer and runs every queued release. Answers how many handles.
  size_t drain();
  bool empty() const { return count_ == 0; }

private:
  std::mutex mutex_;
  std::vector<ArrayHandle *> queued_;
  std::vector<ArrayHandle *> draining_;
  struct PinnedRelease {
    void *host;
    std::unique_ptr<DeviceEvent> copy;
    Ref<Buffer> copying;
  };
  std::vector<PinnedRelease> pinned_;
  std::vector<std::pair<void (*)(void *), void *>> releases_;
  size_t count_ = 0;
};

} // namespace cumo
