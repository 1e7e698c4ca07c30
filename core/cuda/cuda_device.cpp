#include "core/cuda/cuda_device.h"

#include "core/cuda/cuda_check.h"
#include "core/host_hooks.h"
#include "core/stats.h"

#include <cstring>

namespace cumo {

void *CudaDevice::CudaAllocator::allocate(size_t bytes) {
  void *p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return nullptr;
  }
  cudaCheck(err, "cudaMalloc");
  Stats::get().bytes_allocated += bytes;
  return p;
}

void CudaDevice::CudaAllocator::deallocate(void *ptr, size_t) {
  cudaFree(ptr);
}

CudaDevice *CudaDevice::open(std::string &whyNot) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    whyNot = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    cudaGetLastError();
    return nullptr;
  }
  if (count == 0) {
    whyNot = "no CUDA device";
    return nullptr;
  }
  int ordinal = 0;
  cudaCheck(cudaGetDevice(&ordinal), "cudaGetDevice");
  cudaDeviceProp prop;
  cudaCheck(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
  return new CudaDevice(ordinal, prop);
}

DeviceModel deviceModelOf(const cudaDeviceProp &prop) {
  DeviceModel m;
  m.name = prop.name;
  m.smCount = prop.multiProcessorCount;
  m.maxThreadsPerBlock = prop.maxThreadsPerBlock;
  m.ccMajor = prop.major;
  m.ccMinor = prop.minor;
  m.l2Bytes = prop.l2CacheSize;
  m.memoryBytes = int64_t(prop.totalGlobalMem);
  return m;
}

CudaDevice::CudaDevice(int ordinal, const cudaDeviceProp &prop)
    : ordinal_(ordinal), model_(deviceModelOf(prop)), pool_(raw_) {
  cudaCheck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
            "cudaStreamCreate");
  cudaCheck(cudaEventCreateWithFlags(&readDone_, cudaEventDisableTiming),
            "cudaEventCreate");
  cudaCheck(cudaMalloc(&errorWord_, 2 * sizeof(uint32_t)), "cudaMalloc");
  cudaCheck(cudaMemset(errorWord_, 0, sizeof(uint32_t)), "cudaMemset");
  cudaCheck(cudaMemset(static_cast<uint32_t *>(errorWord_) + 1, 0xff, sizeof(uint32_t)),
            "cudaMemset");
}

DeviceErrors CudaDevice::takeErrors() {
  uint32_t w[2] = {0, kNoCheckTag};
  Ref<Buffer> words(new Buffer(nullptr, errorWord_, sizeof w));
  download(*words, 0, sizeof w, w);
  if (w[0]) {
    cudaCheck(cudaMemsetAsync(errorWord_, 0, sizeof(uint32_t), stream_),
              "cudaMemsetAsync");
    cudaCheck(cudaMemsetAsync(static_cast<uint32_t *>(errorWord_) + 1, 0xff,
                              sizeof(uint32_t), stream_),
              "cudaMemsetAsync");
  }
  return {w[0], w[1]};
}

