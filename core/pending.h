// The pending set: every node recorded and not yet computed, in recording
// order. It holds nodes weakly, so a pending value nobody can reach any more
// simply disappears. It also watches for the point where a loop that never
// reads should flush (DESIGN.md, "Cutting where the loop repeats").
#pragma once

#include "core/node.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace cumo {

class PendingList {
public:
  /// The budget past which the list looks for a cut point, and the hard
  /// limit at which it cuts wherever it is.
  struct Limits {
    size_t nodes = 1024;
    size_t bytes = size_t(1) << 30;
    size_t hardFactor = 4; ///< hard limit = nodes * hardFactor
    size_t window = 6;     ///< signatures compared at a cut point
    /// A loop that reads every R recorded nodes flushes in chunks of
    /// R / readChunks (at least minReadChunk), so the device computes
    /// while the host records and the read waits only for the last chunk
    /// (CUMO_READ_CHUNKS sets readChunks). Shorter chunks are not worth a
    /// flush: a Ruby Float read twice an iteration of CG is 11 nodes apart.
    size_t readChunks = 4;
    size_t minReadChunk = 32;
  };

  static PendingList &get();

  /// One op's recording. A budget cut happens only before an op's first
  /// node, never between the nodes of one op: a cut there would store the
  /// op's temporaries (an argmax's Int64 candidates, 8 bytes an element),
  /// which fusion would otherwise never write. The Ruby layer opens one
  /// around each engine call; a nested scope is part of the outer op.
  /// Nodes recorded outside any scope (C++ tests) are each an op.
  class OpScope {
  public:
    OpScope() {
      PendingList &l = get();
      if (l.opDepth_++ == 0)
        l.opRecorded_ = false;
    }
    ~OpScope() { --get().opDepth_; }
    OpScope(const OpScope &) = delete;
    OpScope &operator=(const OpScope &) = delete;
  };

  /// Records a new pending node. May first call the flush hook when the
  /// budget is spent and this point repeats the start of the segment.
  void add(Node *n);
  /// A node that died while pending.
  void remove(Node *n);

  /// The live pending nodes, in recording order.
  void collect(llvm::SmallVectorImpl<NodeRef> &out) const;
  /// Called after a flush computed everything: starts a new segment.
  void clearAfterFlush();
  /// The host is about to read (a flush that waits follows): the nodes
  /// recorded since the last read give the loop's read period.
  void noteRead();
  /// The budget in nodes now: Limits::nodes, or a read period's chunk.
  size_t budgetNodes() const;

  size_t liveCount() const { return live_; }
  size_t liveBytes() const { return bytes_; }
  bool empty() const { return live_ == 0; }

  /// graph/ registers the flush that a budget cut runs.
  void setFlushHook(std::function<void()> hook) { flush_ = std::move(hook); }
  Limits &limits() { return limits_; }
  /// Flushes taken because the budget ran out (a cut at a repeat, or the
  /// hard limit).
  uint64_t budgetFlushes = 0;
  uint64_t hardFlushes = 0;

private:
  uint64_t signatureOf(const Node *n) const;
  uint64_t windowHash() const;
  /// Whether `factor` budgets of nodes or bytes are pending.
  bool spent(size_t factor) const;

  std::vector<Node *> nodes_;
  size_t live_ = 0;
  size_t bytes_ = 0;
  uint64_t nextSerial_ = 1;
  // The last `window` signatures, oldest first, and the window that stood
  // when the current segment began.
  std::vector<uint64_t> ring_;
  size_t ringPos_ = 0;
  uint64_t segmentStart_ = 0;
  bool haveSegmentStart_ = false;
  bool reanchored_ = false; ///< this segment already took a new phase
  bool flushing_ = false;
  unsigned opDepth_ = 0;     ///< open OpScopes
  bool opRecorded_ = false;  ///< the open op recorded a node already
  bool afterFullReduction_ = false; ///< the last node was a 0-dim reduction
  size_t sinceRead_ = 0;  ///< nodes recorded since the last read
  size_t readChunk_ = 0;  ///< the chunk budget of a reading loop, or 0
  Limits limits_;
  std::function<void()> flush_;
};

} // namespace cumo
