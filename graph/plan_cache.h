// Plans cached by the exact structure of a flush, so that a loop whose
// flushes repeat (every solver and decode loop) skips scheduling and
// lowering: a flush computes one key in a linear pass, finds the template,
// sets the values that change from flush to flush (Ruby Float scalars,
// seq and rand parameters) and runs it. The key covers everything the plan
// depends on except those values and buffer addresses.
#pragma once

#include "core/node.h"
#include "fusion/plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>

namespace cumo {

/// A plan with positions in place of nodes: it holds no node, so caching
/// it keeps nothing alive.
struct PlanTemplate {
  Plan plan;
  /// Per plan buffer: Input: the leaf ordinal (PlanCache::key's `leaves`);
  /// Output: the position of the node it stores; Temp: -1.
  llvm::SmallVector<int32_t, 8> bufferSource;
  /// Stored nodes: (position, plan buffer).
  llvm::SmallVector<std::pair<uint32_t, uint32_t>, 8> stored;
  /// Per kernel, per parameter and per generator: the node position it is
  /// read from.
  llvm::SmallVector<llvm::SmallVector<uint32_t, 2>, 4> paramSource;
  llvm::SmallVector<llvm::SmallVector<uint32_t, 1>, 4> generatorSource;
  /// Position of the first integer division (its line is reported when a
  /// divisor was zero), or -1.
  int32_t firstIntegerDivision = -1;
  /// The kernels that check positions only the device knows (gathers and
  /// writes at device positions), each with the position of its node: a
  /// flush tags each one (Kernel::checkTag) to name the op that failed.
  llvm::SmallVector<std::pair<uint32_t, uint32_t>, 2> indexChecks;
  uint32_t nodeCount = 0;
  uint32_t leafCount = 0;
  uint64_t lastUse = 0;
};

class PlanCache {
public:
  /// The keys of a flush's DAG, computed in one pass. `nodes` carry their
  /// positions (Node::flushPos, valid for `epoch`).
  struct Keys {
    /// Ops, dtypes, ranks and where inputs come from: what StoredSets
    /// remembers stored sets by.
    uint64_t structure = 0;
    /// Everything a plan depends on but which nodes are stored: shapes,
    /// attributes (view maps, update targets, axes), the kinds of scalars,
    /// input positions, and for materialized inputs the k-th distinct leaf
    /// buffer with its layout. Never scalar values or addresses.
    uint64_t exact = 0;
  };
  static Keys keys(llvm::ArrayRef<NodeRef> nodes, uint64_t epoch,
                   llvm::SmallVectorImpl<const Node *> &leaves);
  /// The exact key with the stored set folded in.
  static uint64_t withStored(uint64_t exact, const llvm::BitVector &stored);

  PlanTemplate *find(uint64_t key, size_t nodeCount, size_t leafCount);
  /// Turns a freshly lowered plan of these nodes into a template.
  PlanTemplate &insert(uint64_t key, Plan plan, llvm::ArrayRef<NodeRef> nodes,
                       llvm::ArrayRef<const Node *> leaves);
  /// Sets the template's per-flush values from `nodes`.
  static void bind(PlanTemplate &t, llvm::ArrayRef<NodeRef> nodes);

  size_t size() const { return templates_.size(); }

private:
  llvm::DenseMap<uint64_t, std::unique_ptr<PlanTemplate>> templates_;
  uint64_t clock_ = 0;
};

} // namespace cumo
