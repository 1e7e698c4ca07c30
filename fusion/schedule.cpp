#include "fusion/schedule.h"

#include "core/array.h"
#include "core/error.h"
#include "fusion/epilogue.h"
#include "fusion/library_epilogue.h"
#include "fusion/prologue.h"
#include "fusion/row_groups.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>

namespace cumo {

namespace {
constexpr int kCostCap = 1 << 20;
/// The ready stage of a value consumers must recompute, never read.
constexpr int kNeverReady = 1 << 30;

/// Views and reshapes read another node's values where they lie.
bool isViewLike(const Node *n) {
  OpCategory c = opCategory(n->op());
  return c == OpCategory::View || c == OpCategory::Reshape;
}

bool isFullReduction(const Node *n) {
  const Node *in = n->input(0);
  return int64_t(n->extra().axes.size()) == in->ndim();
}
} // namespace

bool canWriteInPlace(const Node &n) {
  if (n.op() != OpKind::IndexWrite || n.size() == 0)
    return false;
  const Node &base = *n.input(0);
  return base.isMaterialized() && base.useCount() == 1 && base.buffer() &&
         base.buffer()->useCount() == 1 && !base.buffer()->internal() &&
         base.layout().isWhole(base.size()) && base.dtype() == n.dtype() &&
         base.buffer()->bytes() >= n.bytes();
}

bool updateIsBox(const Node *u) {
  const Layout &target = u->extra().target;
  auto m = layoutAsAffine(target, u->shape());
  if (!m)
    return false;
  for (int64_t d = 0; d < m->outRank; ++d) {
    if (target.shape[d] <= 1)
      continue;
    bool mapped = false;
    for (int64_t k = 0; k < m->inRank; ++k)
      mapped |= m->at(k, d) != 0;
    if (!mapped)
      return false; // a broadcast target writes one element many times
  }
  return true;
}

bool isInlinedGather(const Node *x) {
  if (x->op() != OpKind::Gather || !x->input(0)->isMaterialized())
    return false;
  const Node *table = x->input(1);
  return table->shape() == x->shape() || (table->ndim() == 1 && table->size() == x->size());
}

bool Schedule::isInlineable(const Node *x, const Facts &f) {
  switch (opCategory(x->op())) {
  case OpCategory::Reduce:
    return false;
  case OpCategory::Opaque:
    return isInlinedGather(x);
  case OpCategory::Update:
    return f.box;
  default:
    return true;
  }
}

const Node *Schedule::bufferOwner(const Node *x) const {
  for (;;) {
    auto it = index.find(x);
    if (it == index.end() || !facts[it->second].aliasesInput ||
        facts[it->second].buffered)
      return x;
    x = x->input(0);
  }
}

int Schedule::inputStage(const Node *x) const {
  auto it = index.find(x);
  if (it == index.end())
    return 0; // materialized: readable anywhere
  const Facts &f = facts[it->second];
  // A row group's or an epilogue's member is read from outside its
  // kernel, once written.
  if (f.rowGroup >= 0 || f.epilogue >= 0)
    return f.ready;
  return isInlineable(x, f) ? f.avail : f.ready;
}

void collectPending(llvm::ArrayRef<NodeRef> roots,
                    llvm::SmallVectorImpl<NodeRef> &out) {
  llvm::DenseSet<const Node *> seen;
  llvm::SmallVector<Node *, 32> stack;
  for (const NodeRef &r : roots)
    if (r && r->isPending() && seen.insert(r.get()).second)
      stack.push_back(r.get());
  size_t first = out.size();
  while (!stack.empty()) {
    Node *n = stack.pop_back_val();
    out.push_back(NodeRef(n));
    for (const NodeRef &in : n->inputs())
      if (in->isPending() && seen.insert(in.get()).second)
        stack.push_back(in.get());
  }
  std::sort(out.begin() + first, out.end(),
            [](const NodeRef &a, const NodeRef &b) {
              return a->serial < b->serial;
            });
}

namespace {

class Scheduler {
public:
  Scheduler(Schedule &s, const FusionLimits &limits) : s_(s), limits_(limits) {}

  void analyze(llvm::function_ref<bool(const Node *)> isStored) {
    collectReaders();
    collectSlicesUpdated();
    for (uint32_t i = 0; i < s_.nodes.size(); ++i)
      s_.facts[i].stored = isStored(s_.nodes[i].get());
    markChainedWrites();
    for (uint32_t i = 0; i < s_.nodes.size(); ++i) {
      Node *n = s_.nodes[i].get();
      Schedule::Facts &f = s_.facts[i];
      analyzeNode(n, f);
      placeStored(n, f);
    }
  }

