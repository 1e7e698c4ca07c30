#include "fusion/row_program.h"

#include <algorithm>

namespace cumo {

namespace {

/// Elements a lane holds at most. Each pass over the row is unrolled over
/// them, and every op of a sixteen-bit class rounds: at 64 a half
/// layer_norm took ptxas 10 s to compile, at 16 about 1 s (sm_90). Longer
/// rows take a block per row instead of a warp.
constexpr int64_t kMaxCachedElements = 16;

RowRead classifyLoad(const Load &l, const Kernel &k) {
  // A load inside a slice box is read where its predicate holds.
  if (l.index.basis != 0)
    return RowRead::Along;
  size_t last = k.domain.size() - 1;
  if (l.index.strides[last] == 0)
    return RowRead::PerRow;
  for (size_t d = 0; d < last; ++d)
    if (k.domain[d] > 1 && l.index.strides[d] != 0)
      return RowRead::Cached;
  // One row, or the same row for every row.
  return k.domainSize() == k.domain.back() ? RowRead::Cached : RowRead::Along;
}

} // namespace

RowProgram rowProgram(const Kernel &k) {
  RowProgram p;
  int64_t elementBytes = 0, cachedBytes = 0;
  for (const Load &l : k.loads) {
    RowRead r = classifyLoad(l, k);
    p.reads.push_back(r);
    if (r != RowRead::Cached)
      continue;
    int64_t size = int64_t(sizeOf(l.dtype));
    cachedBytes += size;
    elementBytes = elementBytes ? std::min(elementBytes, size) : size;
  }
  if (!elementBytes)
    elementBytes = k.stores.empty() ? 4 : int64_t(sizeOf(k.stores[0].dtype));
  p.layout = rowLayoutFor(k.domain.back(), elementBytes, cachedBytes, kMaxCachedElements);
  return p;
}

} // namespace cumo
