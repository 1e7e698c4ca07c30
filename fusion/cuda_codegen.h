// CUDA code generation for plan kernels. Sources are generated from the
// kernel's structure only: extents, strides, offsets, slice boxes, scalars
// and pointers are read from a parameter block at run time, so one compiled
// kernel serves every flush of the same structure (DESIGN.md, "Extents are
// parameters too"). This file is plain C++ (no CUDA header): CI generates
// and NVRTC-compiles every kernel without a GPU.
#pragma once

#include "core/device.h"
#include "fusion/plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cumo {

/// How a kernel is launched now (the grid depends on extents).
struct LaunchConfig {
  uint32_t grid = 1;
  uint32_t block = 256;
  uint32_t sharedBytes = 0;
  /// A small product's lanes a column tile (thread per column) or a column
  /// (along k) (fusion/cuda_gemv_codegen.cpp), chosen with its grid and
  /// read by the kernel from its parameters; 0 for every other kernel.
  uint32_t tileLanes = 0;
  /// The along-k layout's columns a lane group folds at once (likewise
  /// chosen with the grid; 0 for every other kernel).
  uint32_t tileColumns = 0;
  bool operator==(const LaunchConfig &o) const {
    return grid == o.grid && block == o.block && sharedBytes == o.sharedBytes &&
           tileLanes == o.tileLanes && tileColumns == o.tileColumns;
  }
};

struct KernelSource {
  std::string entry;  ///< the extern "C" name of the kernel
  std::string source; ///< CUDA C++; #includes "cumo_portable_ops.h"
};

/// The statement with which every generated kernel waits for the kernels
/// before it, before it touches memory: a CUDA graph may start a kernel
/// whose source has it while the one before it finishes (programmatic
/// dependent launch; graph/cuda/cuda_executor.cpp checks the source).
inline constexpr const char *kWaitForPriorGrids = "cumo_k::wait_for_prior_grids();";

/// Whether matmul kernel `k` is a small product (a few rows times a matrix,
/// in a real float class) that the generated kernel computes on the GPU
/// rather than cuBLAS: bound by reading the matrix, and patched on replay
/// where a captured library call is bound to its addresses.
bool isSmallProduct(const Kernel &k);

/// Whether kernel `k` runs in cuBLAS rather than as a generated kernel: a
/// product of a float or complex class that is not small (integer products
/// are always generated). The CUDA executor (CublasMatmul::computes) and
/// explain's waits (serial library calls) ask the same question here.
bool runsInLibrary(const Kernel &k);

/// A structural key: kernels with equal keys have equal sources.
uint64_t kernelKey(const Kernel &k, const DeviceModel &model);

/// The source of `k`. The kernel takes one argument, a pointer to its
/// parameter block in device memory (see packParams).
KernelSource generateCuda(const Kernel &k, const DeviceModel &model);

LaunchConfig launchConfig(const Kernel &k, const DeviceModel &model);

/// Device scratch the kernel needs (reduction partials and counters). The
/// executor zeroes it once when it allocates it; kernels leave counters at
/// zero when they finish.
size_t scratchBytes(const Kernel &k, const LaunchConfig &launch);

/// Appends `k`'s parameter block to `out` (aligned to kParamAlignment from
/// the start of `out`). `buffers[i]` is the device address of plan buffer
/// i; `scratch` the address of this kernel's scratch; `errorWord` the
/// device's error word (Device::errorWord).
constexpr size_t kParamAlignment = 16;
void packParams(const Kernel &k, const LaunchConfig &launch,
                llvm::ArrayRef<void *> buffers, void *scratch, void *errorWord,
                llvm::SmallVectorImpl<char> &out);

namespace cudagen {
struct KernelShape;
struct ParamPatch;
} // namespace cudagen

/// A kernel's structure analyzed once, for the flushes that repeat a cached
/// plan: its key, its launch rule and its parameter packing, without
/// analyzing the kernel again each time.
class PreparedKernel {
public:
  PreparedKernel(const Kernel &k, const DeviceModel &model);
  ~PreparedKernel();
  PreparedKernel(PreparedKernel &&) noexcept;
  uint64_t key() const { return key_; }
  LaunchConfig launch(const Kernel &k, const DeviceModel &model) const;
  /// Packs the parameter block. The first call describes it field by
  /// field; later calls patch a copy of the first (valid because a
  /// prepared kernel is only packed again for the same template).
  void pack(const Kernel &k, const LaunchConfig &launch,
            llvm::ArrayRef<void *> buffers, void *scratch, void *errorWord,
            llvm::SmallVectorImpl<char> &out);

private:
  std::unique_ptr<cudagen::KernelShape> shape_;
  uint64_t key_ = 0;
  /// The last block packed and where its changing fields lie: a repeat
  /// copies it and patches those (a cached template's kernel packs the
  /// same layout, extents and strides every time).
  std::unique_ptr<std::vector<cudagen::ParamPatch>> patches_;
  std::vector<char> lastBlock_;
};

/// NVRTC options every kernel is compiled with (no FMA contraction, so a
/// fused kernel rounds every intermediate as the unfused ops would).
llvm::ArrayRef<const char *> nvrtcOptions();

/// The text of ops/portable_ops.h, handed to NVRTC as the header
/// "cumo_portable_ops.h".
std::string_view portableOpsHeader();

} // namespace cumo
