// The first passes of fusion over the nodes of one flush: which nodes need
// a buffer, at which stage each value becomes available, and which kernel
// computes what. Stages order kernels: a kernel at stage s reads only
// buffers written at earlier stages, so everything one stage needs is
// computed in as few kernels as domains allow.
#pragma once

#include "core/node.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace cumo {

/// Named limits of fusion.
struct FusionLimits {
  /// A value read through a shifted view is recomputed at the shifted
  /// coordinates when its inlined expression costs at most this many ops;
  /// past it, it is stored and read back at the next stage.
  int recomputeBudget = 24;
  /// A value computed at an earlier stage and read by a later one is
  /// stored and loaded back when its inlined expression costs more than
  /// this, so a loop-carried value is never recomputed from its history.
  int crossStageBudget = 4;
  /// Consumers a small product's kernel computes at most (fusion/epilogue.h):
  /// the generated kernel repeats its epilogue for each of up to 16 rows,
  /// so its code grows with both. A decode step's epilogues have one to
  /// three; later consumers run in kernels of their own.
  int epilogueMembers = 16;
  /// An elementwise input whose inlined expression chains this many ops
  /// or more, one after another, is stored and read back at the next
  /// stage, so no kernel recomputes a longer chain: `x = x + 1` a
  /// thousand times in a loop that never reads had every kernel of the
  /// flush recompute x from its start, the last one about 800 adds (880 KB
  /// of source, which NVRTC did not finish in minutes on an H100). Depth,
  /// not cost: the CG stencil's inlined cost passes 256 (p recomputed at
  /// every neighbour) in a chain a few dozen deep.
  int chainDepth = 64;
  /// Values one elementwise kernel computes at most, each a store. Past
  /// it, the same stage and domain start another kernel: a flush of 2000
  /// scalar writes (`a[i] = 1.0` in a loop) had put their 2000 casts in
  /// one kernel of 750 KB of source, which NVRTC took about a minute over.
  int kernelMembers = 32;
};

/// What a flush computes, with the facts every later pass reads.
struct Schedule {
  struct Facts {
    bool stored = false;   ///< a wrapper (or the caller) needs the value
    bool buffered = false; ///< written to a buffer by the plan
    bool box = false;      ///< Update: its target is a slice a box fits
    bool viewReadsBuffer = false; ///< View: reads its input's buffer
    /// A stored Reshape that no kernel writes: its input is stored whole
    /// and the reshape becomes a view of that buffer after the plan runs
    /// (Plan::storedNodes). Only while it is not buffered itself.
    bool aliasesInput = false;
    /// An index write into its base's own buffer (canWriteInPlace, or a
    /// base that is a write of the same flush nothing else reads or
    /// holds): no kernel copies the base first.
    bool inPlace = false;
    int avail = 0; ///< stage from which it can be computed inline
    int ready = 0; ///< stage from which its buffer can be read
    int cost = 1;  ///< ops in its inlined expression (capped)
    int depth = 1; ///< the longest chain of ops in its inlined expression
    int kernel = -1; ///< the kernel that writes its buffer
    /// A stored value an Update writes whole into its slice: it is stored
    /// by whichever kernel computes that Update (index into `nodes`), from
    /// inside the box, so it costs no kernel of its own. Consumers
    /// recompute it rather than read it back.
    int ridesWith = -1;
    /// A member of a row group (fusion/row_groups.h): computed by that
    /// group's Rowwise kernel, at its stage.
    int rowGroup = -1;
    /// A small product with an epilogue, or a member of one
    /// (fusion/epilogue.h): the product's index in `nodes`. Members are
    /// computed by the product's kernel, at its stage, and read from
    /// outside it through their buffers; the product has a buffer only
    /// when Ruby holds it or something outside its epilogue reads it.
    int epilogue = -1;
    /// A row op a small product computes as its first operand
    /// (fusion/prologue.h): the product's index in `nodes`. It has no
    /// kernel of its own, and a buffer only when Ruby holds it.
    int prologue = -1;
  };
  struct KernelSlot {
    enum class Kind : uint8_t { Elementwise, AxisReduce, Scatter, Opaque, Rowwise } kind;
    int stage = 0;
    Shape domain;
    /// Buffered elementwise nodes it stores, full reductions it computes,
    /// the axis reduction or the scatter it runs, a row group's members,
    /// an opaque op (and after it, its epilogue's members): indices into
    /// `nodes`.
    llvm::SmallVector<uint32_t, 4> members;
    std::string why;
    /// An opaque product's prologue: the row op's index in `nodes`, or -1.
    int prologue = -1;
  };

  llvm::SmallVector<NodeRef, 16> nodes; ///< pending, in recording order
  llvm::SmallVector<Facts, 16> facts;
  llvm::DenseMap<const Node *, uint32_t> index;
  llvm::SmallVector<KernelSlot, 4> kernels; ///< in stage order

  bool contains(const Node *n) const { return index.count(n) != 0; }
  const Facts &of(const Node *n) const { return facts[index.find(n)->second]; }
  Facts &of(const Node *n) { return facts[index.find(n)->second]; }
  /// The stage at which a consumer can use input `x` (0 when materialized).
  int inputStage(const Node *x) const;
  /// The node whose buffer holds `x`'s values in row-major order: `x`, or
  /// for a reshape that views its input's buffer (Facts::aliasesInput),
  /// that input's owner.
  const Node *bufferOwner(const Node *x) const;
  /// Whether `x` is computed inline by the kernels that use it.
  static bool isInlineable(const Node *x, const Facts &f);
};

/// Collects every pending node reachable from `roots` (and the roots),
/// in recording order.
void collectPending(llvm::ArrayRef<NodeRef> roots,
                    llvm::SmallVectorImpl<NodeRef> &out);

/// Runs the analysis and grouping passes. `isStored` says which nodes must
/// be written out (wrapped nodes and the targets of the force); `inPlace`,
/// which index writes take their base's buffer (canWriteInPlace; none when
/// null). Both are part of a plan's key.
Schedule schedule(llvm::ArrayRef<NodeRef> nodes,
                  llvm::function_ref<bool(const Node *)> isStored,
                  llvm::function_ref<bool(const Node *)> inPlace = nullptr,
                  const FusionLimits &limits = FusionLimits());

/// Whether index write `n` can write into its base's buffer rather than a
/// copy of it: the base is settled, covers its buffer in row-major order,
/// and nothing but `n` can ever read it (the base node is held by `n`
/// alone and its buffer by the base alone: no array, view or pending op
/// sees it). A decode step's KV-cache writes are, from the second step on;
/// each would otherwise copy the whole cache.
bool canWriteInPlace(const Node &n);

/// Whether an Update's target is a slice a box basis can invert.
bool updateIsBox(const Node *update);

/// Whether gather `x` is computed inline by the kernels that read it, an
/// element read at a position computed there (GatherRead), rather than by
/// an index kernel of its own: its array is settled (a decode step's
/// embedding tables), and its table lies as its result does, or is that
/// many positions in a row. The position table's ops are then inlined too,
/// so `wte[tok, true] + wpe[pos, true]` is one kernel, not four.
bool isInlinedGather(const Node *x);

} // namespace cumo
