// The CPU executor's device: buffers in host memory, copies are memcpy.
#include "core/device.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace cumo {

namespace {

class AlignedHostAllocator final : public RawAllocator {
public:
  void *allocate(size_t bytes) override {
    // 64-byte alignment: what a vector load or a cache line wants.
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  void deallocate(void *ptr, size_t) override { std::free(ptr); }
  const char *name() const override { return "host memory"; }
};

/// Work on the CPU device has run by the time it is queued: an event is
/// the host clock when it was recorded.
class HostEvent final : public DeviceEvent {
public:
  void record() override {
    at_ = std::chrono::steady_clock::now();
    recorded_ = true;
  }
  void synchronize() override {}
  bool done() override { return true; }
  double millisecondsSince(const DeviceEvent &start) const override {
    const auto &s = static_cast<const HostEvent &>(start);
    return std::chrono::duration<double, std::milli>(at_ - s.at_).count();
  }

private:
  std::chrono::steady_clock::time_point at_;
};

class HostDevice final : public Device {
public:
  HostDevice() : pool_(raw_) {
    // The GPU the CPU executor plans against, and so folds its reductions
    // like (fusion/reduce_order.h): an H200 unless told another SM count,
    // so that a test can make the CPU reference fold like the GPU at hand.
    if (const char *v = std::getenv("CUMO_MODEL_SM_COUNT"))
      if (long n = std::strtol(v, nullptr, 10); n > 0 && n < 100000)
        model_.smCount = int(n);
  }
  bool isGpu() const override { return false; }
  const DeviceModel &model() const override { return model_; }
  MemoryPool &pool() override { return pool_; }
  void download(const Buffer &buffer, size_t offset, size_t bytes,
                void *dst) override {
    if (bytes)
      std::memcpy(dst, static_cast<const char *>(buffer.data()) + offset, bytes);
  }
  void upload(const Buffer &buffer, size_t offset, const void *src,
              size_t bytes) override {
    if (bytes)
      std::memcpy(static_cast<char *>(buffer.data()) + offset, src, bytes);
  }
  void synchronize() override {}
  bool idle() override { return true; }
  void downloadAsync(const Buffer &buffer, size_t offset, size_t bytes, void *dst) override {
    download(buffer, offset, bytes, dst);
  }
  void uploadAsync(const Buffer &buffer, size_t offset, const void *src,
                   size_t bytes) override {
    upload(buffer, offset, src, bytes);
  }
  void *allocatePinned(size_t bytes) override {
    void *p = std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
    if (!p)
      throw std::bad_alloc();
    return p;
  }
  void freePinned(void *p) override { std::free(p); }
  std::unique_ptr<DeviceEvent> newEvent() override { return std::make_unique<HostEvent>(); }
  void *errorWord() override { return errorWords_; }
  DeviceErrors takeErrors() override {
    DeviceErrors e{errorWords_[0], errorWords_[1]};
    errorWords_[0] = 0;
    errorWords_[1] = kNoCheckTag;
    return e;
  }

private:
  AlignedHostAllocator raw_;
  MemoryPool pool_;
  DeviceModel model_;
  uint32_t errorWords_[2] = {0, kNoCheckTag};
};

} // namespace

Device *hostDevice() {
  static HostDevice *device = new HostDevice(); // lives as long as buffers
  return device;
}

} // namespace cumo