  /// An index write whose base is a write of this flush that nothing else
  /// reads or holds (`a[i] = x; a[j] = y` before a read: the second's base
  /// is the first's result) writes into its base's buffer: the base's
  /// kernel wrote the whole array there a stage before, so a copy of it
  /// would only repeat that (a loop of n writes copied the array n times).
  void markChainedWrites() {
    for (uint32_t i = 0; i < s_.nodes.size(); ++i) {
      const Node *n = s_.nodes[i].get();
      if (n->op() != OpKind::IndexWrite || s_.facts[i].inPlace)
        continue;
      auto it = s_.index.find(n->input(0));
      if (it == s_.index.end())
        continue;
      const Node *base = n->input(0);
      bool wholeWrite = base->op() == OpKind::IndexWrite ||
                        (base->op() == OpKind::Update && !updateIsBox(base));
      if (wholeWrite && !s_.facts[it->second].stored && readers_[it->second].size() == 1 &&
          base->dtype() == n->dtype() && base->shape() == n->shape())
        s_.facts[i].inPlace = true;
    }
  }

  /// A stored value gets a buffer, or views its input's (aliasesInput).
  void placeStored(const Node *n, Schedule::Facts &f) {
    if (!f.stored)
      return;
    if (aliasesInput(n))
      f.aliasesInput = true;
    else
      requireBuffer(n, f);
  }

  /// A stored reshape of a value this plan buffers is the same bytes in
  /// another shape: rather than a kernel that copies them (one per held
  /// `(x.dot(w) + b).reshape(...)` of a decode step), the input is stored
  /// whole and the reshape views its buffer.
  bool aliasesInput(const Node *n) {
    if (n->op() != OpKind::Reshape)
      return false;
    const Node *x = s_.bufferOwner(n->input(0));
    if (!s_.contains(x))
      return false;
    Schedule::Facts &in = s_.of(x);
    if (!in.buffered)
      return false;
    in.stored = true;
    return true;
  }

  /// Pattern recognition (fusion/row_groups.h): each row group becomes
  /// one Rowwise kernel at the stage its inputs from outside allow. Every
  /// member is computed there; a member gets a buffer only when Ruby holds
  /// it or something outside the group reads it, and from the stage after.
  void applyRowGroups();

  /// Epilogues (fusion/epilogue.h), product by product in recording
  /// order: each product's consumers that join it are computed by its
  /// kernel, at its stage, and the nodes outside are analyzed again with
  /// them placed (their readers may run a stage earlier), which the next
  /// product's stage depends on.
  void applyEpilogues();

  /// Prologues (fusion/prologue.h): a row op that only a small product
  /// reads, as its first operand, is computed by the product's kernel;
  /// the product then reads the row op's inputs, and may run a stage
  /// earlier.
  void applyPrologues();

  void group();

  /// Analyzes again every node outside the row groups, with the groups'
  /// members placed.
  void reanalyzeOutside();
  /// Index writes of one stage at the positions of one table, of values
  /// alike in shape and class (a decode layer's key and value cache writes
  /// at the current position) are one kernel: their slots become one whose
  /// members are the writes, in recording order.
  void mergeSiblingWrites(llvm::SmallVectorImpl<Schedule::KernelSlot> &slots);
  /// Places epilogue member `m` at its product's stage.
  void placeEpilogueMember(uint32_t m);
  /// An expensive value from outside a row group is stored rather than
  /// recomputed by every pass over the row.
  void limitGroupInputs(const RowGroup &group, int stage);

  /// An elementwise input of a row group that Ruby holds (a temporary the
  /// GC has not collected yet, `x * x` before its mean) and that only the
  /// group reads is stored by the group's kernel rather than by one of its
  /// own: it joins the group.
  void adoptHeldInputs(llvm::MutableArrayRef<RowGroup> groups);

private:
  struct PlacedGroup {
    RowGroup group;
    int stage = 0;
  };
  llvm::SmallVector<PlacedGroup, 2> rowGroups_;
  /// Per product with an epilogue (by index): its members.
  llvm::DenseMap<uint32_t, llvm::SmallVector<uint32_t, 4>> epilogues_;
  /// Per product with a prologue (by index): the row op's index.
  llvm::DenseMap<uint32_t, uint32_t> prologues_;
  /// Per node, the nodes that read it (collectReaders).
  llvm::SmallVector<llvm::SmallVector<uint32_t, 2>, 16> readers_;

  /// Whether `x` is a row op that product `n` computes (applyPrologues).
  bool isPrologueOf(const Node *x, const Node *n) const {
    auto it = s_.index.find(x);
    return it != s_.index.end() && s_.facts[it->second].prologue >= 0 &&
           s_.nodes[uint32_t(s_.facts[it->second].prologue)].get() == n;
  }
  /// The addend of product `n`'s library epilogue (fusion/library_epilogue.h),
  /// or null.
  const Node *libraryAddendOf(const Node *n) const {
    if (!takesLibraryEpilogue(n))
      return nullptr;
    // (Asked while the product's facts are analyzed afresh: epilogues_
    // says whether it has one.)
    auto it = s_.index.find(n);
    if (it == s_.index.end())
      return nullptr;
    auto members = epilogues_.find(it->second);
    return members == epilogues_.end()
               ? nullptr
               : libraryAddend(n, s_.nodes[members->second.front()].get());
  }
  /// Row op `x` runs in product `p`'s kernel, at its stage: read from its
  /// buffer (when it has one) from the stage after.
  void placePrologue(uint32_t x, const Schedule::Facts &p) {
    Schedule::Facts &f = s_.facts[x];
    f.avail = p.ready - 1;
    f.ready = p.ready;
    f.buffered = f.stored;
    f.cost = 1;
  }

