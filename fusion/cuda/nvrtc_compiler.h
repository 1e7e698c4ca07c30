// NVRTC with a two-level cache: generated kernel sources compiled to cubins
// once per process (an in-memory map) and once per machine (a directory of
// cubins content-addressed by source, options, architecture and NVRTC
// version). CUDA-only: built when the toolkit is found; this header itself
// needs no CUDA header.
#pragma once

#include "fusion/cuda_codegen.h"

#include "llvm/ADT/ArrayRef.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace cumo {

class NvrtcCompiler {
public:
  static NvrtcCompiler &get();

  /// The cubin of `src` for sm_<ccMajor><ccMinor>. Compile errors throw
  /// Error(ErrorKind::Nvrtc) with the compiler log; the caches only ever
  /// hold successful compiles.
  std::string compileToCubin(const KernelSource &src, int ccMajor, int ccMinor);

  /// The cubins of `sources`, in order, compiled on up to
  /// CUMO_COMPILE_THREADS threads (default: the cores, at most 16). A plan
  /// of a decode step brings a few hundred new kernels at once, and NVRTC
  /// spends most of a second on each; they are independent. The first
  /// source (in order) that fails to compile throws, as compileToCubin.
  std::vector<std::string> compileAll(llvm::ArrayRef<KernelSource> sources,
                                      int ccMajor, int ccMinor);

  /// A user's program (Cumo::CUDA::Compiler#compile_with_cache): its cubin
  /// and, for each name expression ("kernel<float>"), the mangled name NVRTC
  /// lowered it to.
  struct Program {
    std::string cubin;
    std::vector<std::string> lowered;
  };
  /// `source` compiled with `options` for sm_<ccMajor><ccMinor> (unless
  /// the options name an architecture), each of `nameExpressions` added
  /// to the program first. Cached on disk as generated kernels are (in
  /// memory, lib/cumo/cuda.rb's module cache keeps them); compile errors
  /// throw Error(ErrorKind::Nvrtc) with the log. The disk key covers the
  /// source and options, not the files an #include reads: after editing a
  /// header, pass an option that changes (a -D).
  Program compileProgram(const std::string &source, llvm::ArrayRef<std::string> options,
                         llvm::ArrayRef<std::string> nameExpressions, int ccMajor,
                         int ccMinor);

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
  /// What finding one cubin took, counted by the calling thread (Stats
  /// are not atomic).
  enum class Found : uint8_t { InMemory, OnDisk, Compiled };
  /// compileToCubin without touching Stats: safe on any thread.
  std::string cubinFor(const KernelSource &src, const std::string &arch,
                       Found &found);
  static void count(Found found);
  std::string compile(const KernelSource &src, const std::string &arch);

  Program compileUser(const std::string &source, llvm::ArrayRef<std::string> options,
                      llvm::ArrayRef<std::string> nameExpressions, const std::string &arch);

  std::mutex mutex_;
  std::unordered_map<std::string, std::string> memory_;
};

} // namespace cumo
