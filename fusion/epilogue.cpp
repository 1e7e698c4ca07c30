#include "fusion/epilogue.h"

#include "core/node.h"
#include "fusion/epilogue_writes.h"
#include "fusion/schedule.h"
#include "ops/matmul.h"

#include "llvm/ADT/DenseMap.h"

namespace cumo {

bool takesEpilogue(const Node *n) {
  return n->op() == OpKind::MatMul &&
         isSmallProduct(n->dtype(), n->input(0)->shape(), n->input(1)->shape());
}

llvm::SmallVector<uint32_t, 4>
findEpilogue(const Schedule &s, uint32_t product,
             llvm::ArrayRef<llvm::SmallVector<uint32_t, 2>> readers, int maxMembers) {
  const Node *p = s.nodes[product].get();
  // The stage the product's kernel runs at: what a member reads from
  // outside must be readable there.
  int stage = s.facts[product].ready - 1;
  llvm::SmallVector<bool, 16> member(s.nodes.size(), false);
  member[product] = true;
  auto isMember = [&](const Node *x) {
    auto it = s.index.find(x);
    return it != s.index.end() && member[it->second];
  };
  llvm::SmallVector<uint32_t, 4> found;
  // An index write of a member's view (fusion/epilogue_writes.h): the
  // member it reads, whose value the kernel must then compute.
  llvm::DenseMap<uint32_t, uint32_t> writeOf;
  // Consumers come after the product in recording order.
  for (uint32_t i = product + 1; i < s.nodes.size() && int(found.size()) < maxMembers; ++i) {
    const Node *n = s.nodes[i].get();
    const Schedule::Facts &f = s.facts[i];
    if (n->op() == OpKind::IndexWrite) {
      if (const Node *from = writeJoinsEpilogue(s, i, stage, isMember)) {
        member[i] = true;
        found.push_back(i);
        writeOf[i] = s.index.find(from)->second;
      }
      continue;
    }
    if (!isElementwise(n->op()) || n->shape() != p->shape() || f.rowGroup >= 0 ||
        f.epilogue >= 0)
      continue;
    bool readsMember = false, fits = true;
    for (const NodeRef &in : n->inputs()) {
      if (isMember(in.get()))
        readsMember = true;
      else
        fits = fits && s.inputStage(in.get()) <= stage;
    }
    if (readsMember && fits) {
      member[i] = true;
      found.push_back(i);
    }
  }
  // Latest first, so that a member's readers are decided before it. A
  // write always pays (it is a kernel otherwise), and so does the member
  // it writes (which reads it through views, not as a reader).
  llvm::SmallVector<bool, 16> keep(s.nodes.size(), false);
  for (size_t k = found.size(); k-- > 0;) {
    uint32_t m = found[k];
    const Schedule::Facts &f = s.facts[m];
    if (auto w = writeOf.find(m); w != writeOf.end()) {
      keep[m] = keep[w->second] = true;
      continue;
    }
    keep[m] = keep[m] || f.stored || f.buffered ||
              llvm::any_of(readers[m], [&](uint32_t r) { return keep[r]; });
  }
  llvm::SmallVector<uint32_t, 4> kept;
  for (uint32_t m : found)
    if (keep[m])
      kept.push_back(m);
  return kept;
}

} // namespace cumo