  void requireBuffer(const Node *n, Schedule::Facts &f) {
    if (f.ridesWith >= 0) {
      // Something reads its buffer after all: it is stored where it is
      // computed, like any other value.
      f.ridesWith = -1;
      f.ready = f.avail + 1;
    }
    if (f.buffered)
      return;
    f.buffered = true;
    if (Schedule::isInlineable(n, f))
      f.ready = f.avail + 1;
  }
  void requireBuffer(const Node *x) {
    auto it = s_.index.find(x);
    if (it != s_.index.end())
      requireBuffer(x, s_.facts[it->second]);
  }
  /// `x`'s facts where a consumer computed at `stage` inlines it; null
  /// where it loads `x` instead (materialized, not inlineable, or its
  /// buffer readable there).
  const Schedule::Facts *inlinedAt(const Node *x, int stage) const {
    auto it = s_.index.find(x);
    if (it == s_.index.end())
      return nullptr;
    const Schedule::Facts &f = s_.facts[it->second];
    if (!Schedule::isInlineable(x, f) || f.viewReadsBuffer ||
        (f.buffered && f.ready <= stage))
      return nullptr;
    return &f;
  }
  /// What inlining `x` costs a consumer computed at `stage`: one load when
  /// its buffer is readable there, else its whole expression.
  int costOf(const Node *x, int stage) const {
    const Schedule::Facts *f = inlinedAt(x, stage);
    return f ? f->cost : 1;
  }
  /// The chain inlining `x` adds to a consumer at `stage`: none where it
  /// loads `x`, else x's depth.
  int depthOf(const Node *x, int stage) const {
    const Schedule::Facts *f = inlinedAt(x, stage);
    return f ? f->depth : 0;
  }
  int readyOf(const Node *x) const {
    auto it = s_.index.find(x);
    return it == s_.index.end() ? 0 : s_.facts[it->second].ready;
  }

  void analyzeNode(const Node *n, Schedule::Facts &f) {
    // An inlined gather is an element op of its table (its array is
    // settled: readable anywhere).
    OpCategory category = isInlinedGather(n) ? OpCategory::Unary : opCategory(n->op());
    switch (category) {
    case OpCategory::Source:
      f.avail = 0;
      f.cost = 1;
      return;
    case OpCategory::Unary:
    case OpCategory::Binary:
    case OpCategory::Compare: {
      int stage = 0;
      for (const NodeRef &in : n->inputs())
        stage = std::max(stage, s_.inputStage(in.get()));
      for (const NodeRef &in : n->inputs())
        stage = limitChain(in.get(), stage);
      int64_t cost = 1;
      int depth = 0;
      for (const NodeRef &in : n->inputs()) {
        limitCrossStage(in.get(), stage);
        cost += costOf(in.get(), stage);
        depth = std::max(depth, depthOf(in.get(), stage));
      }
      f.avail = stage;
      f.cost = int(std::min<int64_t>(cost, kCostCap));
      f.depth = depth + 1;
      return;
    }
    case OpCategory::View:
      if (!n->extra().flatView) {
        const Node *x = n->input(0);
        const AffineMap &map = n->extra().view;
        bool shifted = !map.isIdentity() && !isSliceUpdated(x, map);
        int stage = s_.inputStage(x);
        if (shifted && s_.contains(x) && costOf(x, stage) > limits_.recomputeBudget) {
          requireBuffer(x);
          f.viewReadsBuffer = true;
          f.avail = readyOf(x);
          f.cost = 1;
          return;
        }
        f.avail = stage;
        f.cost = costOf(x, stage);
        f.depth = depthOf(x, stage);
        return;
      }
      [[fallthrough]];
    case OpCategory::Reshape: {
      // Row-major reinterpretation reads the input's buffer.
      const Node *x = s_.bufferOwner(n->input(0));
      requireBuffer(x);
      f.viewReadsBuffer = true;
      f.avail = readyOf(x);
      f.cost = 1;
      return;
    }
    case OpCategory::Reduce: {
      int stage = s_.inputStage(n->input(0));
      f.buffered = true;
      f.avail = f.ready = stage + 1;
      f.cost = 1;
      return;
    }
    case OpCategory::Opaque: {
      // Its implementation reads buffers: every pending input is stored
      // (a view of a stored or materialized value is read in place). An
      // index write's base is not an operand: an elementwise kernel copies
      // it into the write's buffer at `avail` (computing it inline where it
      // can), and the opaque kernel writes the selected elements over it
      // at a later stage, once its operands are ready, as a scatter does.
      bool write = n->op() == OpKind::IndexWrite;
      int copy = write ? s_.inputStage(n->input(0)) : 0;
      int stage = write ? copy + 1 : 0;
      // A prologue's row op is computed here: its inputs are operands.
      llvm::SmallVector<const Node *, 4> operands;
      for (const NodeRef &in : n->inputs().drop_front(write ? 1 : 0)) {
        if (isPrologueOf(in.get(), n))
          for (const NodeRef &r : in->inputs())
            operands.push_back(r.get());
        else
          operands.push_back(in.get());
      }
      for (const Node *x : operands) {
        // (A materialized view has dropped its map: ask contains() first.)
        while (x->op() == OpKind::View && s_.contains(x) && !x->extra().flatView &&
               s_.contains(x->input(0)))
          x = x->input(0);
        // A reshape reads its input's buffer in row-major order, and so can
        // the op: no copy of it (the decode loop's qkv reshape before the
        // cache write, and the heads' before the projection, each cost a
        // kernel).
        if (s_.contains(x) && s_.of(x).viewReadsBuffer && isViewLike(x) &&
            !s_.of(x).buffered) {
          if (s_.contains(s_.bufferOwner(x->input(0))))
            stage = std::max(stage, readyOf(s_.bufferOwner(x->input(0))));
          continue;
        }
        if (s_.contains(x)) {
          requireBuffer(x);
          stage = std::max(stage, readyOf(x));
        }
      }
      // cuBLASLt reads a library epilogue's addend from its buffer too.
      if (const Node *addend = libraryAddendOf(n); addend && s_.contains(addend)) {
        requireBuffer(addend);
        stage = std::max(stage, readyOf(addend));
      }
      f.buffered = true;
      f.avail = write ? copy : stage + 1;
      f.ready = stage + 1;
      f.cost = 1;
      return;
    }
    case OpCategory::Update: {
      f.box = updateIsBox(n);
      int stage = std::max(s_.inputStage(n->input(0)),
                           s_.inputStage(n->input(1)));
      if (f.box) {
        markRider(n);
        limitCrossStage(n->input(0), stage);
        limitCrossStage(n->input(1), stage);
        f.avail = stage;
        f.cost = int(std::min<int64_t>(int64_t(1) + costOf(n->input(0), stage) +
                                           costOf(n->input(1), stage),
                                       kCostCap));
        f.depth = 1 + std::max(depthOf(n->input(0), stage), depthOf(n->input(1), stage));
        return;
      }
      // Base copied at `stage`, value scattered over it at stage + 1.
      f.buffered = true;
      f.avail = f.ready = stage + 2;
      f.cost = 1;
      return;
    }
    }
  }

