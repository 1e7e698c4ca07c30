// Generated CUDA kernels run on the CPU, for the machines without a GPU (CI,
// and a session whose device is away): the host's C++ compiler builds the
// kernel's source with a prelude that makes a CUDA thread a fiber, a block
// the fibers of one scheduler, __syncthreads and the warp shuffles points
// where every live thread of the block or warp meets, and shared memory
// the block's; blocks run one after another. Device memory is host memory.
//
// It checks what the code generator writes (indexing, the order of folds,
// shared memory, barriers, atomics) against the CPU executor where no GPU
// can; timing and the memory model's subtleties it cannot. A barrier some
// live threads never reach (which a GPU would hang or misbehave on) is an
// error here, not a hang.
#pragma once

#include "fusion/cuda_codegen.h"

#include <string>

namespace cumo::test {

/// Whether kernels can be emulated here (a host compiler was found).
bool emulatorAvailable();

/// Compiles `src` for the CPU (cached by its entry) and runs it with
/// `launch` on the parameter block `params` (host pointers, as packParams
/// writes them). Throws std::runtime_error when the source does not compile
/// or the kernel's threads miss a barrier.
void emulateKernel(const KernelSource &src, const LaunchConfig &launch, const void *params);

} // namespace cumo::test
