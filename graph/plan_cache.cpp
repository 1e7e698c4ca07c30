#include "graph/plan_cache.h"

#include "core/error.h"
#include "ops/fancy_index.h"

#include <cassert>
#include <cstring>

namespace cumo {

namespace {

/// Templates kept; past this the least recently used is dropped.
constexpr size_t kMaxTemplates = 512;

class Hasher {
public:
  // A flush hashes every word of its DAG (about 20 a node), so one
  // 64x64->128 multiply folded to 64 bits a word (wyhash's mum) rather
  // than a full finalizer: half the cost, and still every bit of the word
  // reaches every bit of the state. The constants keep a zero word from
  // collapsing the state.
  void add(uint64_t x) {
    unsigned __int128 m = (unsigned __int128)(h_ ^ x ^ 0xa0761d6478bd642full) *
                          0xe7037ed1a0b428dbull;
    h_ = uint64_t(m) ^ uint64_t(m >> 64);
  }
  void addAll(llvm::ArrayRef<int64_t> v) {
    add(v.size());
    for (int64_t x : v)
      add(uint64_t(x));
  }
  void addLayout(const Layout &l) {
    addAll(l.shape);
    addAll(l.strides);
    add(uint64_t(l.offset));
  }
  uint64_t get() const { return h_; }

private:
  uint64_t h_ = 0x706c616e2d6b6579ull;
};

void addAttributes(Hasher &h, const Node *n) {
  switch (n->op()) {
  case OpKind::Fill:
    h.add(uint64_t(n->scalar.kind));
    return;
  case OpKind::Seq:
  case OpKind::Rand:
    h.add(uint64_t(n->scalar.kind) << 1 | uint64_t(n->scalar2.kind));
    return;
  default:
    break;
  }
  if (isOpaque(n->op())) {
    // Its attributes are part of its structure (an eps is not a kernel
    // parameter of an opaque implementation).
    uint64_t bits;
    double d = n->scalar.asDouble();
    std::memcpy(&bits, &d, sizeof bits);
    h.add(uint64_t(n->scalar.kind));
    h.add(bits);
  }
  if (!n->hasExtra())
    return;
  const NodeExtra &e = n->extra();
  switch (opCategory(n->op())) {
  case OpCategory::View:
    h.add(e.flatView);
    if (e.flatView) {
      h.addLayout(e.flat);
    } else {
      h.add(uint64_t(e.view.inRank));
      h.addAll(e.view.matrix);
      h.addAll(e.view.offset);
    }
    return;
  case OpCategory::Update:
    h.addLayout(e.target);
    return;
  case OpCategory::Reduce:
    h.addAll(e.axes);
    h.add(e.keepdims);
    return;
  case OpCategory::Opaque:
    h.addAll(e.axes);
    return;
  default:
    return;
  }
}

} // namespace

PlanCache::Keys PlanCache::keys(llvm::ArrayRef<NodeRef> nodes, uint64_t epoch,
                                llvm::SmallVectorImpl<const Node *> &leaves) {
  Hasher coarse, exact;
  coarse.add(nodes.size());
  exact.add(nodes.size());
  // Each materialized input's leaf, by its buffer: a scan of the buffers
  // while they are few (a CG iteration reads a handful), a map past that
  // (a decode step reads some 190 weights and caches, and the scan's
  // pointer chasing took 3% of its host instructions, callgrind,
  // 2026-12-07).
  assert(leaves.empty() && "keys fills `leaves` from the start");
  constexpr size_t kScannedLeaves = 16;
  llvm::SmallVector<const Buffer *, kScannedLeaves> leafBuffers;
  llvm::DenseMap<const Buffer *, uint32_t> leafOf;
  auto leafIndex = [&](const Node *in) -> size_t {
    const Buffer *buf = in->buffer().get();
    size_t leaf = leaves.size();
    if (leafOf.empty()) {
      for (size_t l = 0; l < leafBuffers.size(); ++l)
        if (leafBuffers[l] == buf)
          return l;
      leafBuffers.push_back(buf);
      if (leafBuffers.size() > kScannedLeaves) // from now on, the map
        for (size_t l = 0; l < leafBuffers.size(); ++l)
          leafOf[leafBuffers[l]] = uint32_t(l);
    } else {
      auto [it, added] = leafOf.try_emplace(buf, uint32_t(leaf));
      if (!added)
        return it->second;
    }
    leaves.push_back(in);
    return leaf;
  };
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const Node *n = nodes[i].get();
    uint64_t head = uint64_t(n->op()) | uint64_t(n->dtype()) << 8 |
                    uint64_t(n->ndim()) << 16;
    coarse.add(head);
    exact.add(head);
    exact.addAll(n->shape());
    addAttributes(exact, n);
    for (const NodeRef &in : n->inputs()) {
      if (in->flushEpoch == epoch && in->isPending()) {
        coarse.add(i - in->flushPos);
        exact.add(i - in->flushPos);
        continue;
      }
      // A materialized input: which distinct buffer, and how it is read.
      size_t leaf = leafIndex(in.get());
      coarse.add(~uint64_t(0));
      exact.add(~uint64_t(leaf));
      exact.add(uint64_t(in->dtype()));
      exact.addLayout(in->layout());
    }
  }
  exact.add(leaves.size());
  return {coarse.get(), exact.get()};
}

uint64_t PlanCache::withStored(uint64_t exact, const llvm::BitVector &stored) {
  Hasher h;
  h.add(exact);
  for (uint64_t word : stored.getData())
    h.add(word);
  return h.get();
}