  /// Stores `x` when its inlined chain is chainDepth ops deep or more, so
  /// that no consumer's kernel chains more than that; answers the stage
  /// the consumer can read `x` at (the one after x's, then).
  int limitChain(const Node *x, int stage) {
    auto it = s_.index.find(x);
    if (it == s_.index.end() || depthOf(x, stage) < limits_.chainDepth)
      return stage;
    requireBuffer(x, s_.facts[it->second]);
    return std::max(stage, readyOf(x));
  }

  /// Stores `x` for a consumer at a later stage when recomputing it there
  /// would cost more than crossStageBudget.
  void limitCrossStage(const Node *x, int stage) {
    auto it = s_.index.find(x);
    if (it == s_.index.end())
      return;
    Schedule::Facts &xf = s_.facts[it->second];
    if (Schedule::isInlineable(x, xf) && xf.avail < stage &&
        costOf(x, stage) > limits_.crossStageBudget)
      requireBuffer(x, xf);
  }

  /// Who reads each node (indices into `nodes`, once per input that
  /// names it): the graph's edges, which no pass changes.
  void collectReaders() {
    readers_.assign(s_.nodes.size(), {});
    for (uint32_t i = 0; i < s_.nodes.size(); ++i)
      for (const NodeRef &in : s_.nodes[i]->inputs())
        if (auto it = s_.index.find(in.get()); it != s_.index.end())
          readers_[it->second].push_back(i);
  }

  /// The slices updates write, by base. `ap[1..-1, true] -= v` reads the
  /// slice of ap it then writes; in the fused kernel that read is the
  /// element the update writes (fusion/lower.cpp), not a shifted one, so it
  /// costs no recomputation.
  void collectSlicesUpdated() {
    for (const NodeRef &n : s_.nodes) {
      if (n->op() != OpKind::Update)
        continue;
      if (auto m = layoutAsAffine(n->extra().target, n->shape()))
        slicesUpdated_[n->input(0)].push_back(std::move(*m));
    }
  }
  bool isSliceUpdated(const Node *base, const AffineMap &map) const {
    auto it = slicesUpdated_.find(base);
    return it != slicesUpdated_.end() && llvm::is_contained(it->second, map);
  }

