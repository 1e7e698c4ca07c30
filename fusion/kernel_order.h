// Which kernels of a plan must wait for which: the plan lists its kernels
// in an order that is always correct to run one after another, but a
// kernel need only wait for the earlier ones it shares a buffer with (one
// writes what the other reads or writes). Cumo.explain prints these waits;
// with CUMO_GRAPH_BRANCHES=1 the CUDA executor's graph has those edges and
// no others, so kernels that share nothing (a decode step's mask, its
// cache-position table and its token's embedding) run side by side rather
// than each waiting for the one listed before it (off by default: measured
// slower, README "How it works").
#pragma once

#include "fusion/plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace cumo {

/// The plan buffers one kernel reads and writes, each once, in the order
/// the kernel's fields name them.
struct KernelAccess {
  llvm::SmallVector<uint32_t, 8> reads;
  llvm::SmallVector<uint32_t, 8> writes;
};

/// Everything kernel `k` reads (operands, loads, the tables of its writes
/// through tables, the partials it folds, the arrays it gathers from) and
/// writes (stores, a stored prologue, its reductions and their partials,
/// the reductions it folds).
KernelAccess kernelAccess(const Kernel &k);

/// For each of `kernels` (indices into plan.kernels, in the order they are
/// launched), the positions in `kernels` of the earlier ones it must wait
/// for: every earlier kernel that writes a buffer it reads or writes, or
/// reads a buffer it writes, less those that another of its waits already
/// orders before it (so no edge repeats what a path says). An in-place
/// write's buffer is its donor's memory. Kernels for which `serial` holds
/// also wait for the last such kernel before them (cuBLAS calls, which
/// share a workspace). Ascending in each list.
std::vector<llvm::SmallVector<uint32_t, 2>>
kernelWaits(const Plan &plan, llvm::ArrayRef<uint32_t> kernels,
            llvm::function_ref<bool(uint32_t)> serial);

} // namespace cumo
