// The CUDA device: memory from cudaMalloc through the caching pool, one
// stream for everything the engine queues, and a pinned staging buffer for
// reads, so that a read is one copy and one wait.
#pragma once

#include "core/device.h"

#include <cuda_runtime_api.h>

#include <string>

namespace cumo {

/// What fusion and launch configuration plan against, for a device of
/// properties `prop`.
DeviceModel deviceModelOf(const cudaDeviceProp &prop);

class CudaDevice final : public Device {
public:
  /// The device, or nullptr with `whyNot` set when there is no usable GPU
  /// (no driver, no device, CUDA_VISIBLE_DEVICES empty ...).
  static CudaDevice *open(std::string &whyNot);

  bool isGpu() const override { return true; }
  const DeviceModel &model() const override { return model_; }
  MemoryPool &pool() override { return pool_; }
  void download(const Buffer &buffer, size_t offset, size_t bytes,
                void *dst) override;
  void upload(const Buffer &buffer, size_t offset, const void *src,
              size_t bytes) override;
  void synchronize() override;
  bool idle() override;
  void downloadAsync(const Buffer &buffer, size_t offset, size_t bytes, void *dst) override;
  void uploadAsync(const Buffer &buffer, size_t offset, const void *src,
                   size_t bytes) override;
  void *allocatePinned(size_t bytes) override;
  void freePinned(void *p) override;
  std::unique_ptr<DeviceEvent> newEvent() override;
  void *errorWord() override { return errorWord_; }
  DeviceErrors takeErrors() override;

  cudaStream_t stream() const { return stream_; }
  int ordinal() const { return ordinal_; }
  /// Waits for `event` with the interpreter lock released.
  void wait(cudaEvent_t event);
  /// A pinned host buffer of at least `bytes`, reused across reads.
  void *pinned(size_t bytes);

private:
  CudaDevice(int ordinal, const cudaDeviceProp &prop);
  class CudaAllocator final : public RawAllocator {
  public:
    void *allocate(size_t bytes) override;
    void deallocate(void *ptr, size_t bytes) override;
    const char *name() const override { return "cudaMalloc"; }
  };

  int ordinal_;
  DeviceModel model_;
  CudaAllocator raw_;
  MemoryPool pool_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t readDone_ = nullptr;
  void *errorWord_ = nullptr; ///< device memory, the two words
  void *pinned_ = nullptr;
  size_t pinnedBytes_ = 0;
};

} // namespace cumo
