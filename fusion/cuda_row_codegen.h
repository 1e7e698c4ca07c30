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
/// One pass over a row: `acc` folds `term` (an expression of `x`, the
/// element in the accumulator) with `op` (a cumo_k functor) from
/// `identity`, every lane of the row getting the result; then the
/// statements `finish`, which leave the statistics `stats` (the names the
/// result's expression reads).
struct RowPass {
  std::string acc, op, identity, term, finish;
  llvm::SmallVector<const char *, 2> stats;
};
/// A row op as passes over the row, in order, and the expression of its
/// result at element x of position j (`gamma` and `beta` spelling the
/// parameters at j); `elementOfTerm`, where not empty, the same result
/// from `t`, the last pass's term at the element (softmax: its
/// exponential). `perRow`: statements, after the passes, that the
/// result's expressions read besides the statistics (the row's divisor,
/// cumo_ops::divisor).
struct RowProgram {
  llvm::SmallVector<RowPass, 2> passes;
  std::string perRow, element, elementOfTerm;
};
RowProgram rowProgram(const KernelShape &s, OpKind op, const std::string &gamma,
                      const std::string &beta);
/// Whether row op `op`'s result is a function of its last pass's term
/// (rowProgram gives it an elementOfTerm): softmax. Cheap, for the launch
/// rules that run every flush.
bool rowResultOfLastTerm(OpKind op);
/// A pass over the row the lanes hold, laid out as the row fields of `s`
/// say (in the names emitRowEntry declares: n, G, L, lane, CACHED and the
/// cache v, or load(j) when the row is not cached; eps).
void emitRowPass(const KernelShape &s, const RowPass &p, std::string &os);
/// The launch of `rows` rows laid out as `l`: eight rows a block of 256
/// threads in the warp layout, else a block of l.lanes threads a row;
/// rows past the grid's cap (`warpBlocksPerSm` blocks an SM in the warp
/// layout, 32 in the block layout) loop. (The row programs of
/// cuda_rowwise_codegen.cpp launch the same way, with 32 blocks an SM.)
LaunchConfig launchRows(const RowLayout &l, int64_t rows, const DeviceModel &model,
                        int64_t warpBlocksPerSm = 32);

} // namespace cumo::cudagen