  /// The value an Update writes, when Ruby still holds it (a temporary
  /// such as `ap[1..-1, true] - v[0..-2, true]`), rides with the Update.
  void markRider(const Node *u) {
    const Node *value = u->input(1);
    auto it = s_.index.find(value);
    if (it == s_.index.end() ||
        llvm::ArrayRef<int64_t>(u->extra().target.shape) != value->shape())
      return;
    Schedule::Facts &vf = s_.facts[it->second];
    if (!vf.stored || vf.ridesWith >= 0 || !Schedule::isInlineable(value, vf) ||
        vf.viewReadsBuffer || vf.rowGroup >= 0 || vf.epilogue >= 0)
      return;
    vf.ridesWith = int(s_.index.find(u)->second);
    vf.ready = kNeverReady;
  }

  Schedule &s_;
  const FusionLimits &limits_;
  llvm::DenseMap<const Node *, llvm::SmallVector<AffineMap, 1>> slicesUpdated_;
};

void Scheduler::applyRowGroups() {
  llvm::SmallVector<RowGroup, 2> found = findRowGroups(s_);
  if (found.empty())
    return;
  for (size_t g = 0; g < found.size(); ++g)
    for (uint32_t m : found[g].members)
      s_.facts[m].rowGroup = int(g);
  adoptHeldInputs(found);
  auto inGroup = [&](const Node *x, size_t g) {
    auto it = s_.index.find(x);
    return it != s_.index.end() && s_.facts[it->second].rowGroup == int(g);
  };
  // Which members something outside their group reads. A view read from
  // outside is inlined there, so what it views needs the buffer.
  llvm::SmallVector<bool, 16> readOutside(s_.nodes.size(), false);
  for (uint32_t x = 0; x < s_.nodes.size(); ++x)
    readOutside[x] = s_.facts[x].rowGroup >= 0 &&
                     llvm::any_of(readers_[x], [&](uint32_t r) {
                       return s_.facts[r].rowGroup != s_.facts[x].rowGroup;
                     });
  for (uint32_t i = s_.nodes.size(); i-- > 0;) {
    const Node *n = s_.nodes[i].get();
    if (readOutside[i] && s_.facts[i].rowGroup >= 0 && isViewLike(n) &&
        inGroup(n->input(0), size_t(s_.facts[i].rowGroup)))
      readOutside[s_.index.find(n->input(0))->second] = true;
  }
  // A group runs at the latest stage of what it reads from outside, and
  // nodes outside read its members from the stage after. Those stages
  // depend on each other (a group may read what another group's member
  // feeds), so the nodes outside the groups are analyzed again with the
  // members placed, until the groups' stages settle: at most once per
  // group, since groups never depend on each other in a cycle.
  llvm::SmallVector<int, 2> stages(found.size(), -1);
  for (size_t round = 0; round <= found.size(); ++round) {
    bool moved = false;
    for (size_t g = 0; g < found.size(); ++g) {
      int stage = 0;
      for (uint32_t m : found[g].members)
        for (const NodeRef &in : s_.nodes[m]->inputs())
          if (!inGroup(in.get(), g))
            stage = std::max(stage, s_.inputStage(in.get()));
      if (stage == stages[g])
        continue;
      moved = true;
      stages[g] = stage;
      for (uint32_t m : found[g].members) {
        Schedule::Facts &f = s_.facts[m];
        f.avail = stage;
        f.ridesWith = -1;
        f.viewReadsBuffer = false;
        f.buffered = f.stored || (readOutside[m] && !isViewLike(s_.nodes[m].get()));
        f.ready = stage + 1;
      }
    }
    if (!moved)
      break;
    reanalyzeOutside();
  }
  for (size_t g = 0; g < found.size(); ++g) {
    limitGroupInputs(found[g], stages[g]);
    // A group nothing holds or reads any more computes nothing.
    if (llvm::any_of(found[g].members, [&](uint32_t m) { return s_.facts[m].buffered; }))
      rowGroups_.push_back(PlacedGroup{found[g], stages[g]});
  }
}

void Scheduler::limitGroupInputs(const RowGroup &group, int stage) {
  for (uint32_t m : group.members)
    for (const NodeRef &in : s_.nodes[m]->inputs()) {
      auto it = s_.index.find(in.get());
      if (it == s_.index.end() || s_.facts[it->second].rowGroup != s_.facts[m].rowGroup)
        limitCrossStage(in.get(), stage);
    }
}

void Scheduler::adoptHeldInputs(llvm::MutableArrayRef<RowGroup> groups) {
  for (size_t g = 0; g < groups.size(); ++g) {
    RowGroup &rg = groups[g];
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t k = 0; k < rg.members.size(); ++k)
        for (const NodeRef &in : s_.nodes[rg.members[k]]->inputs()) {
          auto it = s_.index.find(in.get());
          if (it == s_.index.end())
            continue;
          uint32_t x = it->second;
          OpCategory c = opCategory(in->op());
          Schedule::Facts &f = s_.facts[x];
          if (f.rowGroup >= 0 || !f.stored ||
              (c != OpCategory::Unary && c != OpCategory::Binary && c != OpCategory::Compare) ||
              !(isElementShape(in->shape(), rg.domain) || isRowShape(in->shape(), rg.domain)) ||
              !llvm::all_of(readers_[x], [&](uint32_t r) {
                return s_.facts[r].rowGroup == int(g);
              }))
            continue;
          f.rowGroup = int(g);
          rg.members.push_back(x);
          grew = true;
        }
    }
    llvm::sort(rg.members);
  }
}

