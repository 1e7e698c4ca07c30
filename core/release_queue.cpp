#include "core/release_queue.h"

#include "core/array.h"

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

size_t ReleaseQueue::drain() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    draining_.swap(queued_);
    count_ = 0;
  }
  size_t n = draining_.size();
  for (ArrayHandle *h : draining_) {
    releasedBytes_ += h->reportedBytes;
    delete h; // may free nodes and buffers: we are at a safe point
  }
  draining_.clear();
  return n;
}

} // namespace cumo
