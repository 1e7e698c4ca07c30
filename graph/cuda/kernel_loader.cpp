#include "graph/cuda/kernel_loader.h"

#include "core/cuda/cuda_check.h"
#include "fusion/cuda/nvrtc_compiler.h"
#include "fusion/cuda_codegen.h"

#include <unordered_set>
#include <vector>

namespace cumo {

const LoadedKernel &KernelLoader::get(const Kernel &k, uint64_t key,
                                      const DeviceModel &model) {
  auto it = kernels_.find(key);
  if (it != kernels_.end())
    return it->second;
  KernelSource src = generateCuda(k, model);
  return load(key, src, NvrtcCompiler::get().compileToCubin(src, model.ccMajor, model.ccMinor));
}

void KernelLoader::prefetch(llvm::ArrayRef<const Kernel *> kernels,
                            llvm::ArrayRef<uint64_t> keys, const DeviceModel &model) {
  std::vector<KernelSource> sources;
  std::vector<uint64_t> missing;
  std::unordered_set<uint64_t> seen;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels_.count(keys[i]) || !seen.insert(keys[i]).second)
      continue;
    sources.push_back(generateCuda(*kernels[i], model));
    missing.push_back(keys[i]);
  }
  if (sources.size() < 2)
    return; // get() compiles a lone kernel itself
  std::vector<std::string> cubins =
      NvrtcCompiler::get().compileAll(sources, model.ccMajor, model.ccMinor);
  for (size_t i = 0; i < sources.size(); ++i)
    load(missing[i], sources[i], cubins[i]);
}

const LoadedKernel &KernelLoader::load(uint64_t key, const KernelSource &src,
                                       const std::string &cubin) {
  const std::string &entry = src.entry;
  LoadedKernel loaded;
  loaded.key = key;
  loaded.entry = entry;
  loaded.waitsForPriorGrids = src.source.find(kWaitForPriorGrids) != std::string::npos;
  cudaCheck(cudaLibraryLoadData(&loaded.library, cubin.data(), nullptr, nullptr,
                                0, nullptr, nullptr, 0),
            "cudaLibraryLoadData");
  cudaCheck(cudaLibraryGetKernel(&loaded.kernel, loaded.library, entry.c_str()),
            "cudaLibraryGetKernel");
  return kernels_.emplace(key, std::move(loaded)).first->second;
}

} // namespace cumo
