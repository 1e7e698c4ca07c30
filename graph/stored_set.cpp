#include "graph/stored_set.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

namespace cumo {

uint64_t StoredSets::structureKey(llvm::ArrayRef<NodeRef> nodes) {
  // Ops, dtypes, ranks and where each input comes from; a collision only
  // makes a flush store more than it needs, which is harmless.
  llvm::DenseMap<const Node *, uint32_t> pos;
  llvm::hash_code h = llvm::hash_value(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const Node *n = nodes[i].get();
    pos[n] = i;
    h = llvm::hash_combine(h, int(n->op()), int(n->dtype()), n->ndim());
    for (const NodeRef &in : n->inputs()) {
      auto it = pos.find(in.get());
      h = llvm::hash_combine(h, it == pos.end() ? ~0u : i - it->second);
    }
  }
  return h;
}

void StoredSets::settle(llvm::ArrayRef<NodeRef> nodes, llvm::BitVector &stored) {
  uint64_t key = structureKey(nodes);
  auto it = sets_.find(key);
  if (it != sets_.end() && it->second.size() == stored.size()) {
    stored |= it->second;
    it->second = stored;
    return;
  }
  if (sets_.size() > 4096)
    sets_.clear(); // a program that never repeats: keep the map bounded
  sets_[key] = stored;
}

} // namespace cumo
