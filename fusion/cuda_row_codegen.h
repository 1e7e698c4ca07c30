// CUDA kernels of the fused row operations (layer_norm, rms_norm, softmax):
// the opaque codegen's branch for them (cuda_opaque_codegen.cpp).
#pragma once

#include "fusion/cuda_kernel_shape.h"
#include "ops/row_layout.h"

#include "llvm/ADT/SmallVector.h"

namespace cumo::cudagen {

/// Threads of a block in the warp-per-row layout: eight rows a block.
constexpr uint32_t kRowsBlock = 256;

bool isRowOp(OpKind op);
/// Fills the row fields of `s` (the layout, the accumulator, vector loads).
void analyzeRow(const Kernel &k, KernelShape &s);
void emitRowEntry(const KernelShape &s, const std::string &entry, std::string &os);
LaunchConfig rowLaunch(const Kernel &k, const DeviceModel &model);
/// The loop over the groups a lane holds in registers (v[k * G + e] is
/// element e of its k-th group, g the group's index in the row), with
/// `body` run for each group the row has; every pass over a cached row is
/// this loop (the row kernels' and the small products' prologue).
void emitCachedGroups(const std::string &body, std::string &os);
/// The folds of row op `op` over the row the lanes hold, laid out as the
/// row fields of `s` say (in the names emitRowEntry declares: n, G, L,
/// lane, CACHED and the cache v, or load(j) when the row is not cached;
/// eps), and the expression of the result at element x (the accumulator's
/// value) of position j, `gamma` and `beta` spelling the parameters at j.
/// The small products' prologue (fusion/prologue.h) folds its rows so too.
std::string emitRowStats(const KernelShape &s, OpKind op, const std::string &gamma,
                         const std::string &beta, std::string &os);
/// The names of the statistics emitRowStats leaves for row op `op`'s
/// result expression (layer_norm: mean, sd; rms_norm: rms; softmax: m,
/// total): what a caller that computes the elements elsewhere passes on.
llvm::SmallVector<const char *, 2> rowStatNames(OpKind op);
/// The launch of `rows` rows laid out as `l`: eight rows a block of 256
/// threads in the warp layout, else a block of l.lanes threads a row;
/// rows past the grid's cap loop. (The row programs of
/// cuda_rowwise_codegen.cpp launch the same way.)
LaunchConfig launchRows(const RowLayout &l, int64_t rows, const DeviceModel &model);

} // namespace cumo::cudagen
