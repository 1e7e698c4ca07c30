#include "graph/device_select.h"

#include "core/error.h"
#include "graph/engine.h"

#include <string>

#ifdef CUMO_HAVE_CUDA
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"

#include <cuda_runtime_api.h>
#endif

namespace cumo {

namespace {
/// cudaSetDevice's choice: the runtime's current device is per thread, and
/// the engine may start on another Ruby thread than the one that chose.
int chosenDevice = -1;
} // namespace

void selectCudaDevice(int ordinal) {
#ifdef CUMO_HAVE_CUDA
  if (Engine::started()) {
    Engine &engine = Engine::get();
    int using_ = engine.gpu() ? static_cast<CudaDevice &>(engine.device()).ordinal() : -1;
    if (using_ == ordinal)
      return;
    opError(ErrorKind::Argument, "cudaSetDevice",
            "the engine already runs on " +
                (using_ < 0 ? std::string("the CPU") : "device " + std::to_string(using_)) +
                ": choose the device before the first array is made (or set "
                "CUDA_VISIBLE_DEVICES)");
  }
  int count = 0;
  cudaCheck(cudaGetDeviceCount(&count), "cudaSetDevice");
  if (ordinal < 0 || ordinal >= count)
    opError(ErrorKind::Argument, "cudaSetDevice",
            "no device " + std::to_string(ordinal) + " (this machine has " + std::to_string(count) +
                ")");
  cudaCheck(cudaSetDevice(ordinal), "cudaSetDevice");
  chosenDevice = ordinal;
#else
  (void)ordinal;
  opError(ErrorKind::Cuda, "cudaSetDevice", "this build has no CUDA runtime");
#endif
}

void applyChosenDevice() {
#ifdef CUMO_HAVE_CUDA
  if (chosenDevice >= 0)
    cudaCheck(cudaSetDevice(chosenDevice), "cudaSetDevice");
#endif
}

void bindThreadToEngineDevice() {
#ifdef CUMO_HAVE_CUDA
  thread_local bool bound = false;
  if (bound || !Engine::started())
    return;
  Engine &engine = Engine::get();
  if (engine.gpu())
    cudaCheck(cudaSetDevice(static_cast<CudaDevice &>(engine.device()).ordinal()),
              "cudaSetDevice");
  bound = true;
#endif
}

int currentCudaDevice() {
#ifdef CUMO_HAVE_CUDA
  if (Engine::started()) {
    Engine &engine = Engine::get();
    return engine.gpu() ? static_cast<CudaDevice &>(engine.device()).ordinal() : -1;
  }
  int ordinal = -1;
  if (cudaGetDevice(&ordinal) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return ordinal;
#else
  return -1;
#endif
}

} // namespace cumo
