// NVRTC with a two-level cache: generated kernel sources compiled to cubins
// once per process (an in-memory map) and once per machine (a directory of
// cubins content-addressed by source, options, architecture and NVRTC
// version). CUDA-only: built when the toolkit is found; this header itself
// needs no CUDA header.
#pragma once

#include "fusion/cuda_codegen.h"

#include <mutex>
#include <string>
#include <unordered_map>

namespace cumo {

class NvrtcCompiler {
public:
  static NvrtcCompiler &get();

  /// The cubin of `src` for sm_<ccMajor><ccMinor>. Compile errors throw
  /// Error(ErrorKind::Nvrtc) with the compiler log; the caches only ever
  /// hold successful compiles.
  std::string compileToCubin(const KernelSource &src, int ccMajor, int ccMinor);

  /// The disk cache directory in use: $CUMO_CACHE_DIR, else
  /// ~/.cache/cumo/kernels. Empty when it cannot be used: it could not be
  /// created, or another user owns it, or others may write to it (a cubin
  /// planted there would run as ours).
  static std::string diskCacheDir();

  /// Forgets the in-process cache, so that the next compile of a source
  /// goes to the disk cache (tests).
  void clearMemoryCacheForTesting();

private:
  NvrtcCompiler() = default;
  std::string compile(const KernelSource &src, const std::string &arch);

  std::mutex mutex_;
  std::unordered_map<std::string, std::string> memory_;
};

} // namespace cumo
