// The stored set of a flush, kept stable across the iterations of a loop.
// Which temporaries a flush must store depends on when Ruby's GC ran, so it
// differs from flush to flush; the plan must not. The rule (DESIGN.md): a
// plan's structure is remembered with the set it stored; a later flush of
// the same structure stores that set again when it covers every live node,
// or the union otherwise, so the set only grows and soon settles.
#pragma once

#include "core/node.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

namespace cumo {

class StoredSets {
public:
  /// Marks in `stored` (one bit per node) what this flush stores: the live
  /// bits given in, widened to the set remembered for `structure` (a key of
  /// the flush's ops and their inputs, PlanCache::keys's `structure`; a
  /// collision only makes a flush store more than it needs, which is
  /// harmless).
  void settle(uint64_t structure, llvm::BitVector &stored);
  size_t size() const { return sets_.size(); }

private:
  llvm::DenseMap<uint64_t, llvm::BitVector> sets_;
};

} // namespace cumo
