// Generated kernels, loaded once per process: by structural key, the
// source is generated, compiled (NVRTC, with its memory and disk caches)
// and loaded through the runtime's library API (cudaLibraryLoadData), so
// nothing links the driver library.
#pragma once

#include "core/device.h"
#include "fusion/cuda_codegen.h"
#include "fusion/plan.h"

#include "llvm/ADT/ArrayRef.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <unordered_map>

namespace cumo {

struct LoadedKernel {
  uint64_t key = 0;
  std::string entry;
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  /// Its source waits for the kernels before it before it touches memory
  /// (kWaitForPriorGrids), so a graph may start it early.
  bool waitsForPriorGrids = false;
  /// The function to launch or put in a graph node.
  void *function() const { return reinterpret_cast<void *>(kernel); }
};

class KernelLoader {
public:
  /// The loaded kernel for `k`'s structure (key from kernelKey).
  const LoadedKernel &get(const Kernel &k, uint64_t key, const DeviceModel &model);
  /// Loads every kernel of `kernels` (keys alike) not loaded yet, their
  /// compiles running side by side (NvrtcCompiler::compileAll): a new plan
  /// asks for all of its kernels at once.
  void prefetch(llvm::ArrayRef<const Kernel *> kernels, llvm::ArrayRef<uint64_t> keys,
                const DeviceModel &model);
  size_t size() const { return kernels_.size(); }

private:
  const LoadedKernel &load(uint64_t key, const KernelSource &src, const std::string &cubin);

  std::unordered_map<uint64_t, LoadedKernel> kernels_;
};

} // namespace cumo
