// Kernels users write in CUDA C (the spec's "Launching Your Own Kernel" and
// "Structs And Template Kernels"): compiled by NVRTC with the engine's
// caches, launched on the stream the engine's own kernels use, after
// everything recorded before them, so a kernel sees what came before and
// what comes after sees it. A kernel may write any array it is handed
// (graph/direct_access.h gives it memory of its own first).
#pragma once

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cumo {

class ArrayHandle;

/// One compiled program: its cubin, and the name expressions it was asked
/// for with the mangled names NVRTC lowered them to. Loaded into the GPU on
/// its first launch, unloaded when the last reference goes (the Ruby
/// Module's and Functions'), at the engine's next safe point once the
/// kernels queued before then have run.
class UserProgram {
public:
  UserProgram(std::string cubin, std::vector<std::string> expressions,
              std::vector<std::string> lowered);
  ~UserProgram();
  UserProgram(const UserProgram &) = delete;
  UserProgram &operator=(const UserProgram &) = delete;

  /// The symbol kernel `name` is looked up by: the lowered name of a name
  /// expression, else `name` itself, which must be one of the program's
  /// kernels. An ArgumentError naming get_function otherwise, listing them.
  std::string symbolOf(const std::string &name) const;
  /// The kernel entry points the cubin defines.
  const std::vector<std::string> &kernels() const { return kernels_; }
  const std::string &cubin() const { return cubin_; }

  /// The loaded kernel `symbol` (a cudaKernel_t), the program loaded on
  /// first use. CUDA executor only.
  void *kernel(const std::string &symbol);

private:
  std::string cubin_;
  std::vector<std::string> expressions_, lowered_, kernels_;
  void *library_ = nullptr; ///< cudaLibrary_t
};

/// `source` compiled with `options` for the engine's device (its model's
/// architecture where no GPU is present), with `nameExpressions` lowered.
/// NVRTC errors throw Error(Nvrtc) with the log; a build without CUDA
/// throws NotImplemented.
std::shared_ptr<UserProgram> compileUserProgram(const std::string &source,
                                                llvm::ArrayRef<std::string> options,
                                                llvm::ArrayRef<std::string> nameExpressions);

/// Raises Cumo::CUDA::RuntimeError naming `op` unless the engine runs on a
/// GPU (an array handed to a kernel is graph/direct_access.h's
/// writableElements).
void requireGpu(const char *op);

struct UserLaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t sharedBytes = 0;
};

/// Each parameter's size in bytes where the driver tells them (CUDA 12.4
/// on), else nullopt. CUDA executor only.
std::optional<std::vector<size_t>> userKernelParameterSizes(UserProgram &program,
                                                            const std::string &symbol);

/// Launches kernel `symbol` of `program` with `args`, each argument's bytes
/// as the kernel takes it (an address, a long long, packed bytes), on the
/// engine's stream. Where the driver tells each parameter's size (CUDA 12.4
/// and later), a count or size that differs is an ArgumentError naming the
/// parameter, before anything runs. On the CPU executor: a Cuda error.
void launchUserKernel(UserProgram &program, const std::string &symbol,
                      llvm::ArrayRef<std::string> args, const UserLaunchShape &shape);

} // namespace cumo
