// Where buffers live and how bytes cross to and from the host. The CPU
// device keeps buffers in host memory; the CUDA device (core/cuda/) in
// device memory from cudaMalloc through the pool.
#pragma once

#include "core/memory_pool.h"

#include <cstdint>
#include <memory>
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
  /// The device's memory; 0 where unknown (the CPU executor's model).
  int64_t memoryBytes = 0;
};

/// Bits of the error word.
enum DeviceErrorBits : uint32_t {
  kErrorDivisionByZero = 1u,
  /// A gather or write at an index array's position out of range.
  kErrorIndexOutOfRange = 2u,
};

/// The second error word when no tagged check failed.
constexpr uint32_t kNoCheckTag = ~0u;

/// What kernels flagged since the last Device::takeErrors.
struct DeviceErrors {
  uint32_t bits = 0;
  uint32_t firstTag = kNoCheckTag;
};

/// A point in a device's queue, recorded after everything queued before
/// it (Cumo::CUDA::Event). The CUDA device's is a timing event on its
/// stream; the CPU device runs work as it is queued, so its is a reading
/// of the host's clock.
class DeviceEvent {
public:
  virtual ~DeviceEvent() = default;
  /// Records it after everything queued so far.
  virtual void record() = 0;
  bool recorded() const { return recorded_; }
  /// Waits until the work queued before it has run.
  virtual void synchronize() = 0;
  /// Whether that work has run, without waiting.
  virtual bool done() = 0;
  /// Milliseconds from `start` to this event (both recorded and done).
  virtual double millisecondsSince(const DeviceEvent &start) const = 0;

protected:
  bool recorded_ = false;
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
  /// Whether everything queued has run, without waiting.
  virtual bool idle() = 0;

  /// Copies that return at once, ordered after queued work, where the host
  /// side is `allocatePinned` memory (the CPU device copies as it is asked).
  virtual void downloadAsync(const Buffer &buffer, size_t offset, size_t bytes,
                             void *dst) = 0;
  virtual void uploadAsync(const Buffer &buffer, size_t offset, const void *src,
                           size_t bytes) = 0;
  /// Host memory the device copies to and from asynchronously (page-locked
  /// on the CUDA device, where allocating it synchronizes the device).
  virtual void *allocatePinned(size_t bytes) = 0;
  virtual void freePinned(void *p) = 0;
  virtual std::unique_ptr<DeviceEvent> newEvent() = 0;

  /// Two words kernels write when a check that needs device data fails (an
  /// integer divided by zero, an index array's value out of range): they
  /// cannot raise, so the next force point reads them and raises. The
  /// first holds DeviceErrorBits (atomicOr); the second the smallest tag of
  /// a failed check that has one (atomicMin; Kernel::checkTag), so the
  /// error names the op that failed, not merely one that ran.
  virtual void *errorWord() = 0;
  /// Reads the words (after the work that sets them) and clears them.
  virtual DeviceErrors takeErrors() = 0;
};

/// The device the engine runs on (set once by graph/ at start-up).
Device &currentDevice();
void setCurrentDevice(Device *device);
bool haveCurrentDevice();

/// Host memory for the CPU executor.
Device *hostDevice();

} // namespace cumo
