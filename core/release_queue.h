// Handles whose Ruby wrappers were collected. A wrapper's free function may
// run inside any Ruby allocation, also in the middle of recording an op, so
// it only queues its handle here; the engine releases the queue at its next
// safe point (before recording, before a flush), never inside the GC.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

namespace cumo {

class ArrayHandle;

class ReleaseQueue {
public:
  static ReleaseQueue &get();
  /// From the GC: no allocation beyond the vector's, no Ruby, no CUDA.
  void push(ArrayHandle *h);
  /// At a safe point: deletes every queued handle. Answers how many.
  size_t drain();
  bool empty() const { return count_ == 0; }
  /// The ArrayHandle::reportedBytes of the handles drained since the last
  /// call.
  size_t takeReleasedBytes() { return std::exchange(releasedBytes_, 0); }

private:
  std::mutex mutex_;
  std::vector<ArrayHandle *> queued_;
  std::vector<ArrayHandle *> draining_;
  size_t count_ = 0;
  size_t releasedBytes_ = 0;
};

} // namespace cumo