PlanTemplate *PlanCache::find(uint64_t key, size_t nodeCount, size_t leafCount) {
  auto it = templates_.find(key);
  if (it == templates_.end())
    return nullptr;
  PlanTemplate &t = *it->second;
  // Cheap checks against a 64-bit collision.
  if (t.nodeCount != nodeCount || t.leafCount != leafCount)
    return nullptr;
  t.lastUse = ++clock_;
  return &t;
}

PlanTemplate &PlanCache::insert(uint64_t key, Plan plan, llvm::ArrayRef<NodeRef> nodes,
                                llvm::ArrayRef<const Node *> leaves) {
  if (templates_.size() >= kMaxTemplates) {
    auto lru = templates_.begin();
    for (auto it = templates_.begin(); it != templates_.end(); ++it)
      if (it->second->lastUse < lru->second->lastUse)
        lru = it;
    templates_.erase(lru);
  }
  auto t = std::make_unique<PlanTemplate>();
  llvm::DenseMap<const Node *, uint32_t> position;
  for (uint32_t i = 0; i < nodes.size(); ++i)
    position[nodes[i].get()] = i;
  llvm::DenseMap<const Buffer *, uint32_t> leafOf;
  for (uint32_t l = 0; l < leaves.size(); ++l)
    leafOf[leaves[l]->buffer().get()] = l;
  auto positionOf = [&](const Node *n) {
    auto it = position.find(n);
    if (it == position.end())
      throw Error(ErrorKind::Internal, "[plan cache] a plan refers to a node of "
                                       "another flush");
    return it->second;
  };

  for (PlanBuffer &b : plan.buffers) {
    switch (b.role) {
    case PlanBuffer::Role::Input:
      t->bufferSource.push_back(int32_t(leafOf.lookup(b.node->buffer().get())));
      break;
    case PlanBuffer::Role::Output:
      t->bufferSource.push_back(int32_t(positionOf(b.node.get())));
      break;
    case PlanBuffer::Role::Temp:
      t->bufferSource.push_back(-1);
      break;
    }
    b.node = nullptr;
  }
  for (size_t i = 0; i < plan.storedNodes.size(); ++i)
    t->stored.push_back({positionOf(plan.storedNodes[i].get()), plan.storedBuffers[i]});
  for (uint32_t i = 0; i < plan.kernels.size(); ++i) {
    const Kernel &k = plan.kernels[i];
    // An index kernel's op, the first index write at device positions
    // that a product's epilogue computes, or the first gather at device
    // positions read inline (a kernel has one tag).
    auto checked = llvm::find_if(k.nodes, [&](const Node *n) {
      return (n->op() == OpKind::Gather || n->op() == OpKind::IndexWrite) && readsDeviceTable(*n);
    });
    bool opaque = k.kind == Kernel::Kind::Opaque;
    bool index = opaque && (k.opaqueOp == OpKind::Gather || k.opaqueOp == OpKind::IndexWrite);
    bool epilogue = opaque && llvm::any_of(k.stores, [](const Store &s) {
                      return s.through && s.through->checked;
                    });
    bool inlined = llvm::any_of(k.gathers, [](const GatherRead &g) { return g.checked; });
    if (checked != k.nodes.end() && (index || epilogue || inlined))
      t->indexChecks.push_back({i, positionOf(*checked)});
  }
  for (Kernel &k : plan.kernels) {
    auto &params = t->paramSource.emplace_back();
    for (Param &p : k.params) {
      params.push_back(positionOf(p.node));
      p.node = nullptr;
    }
    auto &gens = t->generatorSource.emplace_back();
    for (Generator &g : k.generators) {
      gens.push_back(positionOf(g.node));
      g.node = nullptr;
    }
    k.ops.clear();
    for (const Node *n : k.nodes)
      k.ops.push_back(n->op());
    k.nodes.clear();
  }
  for (uint32_t i = 0; i < nodes.size() && t->firstIntegerDivision < 0; ++i) {
    const Node *n = nodes[i].get();
    if ((n->op() == OpKind::Div || n->op() == OpKind::Mod) && isInteger(n->dtype()))
      t->firstIntegerDivision = int32_t(i);
  }
  plan.nodes.clear();
  plan.storedNodes.clear();
  plan.templateKey = key;
  t->plan = std::move(plan);
  t->nodeCount = uint32_t(nodes.size());
  t->leafCount = uint32_t(leaves.size());
  t->lastUse = ++clock_;
  return *templates_.insert({key, std::move(t)}).first->second;
}

void PlanCache::bind(PlanTemplate &t, llvm::ArrayRef<NodeRef> nodes) {
  for (size_t k = 0; k < t.plan.kernels.size(); ++k) {
    Kernel &kernel = t.plan.kernels[k];
    for (size_t i = 0; i < kernel.params.size(); ++i) {
      const Node *n = nodes[t.paramSource[k][i]].get();
      kernel.params[i].value = n->op() == OpKind::Fill ? n->scalar : Scalar::ofInt(0);
    }
    for (size_t i = 0; i < kernel.generators.size(); ++i) {
      const Node *n = nodes[t.generatorSource[k][i]].get();
      Generator &g = kernel.generators[i];
      g.a = n->scalar;
      g.b = n->scalar2;
      g.seed = n->seed;
      g.counter = n->counter;
    }
  }
}

} // namespace cumo
