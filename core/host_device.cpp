// The CPU executor's device: buffers in host memory, copies are memcpy.
#include "core/device.h"

#include <cstdlib>
#include <cstring>

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
