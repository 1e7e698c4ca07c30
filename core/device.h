// Where buffers live and how bytes cross to and from the host. The CPU
// device keeps buffers in host memory; the CUDA device (core/cuda/) in
// device memory from cudaMalloc through the pool.
#pragma once

#include "core/memory_pool.h"

#include <cstdint>
#include <string>

namespace cumo {

/// The limits fusion and launch configuration plan against. The CPU
/// executor plans against the default (an H200), so that Cumo.explain gives
/// the same plan on a laptop as on that GPU.
struct DeviceModel {
  std::string name = "NVIDIA H200 (model)";
  int smCount = 132;
  int maxThreadsPerBlock = 1024;
  int ccMajor = 9;
  int ccMinor = 0;
  int64_t l2Bytes = int64_t(60) << 20;
};

class Device {
public:
  virtual ~Device() = default;
  virtual bool isGpu() const = 0;
  virtual const DeviceModel &model() const = 0;
  virtual MemoryPool &pool() = 0;
  /// Copies `bytes` at `offset` of `buffer` into host memory at `dst`,
  /// after the work queued before it has written them.
  virtual void download(const Buffer &buffer, size_t offset, size_t bytes,
                        void *dst) = 0;
  /// Copies host bytes into `buffer`, ordered after queued work.
  virtual void upload(const Buffer &buffer, size_t offset, const void *src,
                      size_t bytes) = 0;
  /// Waits for everything queued.
  virtual void synchronize() = 0;

  /// A word kernels set bits in when a check that needs device data fails
  /// (an integer divided by zero): they cannot raise, so the next force
  /// point reads it and raises.
  virtual void *errorWord() = 0;
  /// Reads the error word (after the work that sets it) and clears it.
  virtual uint32_t takeErrorWord() = 0;
};

/// Bits of the error word.
enum DeviceErrorBits : uint32_t {
  kErrorDivisionByZero = 1u,
};

/// The device the engine runs on (set once by graph/ at start-up).
Device &currentDevice();
void setCurrentDevice(Device *device);
bool haveCurrentDevice();

/// Host memory for the CPU executor.
Device *hostDevice();

} // namespace cumo