void Scheduler::applyEpilogues() {
  for (uint32_t p = 0; p < s_.nodes.size(); ++p) {
    Schedule::Facts &pf = s_.facts[p];
    const Node *n = s_.nodes[p].get();
    if (pf.rowGroup >= 0 || !(takesEpilogue(n) || takesLibraryEpilogue(n)))
      continue;
    llvm::SmallVector<uint32_t, 4> members =
        takesEpilogue(n) ? findEpilogue(s_, p, readers_, limits_.epilogueMembers)
                         : findLibraryEpilogue(s_, p, readers_);
    if (members.empty())
      continue;
    auto readOutside = [&](uint32_t x) {
      return llvm::any_of(readers_[x], [&](uint32_t r) { return !llvm::is_contained(members, r); });
    };
    // Each value gets a buffer when Ruby holds it or something outside
    // the epilogue reads it (a later reader reads it from there).
    pf.epilogue = int(p);
    pf.buffered = pf.stored || readOutside(p);
    for (uint32_t m : members) {
      Schedule::Facts &f = s_.facts[m];
      f.epilogue = int(p);
      f.ridesWith = -1;
      f.viewReadsBuffer = false;
      // (cuBLASLt always writes the sum somewhere.)
      f.buffered = f.stored || readOutside(m) || takesLibraryEpilogue(n);
      f.cost = 1;
    }
    epilogues_[p] = std::move(members);
    reanalyzeOutside();
    // Analyzing afresh forgot what the row groups store of their inputs.
    for (const PlacedGroup &pg : rowGroups_)
      limitGroupInputs(pg.group, pg.stage);
  }
}

void Scheduler::mergeSiblingWrites(llvm::SmallVectorImpl<Schedule::KernelSlot> &slots) {
  auto write = [&](const Schedule::KernelSlot &s) -> const Node * {
    if (s.kind != Schedule::KernelSlot::Kind::Opaque || s.members.size() != 1)
      return nullptr;
    const Node *n = s_.nodes[s.members[0]].get();
    return n->op() == OpKind::IndexWrite ? n : nullptr;
  };
  // The attributes (whether the table was computed on the device, and
  // whether its positions can repeat) decide the kernel's code.
  auto attributes = [](const Node *n) {
    return n->hasExtra() ? llvm::ArrayRef<int64_t>(n->extra().axes) : llvm::ArrayRef<int64_t>();
  };
  auto siblings = [&](const Node *a, const Node *b) {
    const Node *va = a->input(2), *vb = b->input(2);
    return a->input(1) == b->input(1) && a->dtype() == b->dtype() &&
           a->shape() == b->shape() && va->dtype() == vb->dtype() &&
           va->shape() == vb->shape() && attributes(a) == attributes(b);
  };
  llvm::SmallVector<Schedule::KernelSlot, 4> merged;
  for (Schedule::KernelSlot &s : slots) {
    const Node *n = write(s);
    if (n) {
      auto into = llvm::find_if(merged, [&](const Schedule::KernelSlot &m) {
        const Node *first = m.kind == Schedule::KernelSlot::Kind::Opaque && !m.members.empty()
                                ? s_.nodes[m.members[0]].get()
                                : nullptr;
        return first && first->op() == OpKind::IndexWrite && m.stage == s.stage &&
               siblings(first, n);
      });
      if (into != merged.end()) {
        into->members.push_back(s.members[0]);
        into->why = "writes index-array positions of one table into several arrays";
        continue;
      }
    }
    merged.push_back(std::move(s));
  }
  slots.assign(std::make_move_iterator(merged.begin()), std::make_move_iterator(merged.end()));
}

void Scheduler::placeEpilogueMember(uint32_t m) {
  Schedule::Facts &f = s_.facts[m];
  int stage = s_.facts[f.epilogue].ready - 1;
  f.avail = stage;
  f.ready = stage + 1;
  // An index write's table is read at positions the kernel computes:
  // from its buffer, which writeJoinsEpilogue found written by then.
  const Node *n = s_.nodes[m].get();
  if (n->op() == OpKind::IndexWrite) {
    requireBuffer(n->input(1));
    if (readyOf(n->input(1)) > stage)
      throw Error(ErrorKind::Internal, "[fusion] an epilogue's index write reads a table "
                                       "written after the product's kernel");
  }
  // What it reads from outside is read at the product's stage.
  for (const NodeRef &in : n->inputs()) {
    auto it = s_.index.find(in.get());
    if (it == s_.index.end() || s_.facts[it->second].epilogue != f.epilogue)
      limitCrossStage(in.get(), stage);
  }
}

