#include "fusion/kernel_order.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace cumo {

namespace {
void addOnce(llvm::SmallVectorImpl<uint32_t> &v, uint32_t b) {
  if (!llvm::is_contained(v, b))
    v.push_back(b);
}
} // namespace

KernelAccess kernelAccess(const Kernel &k) {
  KernelAccess a;
  for (const Load &l : k.operands)
    addOnce(a.reads, l.buffer);
  for (const Load &l : k.loads)
    addOnce(a.reads, l.buffer);
  for (const Store &st : k.stores)
    if (st.through)
      addOnce(a.reads, st.through->table);
  for (const Fold &f : k.folds)
    addOnce(a.reads, f.partials);
  for (const GatherRead &g : k.gathers)
    addOnce(a.reads, g.buffer);
  for (const Store &st : k.stores)
    addOnce(a.writes, st.buffer);
  if (k.prologue.stored)
    addOnce(a.writes, k.prologue.out.buffer);
  for (const Reduce &r : k.reduces) {
    addOnce(a.writes, r.buffer);
    if (r.partials >= 0)
      addOnce(a.writes, uint32_t(r.partials));
  }
  for (const Fold &f : k.folds)
    addOnce(a.writes, f.buffer);
  return a;
}

std::vector<llvm::SmallVector<uint32_t, 2>>
kernelWaits(const Plan &plan, llvm::ArrayRef<uint32_t> kernels,
            llvm::function_ref<bool(uint32_t)> serial) {
  size_t n = kernels.size();
  // The memory a buffer is: an in-place write's is its donor's.
  auto memoryOf = [&](uint32_t b) {
    int32_t donor = plan.buffers[b].donor;
    return donor >= 0 ? uint32_t(donor) : b;
  };
  // Per memory: the last kernel that wrote it, and those that read it
  // since (positions in `kernels`).
  llvm::DenseMap<uint32_t, uint32_t> lastWriter;
  llvm::DenseMap<uint32_t, llvm::SmallVector<uint32_t, 2>> readersSince;
  // Per kernel: every kernel ordered before it, through any path.
  std::vector<llvm::BitVector> before(n);
  std::vector<llvm::SmallVector<uint32_t, 2>> waits(n);
  int64_t lastSerial = -1;
  for (uint32_t i = 0; i < n; ++i) {
    KernelAccess a = kernelAccess(plan.kernels[kernels[i]]);
    llvm::SmallVector<uint32_t, 8> hazards;
    for (uint32_t b : a.reads)
      if (auto w = lastWriter.find(memoryOf(b)); w != lastWriter.end())
        hazards.push_back(w->second);
    for (uint32_t b : a.writes) {
      uint32_t m = memoryOf(b);
      if (auto w = lastWriter.find(m); w != lastWriter.end())
        hazards.push_back(w->second);
      if (auto r = readersSince.find(m); r != readersSince.end())
        hazards.append(r->second.begin(), r->second.end());
    }
    if (serial(i)) {
      if (lastSerial >= 0)
        hazards.push_back(uint32_t(lastSerial));
      lastSerial = i;
    }
    // Latest first: a kernel already ordered before a later wait (its
    // ancestor) needs no edge of its own.
    std::sort(hazards.begin(), hazards.end(), std::greater<uint32_t>());
    hazards.erase(std::unique(hazards.begin(), hazards.end()), hazards.end());
    before[i].resize(unsigned(n));
    for (uint32_t j : hazards) {
      if (j == i || before[i].test(j))
        continue;
      waits[i].push_back(j);
      before[i].set(j);
      before[i] |= before[j];
    }
    std::reverse(waits[i].begin(), waits[i].end());
    for (uint32_t b : a.reads)
      addOnce(readersSince[memoryOf(b)], i);
    for (uint32_t b : a.writes) {
      uint32_t m = memoryOf(b);
      lastWriter[m] = i;
      readersSince.erase(m);
    }
  }
  return waits;
}

} // namespace cumo