void *CudaDevice::pinned(size_t bytes) {
  if (bytes <= pinnedBytes_)
    return pinned_;
  size_t want = std::max(bytes, pinnedBytes_ * 2);
  want = std::max<size_t>(want, 1 << 16);
  if (pinned_) {
    // Freeing pinned memory synchronizes; it only happens as reads grow.
    cudaCheck(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    cudaFreeHost(pinned_);
    pinned_ = nullptr;
    pinnedBytes_ = 0;
  }
  cudaCheck(cudaHostAlloc(&pinned_, want, cudaHostAllocDefault), "cudaHostAlloc");
  pinnedBytes_ = want;
  return pinned_;
}

void CudaDevice::wait(cudaEvent_t event) {
  cudaError_t err = cudaSuccess;
  if (cudaEventQuery(event) == cudaErrorNotReady)
    HostHooks::get().runBlocking([&] { err = cudaEventSynchronize(event); });
  else
    err = cudaEventSynchronize(event);
  cudaCheck(err, "cudaEventSynchronize");
}

void CudaDevice::download(const Buffer &buffer, size_t offset, size_t bytes,
                          void *dst) {
  if (bytes == 0)
    return;
  void *stage = pinned(bytes);
  cudaCheck(cudaMemcpyAsync(stage, static_cast<const char *>(buffer.data()) + offset,
                            bytes, cudaMemcpyDeviceToHost, stream_),
            "cudaMemcpyAsync");
  cudaCheck(cudaEventRecord(readDone_, stream_), "cudaEventRecord");
  wait(readDone_);
  std::memcpy(dst, stage, bytes);
}

void CudaDevice::upload(const Buffer &buffer, size_t offset, const void *src,
                        size_t bytes) {
  if (bytes == 0)
    return;
  cudaCheck(cudaMemcpyAsync(static_cast<char *>(buffer.data()) + offset, src,
                            bytes, cudaMemcpyHostToDevice, stream_),
            "cudaMemcpyAsync");
}

void CudaDevice::downloadAsync(const Buffer &buffer, size_t offset, size_t bytes, void *dst) {
  if (bytes)
    cudaCheck(cudaMemcpyAsync(dst, static_cast<const char *>(buffer.data()) + offset, bytes,
                              cudaMemcpyDeviceToHost, stream_),
              "cudaMemcpyAsync");
}

void CudaDevice::uploadAsync(const Buffer &buffer, size_t offset, const void *src,
                             size_t bytes) {
  if (bytes)
    cudaCheck(cudaMemcpyAsync(static_cast<char *>(buffer.data()) + offset, src, bytes,
                              cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync");
}

void *CudaDevice::allocatePinned(size_t bytes) {
  void *p = nullptr;
  cudaCheck(cudaHostAlloc(&p, std::max<size_t>(bytes, 1), cudaHostAllocDefault),
            "cudaHostAlloc");
  return p;
}

void CudaDevice::freePinned(void *p) {
  // (cudaFreeHost waits for the device: a copy in flight finishes first.)
  if (p)
    cudaCheck(cudaFreeHost(p), "cudaFreeHost");
}

namespace {
/// The answer of a query of queued work (cudaEventQuery, cudaStreamQuery):
/// false while it has not run (clearing that "error", which is none), true
/// once it has; any other error raised.
bool finished(cudaError_t err, const char *call) {
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  cudaCheck(err, call);
  return true;
}

/// A timing event recorded on the device's stream.
class CudaEvent final : public DeviceEvent {
public:
  explicit CudaEvent(CudaDevice *device) : device_(device) {
    cudaCheck(cudaEventCreate(&event_), "cudaEventCreate");
  }
  ~CudaEvent() override {
    if (event_)
      cudaEventDestroy(event_);
  }
  void record() override {
    cudaCheck(cudaEventRecord(event_, device_->stream()), "cudaEventRecord");
    recorded_ = true;
  }
  void synchronize() override {
    if (recorded_)
      device_->wait(event_);
  }
  bool done() override {
    return !recorded_ || finished(cudaEventQuery(event_), "cudaEventQuery");
  }
  double millisecondsSince(const DeviceEvent &start) const override {
    float ms = 0;
    cudaCheck(cudaEventElapsedTime(&ms, static_cast<const CudaEvent &>(start).event_, event_),
              "cudaEventElapsedTime");
    return ms;
  }

private:
  CudaDevice *device_;
  cudaEvent_t event_ = nullptr;
};

} // namespace

std::unique_ptr<DeviceEvent> CudaDevice::newEvent() { return std::make_unique<CudaEvent>(this); }

bool CudaDevice::idle() { return finished(cudaStreamQuery(stream_), "cudaStreamQuery"); }

void CudaDevice::synchronize() {
  cudaError_t err = cudaSuccess;
  HostHooks::get().runBlocking([&] { err = cudaStreamSynchronize(stream_); });
  cudaCheck(err, "cudaStreamSynchronize");
}

} // namespace cumo
