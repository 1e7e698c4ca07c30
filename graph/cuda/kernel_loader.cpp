#include "graph/cuda/kernel_loader.h"

#include "core/cuda/cuda_check.h"
#include "fusion/cuda/nvrtc_compiler.h"
#include "fusion/cuda_codegen.h"

namespace cumo {

const LoadedKernel &KernelLoader::get(const Kernel &k, uint64_t key,
                                      const DeviceModel &model) {
  auto it = kernels_.find(key);
  if (it != kernels_.end())
    return it->second;
  KernelSource src = generateCuda(k, model);
  std::string cubin =
      NvrtcCompiler::get().compileToCubin(src, model.ccMajor, model.ccMinor);
  LoadedKernel loaded;
  loaded.key = key;
  loaded.entry = src.entry;
  cudaCheck(cudaLibraryLoadData(&loaded.library, cubin.data(), nullptr, nullptr,
                                0, nullptr, nullptr, 0),
            "cudaLibraryLoadData");
  cudaCheck(cudaLibraryGetKernel(&loaded.kernel, loaded.library, src.entry.c_str()),
            "cudaLibraryGetKernel");
  return kernels_.emplace(key, std::move(loaded)).first->second;
}

} // namespace cumo
