#include "core/pending.h"

#include <algorithm>


namespace cumo {

PendingList &PendingList::get() {
  static PendingList *list = new PendingList(); // outlives every node
  return *list;
}

namespace {
/// A cheap 64-bit mix (splitmix64's finalizer): recording runs this per op,
/// so it must cost a few instructions, not a general-purpose hash.
inline uint64_t mix(uint64_t h, uint64_t x) {
  uint64_t z = h ^ (x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
} // namespace

uint64_t PendingList::signatureOf(const Node *n) const {
  // What the op is and where its inputs came from, by distance back in the
  // recording order; never values, addresses or extents, so that the same
  // loop body gives the same signatures every iteration.
  uint64_t h = mix(uint64_t(n->op()) | uint64_t(n->dtype()) << 8 |
                       uint64_t(n->ndim()) << 16,
                   n->inputs().size());
  for (const NodeRef &in : n->inputs()) {
    uint64_t where = in->isPending() && in->serial ? n->serial - in->serial : 0;
    h = mix(h, where);
  }
  return h;
}

uint64_t PendingList::windowHash() const {
  uint64_t h = ring_.size();
  for (size_t i = 0; i < ring_.size(); ++i)
    h = mix(h, ring_[(ringPos_ + i) % ring_.size()]);
  return h;
}

bool PendingList::spent(size_t factor) const {
  return live_ >= budgetNodes() * factor || bytes_ >= limits_.bytes * factor;
}

size_t PendingList::budgetNodes() const {
  return readChunk_ ? std::min(readChunk_, limits_.nodes) : limits_.nodes;
}

void PendingList::noteRead() {
  // Reads every R nodes: flush every R / readChunks, so that by the next
  // read all but the last chunk are computed or computing. Reads closer
  // together than two chunks (a Ruby Float scalar read twice an
  // iteration) gain nothing from splitting.
  size_t chunk = sinceRead_ / std::max<size_t>(limits_.readChunks, 1);
  readChunk_ = chunk >= limits_.minReadChunk ? chunk : 0;
  sinceRead_ = 0;
}

void PendingList::add(Node *n) {
  bool opBoundary = opDepth_ == 0 || !opRecorded_;
  opRecorded_ = opDepth_ > 0;
  if (opBoundary && flush_ && !flushing_ && spent(1) &&
      ring_.size() == limits_.window) {
    uint64_t window = windowHash();
    bool cut = false;
    if (!haveSegmentStart_ || (spent(2) && !reanchored_)) {
      // No known phase (the first segment), or the phase a cut used to
      // repeat never came round in a whole budget (another loop runs now):
      // the window of this point becomes the one to cut at when it comes
      // round again. Preferably a point just after a full reduction: the
      // kernel that makes it ends there anyway (what reads a grid's total
      // waits for the whole grid), so a cut there splits no fused kernel.
      if (afterFullReduction_ || spent(3)) {
        segmentStart_ = window;
        haveSegmentStart_ = true;
        reanchored_ = true;
      }
    } else if (window == segmentStart_) {
      cut = true;
    } else if (spent(limits_.hardFactor)) {
      // Nothing repeats: cut here, and look for this window from now on.
      ++hardFlushes;
      segmentStart_ = window;
      cut = true;
    }
    if (cut) {
      ++budgetFlushes;
      flushing_ = true;
      flush_();
      flushing_ = false;
    }
  }
  // Reads stopped (twice the read period without one): the plain budget.
  ++sinceRead_;
  if (readChunk_ && sinceRead_ > 2 * readChunk_ * limits_.readChunks)
    readChunk_ = 0;
  afterFullReduction_ = isReduction(n->op()) && n->ndim() == 0;
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
    if (++ringPos_ == ring_.size())
      ringPos_ = 0;
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
  reanchored_ = false;
  for (Node *n : nodes_)
    if (n)
      n->pendingIndex = Node::kNotPending;
  nodes_.clear();
  live_ = 0;
  bytes_ = 0;
}

} // namespace cumo
