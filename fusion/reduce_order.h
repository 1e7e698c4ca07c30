// The order in which the generated CUDA kernels fold a reduction, as data
// both executors read. The CUDA kernels fold in this order because that is
// how their threads are laid out (cuda_reduce_codegen.cpp); the CPU
// reference folds in the same order, so that for the device model it plans
// against the two executors agree bit for bit, float sums included. That
// makes the differential tests exact and an iterative solve (which
// amplifies every rounding difference) the same on either executor.
#pragma once

#include "core/device.h"
#include "fusion/plan.h"

#include <cstdint>

namespace cumo {

struct ReduceOrder {
  enum class Kind : uint8_t {
    /// One thread per output folds the output's elements in row-major
    /// order (also every kernel without reductions).
    Sequential,
    /// Each output's elements are dealt to `lanes` accumulators round
    /// robin (element j of the output, counted row-major over the reduced
    /// axes, to lane j % lanes); each folds its share in order; then the
    /// lanes are folded by warpTree (32 lanes: a warp per output) or
    /// blockTree (more: a block per output).
    Lanes,
    /// A full reduction over the whole domain: flat index i goes to thread
    /// i % (blocks * block), which folds its share in order; each block
    /// folds its threads by blockTree into a partial; then partial b goes
    /// to thread b % block of the last block, which folds its share in
    /// order, and blockTree folds those.
    Grid,
  };
  Kind kind = Kind::Sequential;
  int64_t lanes = 1;  ///< Lanes: accumulators per output
  int64_t blocks = 1; ///< Grid: the launch's blocks
  int64_t block = 1;  ///< Grid: threads per block
};

/// The order `k` folds its reductions in on a GPU described by `model`.
ReduceOrder reduceOrder(const Kernel &k, const DeviceModel &model);

/// The warp tree of cumo_k::warp_reduce: for o = 16, 8, 4, 2, 1 lane l
/// takes op(v[l], v[l + o]); answers lane 0. Only the lanes lane 0 reads
/// are computed. Overwrites v[0..31].
template <class A, class Op> A warpTree(A *v, Op op) {
  for (int o = 16; o > 0; o >>= 1)
    for (int l = 0; l < o; ++l)
      v[l] = op(v[l], v[l + o]);
  return v[0];
}

/// cumo_k::block_reduce over `n` values (a multiple of 32, at most 1024):
/// each warp's tree, then the tree of the warps' results padded with the
/// identity to 32. Overwrites v.
template <class A, class Op>
A blockTree(A *v, int64_t n, A identity, Op op) {
  A warps[32];
  int64_t count = n / 32;
  for (int64_t w = 0; w < 32; ++w)
    warps[w] = w < count ? warpTree(v + w * 32, op) : identity;
  return warpTree(warps, op);
}

} // namespace cumo