void Scheduler::reanalyzeOutside() {
  for (uint32_t i = 0; i < s_.nodes.size(); ++i) {
    Schedule::Facts &f = s_.facts[i];
    // A prologue's row op is placed with its product, which comes later.
    if (f.rowGroup >= 0 || f.prologue >= 0)
      continue;
    if (f.epilogue >= 0 && f.epilogue != int(i)) {
      placeEpilogueMember(i);
      continue;
    }
    // A product with an epilogue is analyzed again for its operands'
    // sake; whether it has a buffer was decided by its readers.
    bool product = f.epilogue == int(i), buffered = f.buffered;
    Schedule::Facts fresh;
    fresh.stored = f.stored;
    fresh.inPlace = f.inPlace;
    f = fresh;
    analyzeNode(s_.nodes[i].get(), f);
    if (product) {
      f.epilogue = int(i);
      f.buffered = buffered;
    }
    placeStored(s_.nodes[i].get(), f);
    if (auto it = prologues_.find(i); it != prologues_.end())
      placePrologue(it->second, f);
  }
}

void Scheduler::applyPrologues() {
  for (uint32_t p = 0; p < s_.nodes.size(); ++p) {
    const Node *n = s_.nodes[p].get();
    if (s_.facts[p].rowGroup >= 0 || n->op() != OpKind::MatMul)
      continue;
    auto it = s_.index.find(n->input(0));
    if (it == s_.index.end())
      continue;
    uint32_t x = it->second;
    const Schedule::Facts &xf = s_.facts[x];
    if (xf.rowGroup >= 0 || xf.epilogue >= 0 || xf.prologue >= 0 ||
        !fitsPrologue(s_.nodes[x].get(), n) ||
        !llvm::all_of(readers_[x], [&](uint32_t r) { return r == p; }))
      continue;
    s_.facts[x].prologue = int(p);
    prologues_[p] = x;
  }
  if (prologues_.empty())
    return;
  reanalyzeOutside();
  for (const PlacedGroup &pg : rowGroups_)
    limitGroupInputs(pg.group, pg.stage);
}

