#include "graph/stored_set.h"


namespace cumo {

void StoredSets::settle(uint64_t key, llvm::BitVector &stored) {
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
