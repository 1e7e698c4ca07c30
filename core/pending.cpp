#include "core/pending.h"

#include "llvm/ADT/Hashing.h"

namespace cumo {

PendingList &PendingList::get() {
  static PendingList *list = new PendingList(); // outlives every node
  return *list;
}

uint64_t PendingList::signatureOf(const Node *n) const {
  // What the op is and where its inputs came from, by distance back in the
  // recording order; never values, addresses or extents, so that the same
  // loop body gives the same signatures every iteration.
  llvm::hash_code h = llvm::hash_combine(int(n->op()), int(n->dtype()),
                                         n->ndim());
  for (const NodeRef &in : n->inputs()) {
    uint64_t where = in->isPending() && in->serial ? n->serial - in->serial : 0;
    h = llvm::hash_combine(h, where);
  }
  return h;
}

uint64_t PendingList::windowHash() const {
  llvm::hash_code h = llvm::hash_value(ring_.size());
  for (size_t i = 0; i < ring_.size(); ++i)
    h = llvm::hash_combine(h, ring_[(ringPos_ + i) % ring_.size()]);
  return h;
}

bool PendingList::shouldCut() const {
  if (live_ < limits_.nodes && bytes_ < limits_.bytes)
    return false;
  if (live_ >= limits_.nodes * limits_.hardFactor)
    return true;
  return haveSegmentStart_ && ring_.size() == limits_.window &&
         windowHash() == segmentStart_;
}

void PendingList::add(Node *n) {
  if (flush_ && !flushing_ && (live_ >= limits_.nodes || bytes_ >= limits_.bytes)) {
    if (!haveSegmentStart_ && ring_.size() == limits_.window) {
      // First segment: there is no start to compare with, so the window
      // seen when the budget runs out becomes the point to cut at when it
      // comes round again.
      segmentStart_ = windowHash();
      haveSegmentStart_ = true;
    } else if (shouldCut()) {
      if (live_ >= limits_.nodes * limits_.hardFactor) {
        ++hardFlushes;
        segmentStart_ = windowHash();
      }
      ++budgetFlushes;
      flushing_ = true;
      flush_();
      flushing_ = false;
    }
  }
  n->serial = nextSerial_++;
  n->pendingIndex = uint32_t(nodes_.size());
  nodes_.push_back(n);
  ++live_;
  bytes_ += n->bytes();
  uint64_t sig = signatureOf(n);
  if (ring_.size() < limits_.window) {
    ring_.push_back(sig);
  } else {
    ring_[ringPos_] = sig;
    ringPos_ = (ringPos_ + 1) % ring_.size();
  }
}

void PendingList::remove(Node *n) {
  if (n->pendingIndex == Node::kNotPending)
    return;
  nodes_[n->pendingIndex] = nullptr;
  n->pendingIndex = Node::kNotPending;
  --live_;
  bytes_ -= n->bytes();
}

void PendingList::collect(llvm::SmallVectorImpl<NodeRef> &out) const {
  out.reserve(out.size() + live_);
  for (Node *n : nodes_)
    if (n)
      out.push_back(NodeRef(n));
}

void PendingList::clearAfterFlush() {
  for (Node *n : nodes_)
    if (n)
      n->pendingIndex = Node::kNotPending;
  nodes_.clear();
  live_ = 0;
  bytes_ = 0;
}

} // namespace cumo