void Scheduler::group() {
  using Slot = Schedule::KernelSlot;
  struct Want {
    uint32_t node;
    int stage;
    Shape domain;
    bool exact; ///< full reductions iterate exactly their input
  };
  llvm::SmallVector<Want, 16> wants;
  llvm::SmallVector<Slot, 4> separate; // axis reductions and scatters

  for (uint32_t i = 0; i < s_.nodes.size(); ++i) {
    const Node *n = s_.nodes[i].get();
    Schedule::Facts &f = s_.facts[i];
    // A product with an epilogue has a kernel even when nothing reads
    // the product itself; its members are computed there.
    bool product = f.epilogue == int(i);
    if ((f.epilogue >= 0 && !product) || f.prologue >= 0)
      continue;
    if ((!f.buffered && !product) || f.ridesWith >= 0 || f.rowGroup >= 0)
      continue;
    // Uninitialized memory needs a buffer and nothing written into it.
    if (n->op() == OpKind::Empty)
      continue;
    if (isReduction(n->op())) {
      int stage = f.avail - 1;
      Shape domain = toShape(n->input(0)->shape());
      if (isFullReduction(n) && n->input(0)->size() > 0) {
        wants.push_back({i, stage, domain, true});
      } else {
        Slot slot{Slot::Kind::AxisReduce, stage, domain, {i}, ""};
        separate.push_back(std::move(slot));
      }
      continue;
    }
    if (n->op() == OpKind::IndexWrite) {
      // The base copied at `avail`, the selected elements written over it;
      // or, in place, over the base itself.
      if (!f.inPlace)
        wants.push_back({i, f.avail, toShape(n->shape()), false});
      Slot slot{Slot::Kind::Opaque, f.ready - 1, toShape(n->shape()), {i}, ""};
      slot.why = f.inPlace ? "writes index-array positions into its base's buffer"
                           : "writes index-array positions over a copy of its base";
      separate.push_back(std::move(slot));
      continue;
    }
    if (isOpaque(n->op()) && !isInlinedGather(n)) {
      Slot slot{Slot::Kind::Opaque, f.avail - 1, toShape(n->shape()), {i}, ""};
      slot.why = "an opaque op runs its own implementation";
      if (product) {
        llvm::ArrayRef<uint32_t> members = epilogues_.find(i)->second;
        slot.members.append(members.begin(), members.end());
        slot.why = takesLibraryEpilogue(n)
                       ? "an opaque op runs its own implementation (cuBLASLt adds its "
                         "consumer in its epilogue)"
                       : "an opaque op runs its own implementation (its consumers "
                         "in its epilogue)";
      }
      if (auto it = prologues_.find(i); it != prologues_.end()) {
        slot.prologue = int(it->second);
        slot.why = product ? "an opaque op runs its own implementation (its operand's row "
                             "op in its prologue, its consumers in its epilogue)"
                           : "an opaque op runs its own implementation (its operand's row "
                             "op in its prologue)";
      }
      separate.push_back(std::move(slot));
      continue;
    }
    if (n->op() == OpKind::Update && !f.box) {
      int stage = f.ready - 2;
      wants.push_back({i, stage, toShape(n->shape()), false});
      Slot slot{Slot::Kind::Scatter, stage + 1,
                n->extra().target.shape, {i}, ""};
      slot.why = "writes a target no slice box fits";
      separate.push_back(std::move(slot));
      continue;
    }
    wants.push_back({i, f.avail, toShape(n->shape()), false});
  }

  // Each store joins the largest domain of its stage it broadcasts into,
  // so a 0-dim scalar computed beside an axpy is stored by the axpy, and of
  // two as large the one with more (unit) axes: a [768] table beside a
  // [1, 768] one is one kernel. The distinct domains of a stage are few,
  // so this is linear in the stores.
  struct Domain {
    int stage;
    Shape shape;
    int64_t size;
  };
  llvm::SmallVector<Domain, 4> domains;
  auto findDomain = [&](int stage, llvm::ArrayRef<int64_t> shape) -> int {
    for (size_t d = 0; d < domains.size(); ++d)
      if (domains[d].stage == stage && llvm::ArrayRef<int64_t>(domains[d].shape) == shape)
        return int(d);
    return -1;
  };
  for (const Want &w : wants)
    if (findDomain(w.stage, w.domain) < 0)
      domains.push_back({w.stage, w.domain, numElements(w.domain)});
  llvm::SmallVector<int, 16> domainOf(wants.size());
  for (size_t i = 0; i < wants.size(); ++i) {
    const Want &w = wants[i];
    int best = findDomain(w.stage, w.domain);
    if (!w.exact)
      for (size_t d = 0; d < domains.size(); ++d)
        if (domains[d].stage == w.stage &&
            domains[d].shape.size() >= w.domain.size() &&
            (domains[d].size > domains[best].size ||
             (domains[d].size == domains[best].size &&
              domains[d].shape.size() > domains[best].shape.size())) &&
            broadcastsTo(w.domain, domains[d].shape))
          best = int(d);
    domainOf[i] = best;
  }

  llvm::SmallVector<Slot, 4> slots;
  llvm::SmallVector<int, 4> slotOfDomain(domains.size(), -1);
  for (size_t i = 0; i < wants.size(); ++i) {
    int d = domainOf[i];
    if (slotOfDomain[d] < 0 ||
        slots[slotOfDomain[d]].members.size() >= size_t(limits_.kernelMembers)) {
      bool full = slotOfDomain[d] >= 0;
      slotOfDomain[d] = int(slots.size());
      slots.push_back(Slot{Slot::Kind::Elementwise, domains[d].stage,
                           domains[d].shape, {}, ""});
      if (full)
        slots.back().why = "the kernel before it computes " +
                           std::to_string(limits_.kernelMembers) +
                           " values, as many as one kernel holds";
    }
    slots[slotOfDomain[d]].members.push_back(wants[i].node);
  }
  mergeSiblingWrites(separate);
  for (Slot &s : separate)
    slots.push_back(std::move(s));
  for (const PlacedGroup &pg : rowGroups_) {
    Slot slot{Slot::Kind::Rowwise, pg.stage, pg.group.domain, {}, ""};
    slot.members.assign(pg.group.members.begin(), pg.group.members.end());
    slot.why = "folds rows (the last axis) and reads the folds back";
    slots.push_back(std::move(slot));
  }
  std::stable_sort(slots.begin(), slots.end(),
                   [](const Slot &a, const Slot &b) { return a.stage < b.stage; });

  // Say why each kernel could not join one before it.
  for (size_t k = 0; k < slots.size(); ++k) {
    Slot &s = slots[k];
    for (uint32_t m : s.members)
      s_.facts[m].kernel = int(k);
    if (!s.why.empty())
      continue;
    if (s.kind == Slot::Kind::AxisReduce) {
      s.why = "reduces over some axes only";
    } else if (s.stage > 0) {
      s.why = "reads a value an earlier kernel reduces or stores";
    } else if (k > 0) {
      s.why = "its domain " + shapeToString(s.domain) +
              " differs from the kernels before it";
    }
  }
  s_.kernels = std::move(slots);
}

} // namespace

Schedule schedule(llvm::ArrayRef<NodeRef> nodes,
                  llvm::function_ref<bool(const Node *)> isStored,
                  llvm::function_ref<bool(const Node *)> inPlace,
                  const FusionLimits &limits) {
  Schedule s;
  s.nodes.assign(nodes.begin(), nodes.end());
  s.facts.resize(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    s.index[nodes[i].get()] = i;
    if (inPlace && nodes[i]->op() == OpKind::IndexWrite)
      s.facts[i].inPlace = inPlace(nodes[i].get());
  }
  Scheduler sched(s, limits);
  sched.analyze(isStored);
  sched.applyRowGroups();
  sched.applyPrologues();
  sched.applyEpilogues();
  sched.group();
  return s;
}

} // namespace cumo
