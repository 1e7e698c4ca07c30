#include "ops/row_layout.h"

#include <algorithm>

namespace cumo {

namespace {
/// Bytes of accumulator values a lane keeps in registers at most: 32
/// floats or 16 doubles leave a 1024-thread block its 64 registers.
constexpr int64_t kCacheBytes = 128;
constexpr int64_t kMaxLanes = 1024;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
} // namespace

RowLayout rowLayout(int64_t n, DType t, DType acc) {
  // A BFloat row a block takes: two groups a lane (16 elements), so that
  // its kernel has the registers to load the block's next row while it
  // works on this one (fusion/cuda_row_codegen.cpp, `prefetch`).
  // bench/kernel_times variants, H200, 2026-12-06, 4096 x 4096, 128 lanes
  // of four groups against 256 of two reading ahead (528 blocks): layer_norm
  // 30.14 -> 25.48 us, rms_norm 27.15 -> 22.09, softmax 30.00 -> 28.68 (a
  // copy 17.87). 256 lanes without reading ahead were slower for
  // layer_norm and rms_norm (30.90, 27.67), 128 reading ahead level or
  // slower than 256 (28.88, 26.67, 32.60).
  int64_t groupsPerLane = t == DType::BFloat ? 2 : kRowGroupsPerLane;
  return rowLayoutFor(n, int64_t(sizeOf(t)), int64_t(sizeOf(acc)), INT64_MAX, groupsPerLane);
}

RowLayout rowOpLayout(OpKind op, int64_t rows, int64_t n, DType t, DType acc) {
  RowLayout l = rowLayout(n, t, acc);
  // bench/kernel_times variants, H100, 2026-12-07, BFloat 32768 x 1024 (a
  // copy 47.58 us), a warp a row against 64 lanes of two groups reading
  // ahead (2112 blocks): layer_norm 55.55 -> 50.33 us, rms_norm 53.11 ->
  // 51.70; softmax 50.74 -> 55.59, so softmax keeps its warp. Measured at
  // 32768 rows only (15.5 rows a block); from 16384 each block still
  // takes seven or more, so reading ahead has rows to read.
  constexpr int64_t kManyRows = 16384;
  bool norm = op == OpKind::LayerNorm || op == OpKind::RmsNorm;
  if (t != DType::BFloat || !norm || rows < kManyRows || !l.warpPerRow() || l.cachedGroups == 0)
    return l;
  int64_t groups = ceilDiv(n, l.group);
  if (groups > 3 * 32 && groups <= 2 * 64) {
    l.lanes = 64;
    l.cachedGroups = 2;
  }
  return l;
}

RowLayout rowLayoutFor(int64_t n, int64_t elementBytes, int64_t cachedBytes,
                       int64_t maxCached, int64_t groupsPerLane) {
  RowLayout l;
  l.group = std::max<int64_t>(1, 16 / elementBytes);
  int64_t groups = ceilDiv(n, l.group);
  int64_t perElement = cachedBytes > 0 ? cachedBytes : elementBytes;
  int64_t capacity = std::max<int64_t>(
      1, std::min(kCacheBytes / (l.group * perElement), maxCached / l.group));
  // A short row: one warp, shuffles only. The register cache has the
  // same size for every length it holds (lanes past a row's end hold
  // nothing), so a row that grows by one a step keeps its kernel.
  if (groups <= 32 * capacity) {
    l.lanes = 32;
    l.cachedGroups = cachedBytes > 0 ? capacity : 0;
    return l;
  }
  int64_t lanes = 64;
  while (lanes < kMaxLanes && lanes * groupsPerLane < groups)
    lanes *= 2;
  // No more lanes only to hold the row: BFloat quantize_symmetric at 4096 x
  // 4096 held in 256 lanes took 45.4 us against 39.7 read twice by 128
  // (the second read comes from L2; H100, 2026-12-05).
  l.lanes = lanes;
  int64_t held = ceilDiv(groups, lanes);
  l.cachedGroups = cachedBytes > 0 && held <= capacity ? capacity : 0;
  // A layout that aims at fewer groups a lane than the default holds only
  // those, where they take the row: the registers go to the next row.
  if (groupsPerLane < kRowGroupsPerLane && l.cachedGroups > 0 && held <= groupsPerLane)
    l.cachedGroups = groupsPerLane;
  return l;
}

} // namespace cumo
