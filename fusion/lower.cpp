#include "fusion/lower.h"

#include "core/array.h"
#include "core/error.h"
#include "fusion/consumer_folds.h"
#include "fusion/epilogue_writes.h"
#include "fusion/library_epilogue.h"
#include "fusion/row_groups.h"
#include "ops/fancy_index.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <unordered_map>

namespace cumo {

namespace {

/// The dtype a reduction accumulates in. Sums and means of the sixteen-bit
/// floats accumulate in single precision and round once; their products
/// do not widen (a product leaves their range long before it loses
/// precision, and widening would only hide the overflow).
DType reduceAccumulator(const Node *r) {
  DType in = r->input(0)->dtype();
  switch (r->op()) {
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::QuantizeScale:
    return in;
  case OpKind::Mean:
    return isFloat(r->dtype()) || isComplex(r->dtype())
               ? accumulatorOf(r->dtype())
               : DType::DFloat;
  case OpKind::Prod:
    if (isNarrowFloat(r->dtype()))
      return r->dtype();
    return accumulatorOf(r->dtype());
  default:
    return accumulatorOf(r->dtype());
  }
}

class Lowering {
public:
  explicit Lowering(const Schedule &s) : s_(s) {}

  Plan run() {
    plan_.nodes.assign(s_.nodes.begin(), s_.nodes.end());
    for (uint32_t i = 0; i < s_.nodes.size(); ++i) {
      const Schedule::Facts &f = s_.facts[i];
      if (!f.buffered)
        continue;
      const Node *n = s_.nodes[i].get();
      if (f.inPlace && s_.contains(n->input(0))) {
        // A chained write takes its base's buffer (the base is neither
        // stored nor read elsewhere): the buffer is the chain's last
        // write's, an Output if Ruby holds that.
        uint32_t shared = nodeBuffer_.lookup(n->input(0));
        nodeBuffer_[n] = shared;
        PlanBuffer &b = plan_.buffers[shared];
        b.node = s_.nodes[i];
        if (f.stored) {
          b.role = PlanBuffer::Role::Output;
          plan_.storedNodes.push_back(s_.nodes[i]);
          plan_.storedBuffers.push_back(shared);
        }
        continue;
      }
      PlanBuffer b;
      b.role = f.stored ? PlanBuffer::Role::Output : PlanBuffer::Role::Temp;
      b.dtype = n->dtype();
      b.elements = n->size();
      b.node = s_.nodes[i];
      if (f.inPlace) {
        // Its memory is the base's: an Output, never arena space.
        b.role = PlanBuffer::Role::Output;
        b.donor = int32_t(inputBuffer(n->input(0)));
      }
      nodeBuffer_[n] = uint32_t(plan_.buffers.size());
      if (f.stored) {
        plan_.storedNodes.push_back(s_.nodes[i]);
        plan_.storedBuffers.push_back(uint32_t(plan_.buffers.size()));
      }
      plan_.buffers.push_back(std::move(b));
    }
    // A held reshape no kernel writes is stored as a view of the buffer
    // its input's values lie in.
    for (uint32_t i = 0; i < s_.nodes.size(); ++i)
      if (s_.facts[i].aliasesInput && !s_.facts[i].buffered) {
        plan_.storedNodes.push_back(s_.nodes[i]);
        plan_.storedBuffers.push_back(
            nodeBuffer_.lookup(s_.bufferOwner(s_.nodes[i]->input(0))));
      }
    for (const Schedule::KernelSlot &slot : s_.kernels)
      plan_.kernels.push_back(lowerKernel(slot));
    // A rider whose Update no kernel computed is stored by a kernel of its
    // own. Nothing in the plan reads its buffer, so it can run last.
    for (uint32_t i = 0; i < s_.nodes.size(); ++i)
      if (s_.facts[i].ridesWith >= 0 && !ridersStored_.count(s_.nodes[i].get())) {
        Schedule::KernelSlot slot;
        slot.kind = Schedule::KernelSlot::Kind::Elementwise;
        slot.stage = s_.facts[i].avail;
        slot.domain = toShape(s_.nodes[i]->shape());
        slot.members.push_back(i);
        slot.why = "a slice value no other kernel computes";
        plan_.kernels.push_back(lowerKernel(slot));
      }
    markOptionalOutputs();
    markUnwrittenOperands();
    foldInConsumers(plan_, haveCurrentDevice() ? currentDevice().model() : DeviceModel());
    return std::move(plan_);
  }

private:
  /// Which operands (and epilogue loads) of each opaque kernel lie in
  /// memory no kernel of the plan writes: an Input that is no in-place
  /// write's donor (kernels write only Outputs and Temps, and a donor's
  /// Output is its Input's memory). A kernel may read those before the
  /// kernels before it finish.
  void markUnwrittenOperands() {
    llvm::SmallVector<bool, 16> written(plan_.buffers.size(), false);
    for (const PlanBuffer &b : plan_.buffers)
      if (b.donor >= 0)
        written[size_t(b.donor)] = true;
    auto unwritten = [&](uint32_t buf) {
      return plan_.buffers[buf].role == PlanBuffer::Role::Input && !written[buf];
    };
    for (Kernel &k : plan_.kernels) {
      if (k.kind != Kernel::Kind::Opaque)
        continue;
      for (size_t i = 0; i < k.operands.size() && i < 32; ++i)
        if (unwritten(k.operands[i].buffer))
          k.operandsUnwritten |= uint32_t(1) << i;
      for (size_t i = 0; i < k.loads.size() && i < 32; ++i)
        if (unwritten(k.loads[i].buffer))
          k.loadsUnwritten |= uint32_t(1) << i;
    }
  }

  /// An Output is optional when only plain stores touch it: no kernel of
  /// the plan loads it, reduces into it, hands it to an opaque op or has
  /// an opaque op write it (an epilogue's stores are plain).
  void markOptionalOutputs() {
    llvm::SmallVector<bool, 16> required(plan_.buffers.size(), false);
    for (const Kernel &k : plan_.kernels) {
      for (const Load &l : k.loads)
        required[l.buffer] = true;
      for (const Load &l : k.operands)
        required[l.buffer] = true;
      for (const Reduce &r : k.reduces)
        required[r.buffer] = true;
      if (k.kind == Kernel::Kind::Opaque && !k.hasEpilogue())
        for (const Store &st : k.stores)
          required[st.buffer] = true;
      // An epilogue's index write writes into its base's memory, and
      // reads its table.
      for (const Store &st : k.stores)
        if (st.through)
          required[st.buffer] = required[st.through->table] = true;
      // (A prologue's store is plain: the kernel skips a null one.)
    }
    // A held reshape will view it.
    for (size_t i = 0; i < plan_.storedNodes.size(); ++i)
      if (plan_.buffers[plan_.storedBuffers[i]].node != plan_.storedNodes[i])
        required[plan_.storedBuffers[i]] = true;
    for (size_t b = 0; b < plan_.buffers.size(); ++b)
      plan_.buffers[b].optional =
          plan_.buffers[b].role == PlanBuffer::Role::Output && !required[b];
    for (Kernel &k : plan_.kernels) {
      for (Store &st : k.stores)
        st.optional = plan_.buffers[st.buffer].optional;
      if (k.prologue.stored)
        k.prologue.out.optional = plan_.buffers[k.prologue.out.buffer].optional;
    }
  }

  struct InstanceKey {
    const Node *node;
    int32_t basis;
    AffineMap map;
  };
  struct BoxInfo {
    AffineMap target; ///< slice coords -> coords of the updated array
    Shape updated;    ///< the updated array's shape
  };

  Kernel lowerKernel(const Schedule::KernelSlot &slot);
  /// The value of `x` at `map` of `basis`'s coordinates: loaded when its
  /// buffer is readable at this stage, else computed inline (`compute`
  /// always computes it: the kernel that stores it).
  uint32_t instance(const Node *x, int32_t basis, const AffineMap &map,
                    bool compute = false);
  uint32_t expand(const Node *x, int32_t basis, const AffineMap &map);
  /// An inlined gather (isInlinedGather): its array's element at the
  /// position its table holds at the element, computed here.
  uint32_t gatherRead(const Node *x, int32_t basis, const AffineMap &map);
  /// A Rowwise kernel's fold of reduction member `r` over each row.
  uint32_t rowReduce(const Node *r);
  void lowerRows(const Schedule::KernelSlot &slot);
  void lowerOpaque(const Schedule::KernelSlot &slot);
  /// A small product's consumers (slot.members after the product), over
  /// the product's Result.
  void lowerEpilogue(const Schedule::KernelSlot &slot);
  /// Index write `w` of an epilogue (fusion/epilogue_writes.h): a store of
  /// its member's value through the write's table.
  void storeThroughTable(const Schedule::KernelSlot &slot, const Node *w);
  /// A store of value `v` into `n`'s buffer, contiguous over the domain.
  void storeWhole(const Node *n, uint32_t v);
  uint32_t loadNodeBuffer(const Node *x, int32_t basis, const AffineMap &map);
  uint32_t loadFlat(const Node *x, const Layout &flat, int32_t basis,
                    const AffineMap &map);
  int32_t boxBasis(const Node *update, int32_t parent, const AffineMap &map);
  uint32_t inputBuffer(const Node *x);
  /// Stores `value` (the slice an Update writes) from inside the box, when
  /// it rides with that Update and no kernel stored it yet.
  void storeRider(const Node *value, const Node *update, uint32_t v, int32_t box) {
    auto it = s_.index.find(value);
    if (it == s_.index.end())
      return;
    const Schedule::Facts &f = s_.facts[it->second];
    if (f.ridesWith < 0 || s_.nodes[f.ridesWith].get() != update ||
        !ridersStored_.insert(value).second)
      return;
    noteNode(value);
    Store st;
    st.value = v;
    st.buffer = nodeBuffer_[value];
    st.dtype = value->dtype();
    st.index.basis = box;
    st.index.strides = contiguousStrides(value->shape());
    k_->stores.push_back(std::move(st));
  }

  /// Records that this kernel computes `n` (for explain and dumps).
  void noteNode(const Node *n) {
    if (computed_.insert(n).second)
      k_->nodes.push_back(n);
  }
  uint32_t addValue(Value v) {
    k_->values.push_back(std::move(v));
    return uint32_t(k_->values.size() - 1);
  }
  uint32_t addLoad(uint32_t buffer, DType dtype, int32_t basis,
                   llvm::ArrayRef<int64_t> strides, int64_t offset,
                   const AffineMap &map);
  IndexExpr indexOver(llvm::ArrayRef<int64_t> strides, int64_t offset,
                      int32_t basis, const AffineMap &map) {
    IndexExpr e;
    e.basis = basis;
    map.applyToLayout(strides, offset, e.strides, e.offset);
    return e;
  }
  int64_t basisRank(int32_t b) const {
    return b == 0 ? int64_t(k_->domain.size()) : k_->bases[b].rank();
  }

  const Schedule &s_;
  Plan plan_;
  Kernel *k_ = nullptr;
  llvm::DenseMap<const Node *, uint32_t> nodeBuffer_;
  llvm::DenseMap<const Buffer *, uint32_t> inputBuffers_;
  // Per kernel: node instances already computed, and box bases.
  std::unordered_map<uint64_t, llvm::SmallVector<std::pair<InstanceKey, uint32_t>, 1>>
      instances_;
  llvm::SmallVector<BoxInfo, 2> boxes_;
  llvm::DenseSet<const Node *> computed_;
  llvm::DenseSet<const Node *> ridersStored_;
  // Per Rowwise kernel: its group's members, and its folds by reduction.
  llvm::DenseSet<const Node *> rowMembers_;
  llvm::DenseMap<const Node *, uint32_t> rowReduces_;
};

uint32_t Lowering::inputBuffer(const Node *x) {
  auto it = inputBuffers_.find(x->buffer().get());
  if (it != inputBuffers_.end())
    return it->second;
  PlanBuffer b;
  b.role = PlanBuffer::Role::Input;
  b.dtype = x->dtype();
  b.node = NodeRef(const_cast<Node *>(x));
  uint32_t id = uint32_t(plan_.buffers.size());
  plan_.buffers.push_back(std::move(b));
  inputBuffers_[x->buffer().get()] = id;
  return id;
}

uint32_t Lowering::addLoad(uint32_t buffer, DType dtype, int32_t basis,
                           llvm::ArrayRef<int64_t> strides, int64_t offset,
                           const AffineMap &map) {
  Load l;
  l.buffer = buffer;
  l.dtype = dtype;
  l.index = indexOver(strides, offset, basis, map);
  // The same address read twice is one load.
  for (uint32_t i = 0; i < k_->loads.size(); ++i) {
    const Load &o = k_->loads[i];
    if (o.buffer == l.buffer && o.dtype == l.dtype &&
        o.index.basis == l.index.basis && o.index.offset == l.index.offset &&
        o.index.strides == l.index.strides)
      for (uint32_t v = 0; v < k_->values.size(); ++v)
        if (k_->values[v].kind == Value::Kind::Load && k_->values[v].ref == i)
          return v;
  }
  k_->loads.push_back(std::move(l));
  Value v;
  v.kind = Value::Kind::Load;
  v.dtype = dtype;
  v.basis = basis;
  v.ref = uint32_t(k_->loads.size() - 1);
  return addValue(std::move(v));
}

uint32_t Lowering::loadNodeBuffer(const Node *x, int32_t basis,
                                  const AffineMap &map) {
  if (x->isMaterialized()) {
    const Layout &l = x->layout();
    return addLoad(inputBuffer(x), x->dtype(), basis, l.strides, l.offset, map);
  }
  auto it = nodeBuffer_.find(x);
  if (it == nodeBuffer_.end())
    throw Error(ErrorKind::Internal, "[fusion] a value read from a buffer "
                                     "nobody writes");
  Strides cs = contiguousStrides(x->shape());
  return addLoad(it->second, x->dtype(), basis, cs, 0, map);
}

uint32_t Lowering::loadFlat(const Node *x, const Layout &flat, int32_t basis,
                            const AffineMap &map) {
  // `flat` addresses the row-major order of x, which lives contiguously in
  // its buffer.
  if (x->isMaterialized()) {
    const Layout &l = x->layout();
    if (!l.isContiguous())
      throw Error(ErrorKind::Internal, "[fusion] flat view of a strided buffer");
    int64_t base = l.size() ? l.extent().first : l.offset;
    return addLoad(inputBuffer(x), x->dtype(), basis, flat.strides,
                   base + flat.offset, map);
  }
  if (const Node *owner = s_.bufferOwner(x); owner != x)
    return loadFlat(owner, flat, basis, map); // the same row-major order
  auto it = nodeBuffer_.find(x);
  if (it == nodeBuffer_.end())
    throw Error(ErrorKind::Internal, "[fusion] flat view of an unbuffered value");
  return addLoad(it->second, x->dtype(), basis, flat.strides, flat.offset, map);
}

int32_t Lowering::boxBasis(const Node *u, int32_t parent, const AffineMap &map) {
  const Layout &target = u->extra().target;
  AffineMap t = *layoutAsAffine(target, u->shape());
  for (uint32_t b = 1; b < k_->bases.size(); ++b) {
    const Basis &o = k_->bases[b];
    if (o.parent == parent && o.fromParent == map && boxes_[b].target == t &&
        llvm::ArrayRef<int64_t>(o.count) == llvm::ArrayRef<int64_t>(target.shape))
      return int32_t(b);
  }
  Basis basis;
  basis.parent = parent;
  basis.fromParent = map;
  basis.count = target.shape;
  int64_t rank = u->ndim();
  basis.axisOf.assign(rank, -1);
  basis.start.assign(rank, 0);
  basis.step.assign(rank, 0);
  for (int64_t k = 0; k < rank; ++k) {
    basis.start[k] = t.offset[k];
    for (int64_t d = 0; d < t.outRank; ++d)
      if (t.at(k, d) != 0) {
        basis.axisOf[k] = int32_t(d);
        basis.step[k] = t.at(k, d);
      }
  }
  k_->bases.push_back(std::move(basis));
  boxes_.push_back(BoxInfo{std::move(t), toShape(u->shape())});
  return int32_t(k_->bases.size() - 1);
}

uint32_t Lowering::instance(const Node *x, int32_t basis, const AffineMap &map,
                           bool compute) {
  // Inside its row group's kernel a reduction is the fold of the row the
  // element lies in, wherever it is read from (the group keeps rows in
  // their rows), and a unit-axis reshape is a map, not a buffer read.
  if (!rowMembers_.empty() && rowMembers_.count(x)) {
    if (isReduction(x->op()))
      return rowReduce(x);
    if (x->op() == OpKind::Reshape)
      return instance(x->input(0), basis, unitAxisReshapeMap(x)->compose(map), compute);
  }
  // Inside a box, reading an array of the updated array's shape at exactly
  // the box's own target is reading it where the parent basis already is:
  // the slice a stencil subtracts from is the element it writes. (An array
  // of another shape, such as the slice being subtracted, is not.)
  if (basis > 0 && map == boxes_[basis].target &&
      x->shape() == llvm::ArrayRef<int64_t>(boxes_[basis].updated)) {
    const Basis &b = k_->bases[basis];
    AffineMap parentMap = b.fromParent;
    return instance(x, b.parent, parentMap, compute);
  }
  // A 0-dim value is the same at every coordinate of every basis: computed
  // once, over the domain, however many boxes read it. (The CG stencil reads
  // p = r + p_old * (rs_new / rs_old) at five places; without this each
  // recomputed the division and reloaded both scalars under its box's
  // predicate.)
  if (x->ndim() == 0 && basis != 0) {
    AffineMap overDomain;
    overDomain.outRank = k_->bases[0].rank();
    return instance(x, 0, overDomain, compute);
  }
  bool fromBuffer = true;
  if (auto it = s_.index.find(x); it != s_.index.end()) {
    const Schedule::Facts &f = s_.facts[it->second];
    bool readable = f.buffered && f.ready <= k_->stage;
    fromBuffer = !compute && (!Schedule::isInlineable(x, f) || readable);
  }
  // An inlined constant is one parameter wherever it is read; a stored one
  // is a load whose address depends on the map (a matmul reading a stored
  // `ones` and its transpose reads two layouts of one buffer).
  bool constant = !fromBuffer && (x->op() == OpKind::Fill || x->op() == OpKind::Empty);
  AffineMap keyMap = constant ? AffineMap() : map;
  int32_t keyBasis = constant ? 0 : basis;
  uint64_t h = llvm::hash_combine(x, keyBasis, keyMap.hash());
  for (auto &entry : instances_[h])
    if (entry.first.node == x && entry.first.basis == keyBasis &&
        entry.first.map == keyMap)
      return entry.second;
  uint32_t v = fromBuffer ? loadNodeBuffer(x, basis, map) : expand(x, basis, map);
  instances_[h].push_back({InstanceKey{x, keyBasis, std::move(keyMap)}, v});
  return v;
}

uint32_t Lowering::gatherRead(const Node *x, int32_t basis, const AffineMap &map) {
  const Node *array = x->input(0), *table = x->input(1);
  const Layout &l = array->layout();
  GatherRead g;
  g.buffer = inputBuffer(array);
  g.dtype = array->dtype();
  g.offset = l.offset;
  g.extents = toShape(array->shape());
  g.strides = l.strides;
  g.checked = readsDeviceTable(*x);
  uint32_t ref = 0;
  for (; ref < k_->gathers.size(); ++ref) {
    const GatherRead &o = k_->gathers[ref];
    if (o.buffer == g.buffer && o.dtype == g.dtype && o.offset == g.offset &&
        o.extents == g.extents && o.strides == g.strides && o.checked == g.checked)
      break;
  }
  if (ref == k_->gathers.size())
    k_->gathers.push_back(std::move(g));
  // The table holds the positions in the result's row-major order: in its
  // shape, or as one row of as many.
  AffineMap toTable;
  if (table->shape() == x->shape()) {
    toTable = AffineMap::identity(x->ndim());
  } else {
    Strides flat = contiguousStrides(x->shape());
    toTable.inRank = 1;
    toTable.outRank = x->ndim();
    toTable.matrix.assign(flat.begin(), flat.end());
    toTable.offset.assign(1, 0);
  }
  Value v;
  v.kind = Value::Kind::Gather;
  v.op = x->op();
  v.dtype = x->dtype();
  v.basis = basis;
  v.ref = ref;
  v.args = {instance(table, basis, toTable.compose(map))};
  return addValue(std::move(v));
}

uint32_t Lowering::expand(const Node *x, int32_t basis, const AffineMap &map) {
  noteNode(x);
  if (isInlinedGather(x))
    return gatherRead(x, basis, map);
  Value v;
  v.dtype = x->dtype();
  v.basis = basis;
  v.op = x->op();
  switch (opCategory(x->op())) {
  case OpCategory::Source: {
    if (x->op() == OpKind::Fill || x->op() == OpKind::Empty) {
      Param p;
      p.dtype = x->dtype();
      p.value = x->op() == OpKind::Fill ? x->scalar : Scalar::ofInt(0);
      p.node = x;
      k_->params.push_back(p);
      v.kind = Value::Kind::Param;
      v.basis = 0;
      v.ref = uint32_t(k_->params.size() - 1);
      return addValue(std::move(v));
    }
    Generator g;
    g.op = x->op();
    g.dtype = x->dtype();
    g.flatIndex = indexOver(contiguousStrides(x->shape()), 0, basis, map);
    g.a = x->scalar;
    g.b = x->scalar2;
    g.seed = x->seed;
    g.counter = x->counter;
    g.node = x;
    k_->generators.push_back(std::move(g));
    v.kind = Value::Kind::Generator;
    v.ref = uint32_t(k_->generators.size() - 1);
    return addValue(std::move(v));
  }
  case OpCategory::Unary:
  case OpCategory::Binary:
  case OpCategory::Compare: {
    v.kind = Value::Kind::Op;
    for (const NodeRef &in : x->inputs()) {
      AffineMap m = AffineMap::broadcast(in->shape(), x->shape()).compose(map);
      v.args.push_back(instance(in.get(), basis, m));
    }
    return addValue(std::move(v));
  }
  case OpCategory::View: {
    const Node *in = x->input(0);
    const NodeExtra &e = x->extra();
    if (e.flatView)
      return loadFlat(in, e.flat, basis, map);
    AffineMap m = e.view.compose(map);
    if (s_.of(x).viewReadsBuffer)
      return loadNodeBuffer(in, basis, m);
    return instance(in, basis, m);
  }
  case OpCategory::Reshape: {
    const Node *in = x->input(0);
    return loadFlat(in, Layout::contiguous(x->shape()), basis, map);
  }
  case OpCategory::Update: {
    uint32_t base = instance(x->input(0), basis, map);
    int32_t box = boxBasis(x, basis, map);
    uint32_t inside = instance(x->input(1), box,
                               AffineMap::identity(k_->bases[box].rank()));
    // A held slice value is stored from an instance of the update that
    // covers all of it: the update computed over its whole domain.
    if (basis == 0 && map.isIdentity() &&
        llvm::ArrayRef<int64_t>(k_->domain) == x->shape())
      storeRider(x->input(1), x, inside, box);
    v.kind = Value::Kind::Select;
    v.ref = uint32_t(box);
    v.args = {inside, base};
    return addValue(std::move(v));
  }
  case OpCategory::Reduce:
  case OpCategory::Opaque:
    break;
  }
  throw Error(ErrorKind::Internal, "[fusion] cannot inline a reduction or an opaque op");
}

uint32_t Lowering::rowReduce(const Node *r) {
  if (auto it = rowReduces_.find(r); it != rowReduces_.end())
    return it->second;
  noteNode(r);
  Value v;
  v.kind = Value::Kind::RowReduce;
  v.op = r->op();
  v.dtype = r->dtype();
  v.accumulator = reduceAccumulator(r);
  v.args = {instance(r->input(0), 0, AffineMap::identity(int64_t(k_->domain.size())))};
  uint32_t id = addValue(std::move(v));
  rowReduces_[r] = id;
  return id;
}

void Lowering::lowerRows(const Schedule::KernelSlot &slot) {
  k_->kind = Kernel::Kind::Rowwise;
  for (uint32_t m : slot.members)
    rowMembers_.insert(s_.nodes[m].get());
  int64_t rank = int64_t(slot.domain.size());
  for (uint32_t m : slot.members) {
    const Node *n = s_.nodes[m].get();
    if (!s_.facts[m].buffered)
      continue;
    noteNode(n);
    // A row-shaped member is written once per row: at position 0.
    AffineMap toNode = rowMemberMap(slot.domain, n->shape());
    Store st;
    st.value = instance(n, 0, toNode, /*compute=*/true);
    st.buffer = nodeBuffer_[n];
    st.dtype = n->dtype();
    st.index = indexOver(contiguousStrides(n->shape()), 0, 0, toNode);
    if (!isElementShape(n->shape(), slot.domain) && slot.domain.back() > 1)
      st.zeroAxes.push_back(int32_t(rank - 1));
    k_->stores.push_back(std::move(st));
  }
  rowMembers_.clear();
  rowReduces_.clear();
}

void Lowering::storeWhole(const Node *n, uint32_t v) {
  Store st;
  st.value = v;
  st.buffer = nodeBuffer_[n];
  st.dtype = n->dtype();
  st.index.strides = contiguousStrides(n->shape());
  k_->stores.push_back(std::move(st));
}

void Lowering::lowerOpaque(const Schedule::KernelSlot &slot) {
  k_->kind = Kernel::Kind::Opaque;
  const Node *n = s_.nodes[slot.members[0]].get();
  noteNode(n);
  k_->opaqueOp = n->op();
  k_->opaqueDtype = n->dtype();
  k_->opaqueScalar = n->scalar;
  if (n->hasExtra())
    k_->opaqueInts.assign(n->extra().axes.begin(), n->extra().axes.end());
  // Each operand is read where it lies: a load over its own coordinates.
  // (An index write's base is already in its buffer: not an operand.)
  size_t base = n->op() == OpKind::IndexWrite ? 1 : 0;
  auto operand = [&](const Node *in) {
    uint32_t v = instance(in, 0, AffineMap::identity(in->ndim()));
    if (k_->values[v].kind != Value::Kind::Load)
      throw Error(ErrorKind::Internal, "[fusion] an opaque operand is not in a buffer");
    k_->operandShapes.push_back(toShape(in->shape()));
    k_->operands.push_back(k_->loads[k_->values[v].ref]);
  };
  // A prologue's row op (fusion/prologue.h) is computed here: the
  // product's first operand is the row op's input, and the row op's
  // parameters follow the product's operands.
  const Node *rowOp = slot.prologue >= 0 ? s_.nodes[uint32_t(slot.prologue)].get() : nullptr;
  if (rowOp) {
    noteNode(rowOp);
    k_->prologue.op = rowOp->op();
    k_->prologue.eps = rowOp->scalar;
  }
  for (const NodeRef &in : n->inputs().drop_front(base))
    operand(in.get() == rowOp ? rowOp->input(0) : in.get());
  if (rowOp) {
    for (const NodeRef &in : rowOp->inputs().drop_front())
      operand(in.get());
    if (s_.facts[uint32_t(slot.prologue)].buffered) {
      Prologue &pro = k_->prologue;
      pro.stored = true;
      pro.out.buffer = nodeBuffer_[rowOp];
      pro.out.dtype = rowOp->dtype();
      pro.out.index.strides = contiguousStrides(rowOp->shape());
    }
  }
  // Sibling index writes (Scheduler::mergeSiblingWrites): the first one's
  // table, then each write's values, and a result for each.
  bool siblings = n->op() == OpKind::IndexWrite && slot.members.size() > 1;
  if (siblings)
    for (uint32_t m : llvm::ArrayRef<uint32_t>(slot.members).drop_front()) {
      noteNode(s_.nodes[m].get());
      operand(s_.nodes[m]->input(2));
    }
  // The operands' loads address other coordinates than the domain's: they
  // are no values of this kernel.
  k_->values.clear();
  k_->loads.clear();
  instances_.clear();
  if (slot.members.size() > 1 && !siblings)
    return lowerEpilogue(slot);
  for (uint32_t m : slot.members)
    storeWhole(s_.nodes[m].get(), 0);
}

void Lowering::lowerEpilogue(const Schedule::KernelSlot &slot) {
  const Node *product = s_.nodes[slot.members[0]].get();
  AffineMap id = AffineMap::identity(product->ndim());
  Value result;
  result.kind = Value::Kind::Result;
  result.dtype = product->dtype();
  uint32_t r = addValue(std::move(result));
  // The consumers read the product at the element they compute: the
  // Result, wherever they name it.
  instances_[llvm::hash_combine(product, int32_t(0), id.hash())].push_back(
      {InstanceKey{product, 0, id}, r});
  if (s_.facts[slot.members[0]].buffered)
    storeWhole(product, r);
  for (uint32_t m : llvm::ArrayRef<uint32_t>(slot.members).drop_front()) {
    const Node *n = s_.nodes[m].get();
    if (n->op() == OpKind::IndexWrite) {
      storeThroughTable(slot, n);
      continue;
    }
    uint32_t v = instance(n, 0, id, /*compute=*/true);
    if (s_.facts[m].buffered)
      storeWhole(n, v);
  }
  // The schedule chose a consumer cuBLASLt adds: the kernel must say so.
  if (takesLibraryEpilogue(product))
    requireLibraryEpilogue(*k_);
}

void Lowering::storeThroughTable(const Schedule::KernelSlot &slot, const Node *w) {
  noteNode(w);
  auto isMember = [&](const Node *x) {
    auto it = s_.index.find(x);
    return it != s_.index.end() && llvm::is_contained(slot.members, it->second);
  };
  const Node *table = w->input(1), *values = w->input(2);
  std::optional<WriteView> view = writeViewOf(s_, values, isMember);
  if (!view)
    throw Error(ErrorKind::Internal, "[fusion] an epilogue's index write of no member's view");
  // The table lies contiguous (writeJoinsEpilogue): value c's position is
  // its element c's row-major index over the values' shape (a host table
  // is a flat list of them).
  TableWrite t;
  if (table->isMaterialized()) {
    t.table = inputBuffer(table);
    t.tableOffset = table->layout().offset;
  } else {
    auto it = nodeBuffer_.find(table);
    if (it == nodeBuffer_.end())
      throw Error(ErrorKind::Internal, "[fusion] an epilogue's index write reads a table "
                                       "no kernel stores");
    t.table = it->second;
  }
  Strides tableStrides = contiguousStrides(values->shape());
  if (!orderWriteAxes(values->shape(), view->strides, tableStrides, t))
    throw Error(ErrorKind::Internal, "[fusion] an epilogue's index write is not one to one");
  t.offset = view->offset;
  t.size = w->size();
  t.checked = readsDeviceTable(*w);
  Store st;
  st.value = instance(view->member, 0, AffineMap::identity(int64_t(k_->domain.size())));
  st.buffer = nodeBuffer_[w];
  st.dtype = w->dtype();
  st.index.strides.assign(k_->domain.size(), 0);
  st.through = std::move(t);
  k_->stores.push_back(std::move(st));
}

Kernel Lowering::lowerKernel(const Schedule::KernelSlot &slot) {
  Kernel k;
  k_ = &k;
  instances_.clear();
  boxes_.clear();
  computed_.clear();
  k.stage = slot.stage;
  k.domain = slot.domain;
  k.why = slot.why;
  Basis domainBasis;
  domainBasis.count = slot.domain;
  k.bases.push_back(std::move(domainBasis));
  boxes_.push_back(BoxInfo{});
  int64_t rank = slot.domain.size();
  AffineMap id = AffineMap::identity(rank);

  switch (slot.kind) {
  case Schedule::KernelSlot::Kind::Elementwise:
    k.kind = Kernel::Kind::Elementwise;
    for (uint32_t m : slot.members) {
      const Node *n = s_.nodes[m].get();
      noteNode(n);
      if (isReduction(n->op())) {
        Reduce r;
        r.value = instance(n->input(0), 0, id);
        r.op = n->op();
        r.accumulator = reduceAccumulator(n);
        r.dtype = n->dtype();
        r.buffer = nodeBuffer_[n];
        r.count = n->input(0)->size();
        k.reduces.push_back(r);
        continue;
      }
      // A scatter's or an index write's base, copied into its buffer
      // before the kernel that writes the selected elements over it.
      bool scatterBase = (n->op() == OpKind::Update && !s_.facts[m].box) ||
                         n->op() == OpKind::IndexWrite;
      AffineMap toNode = AffineMap::broadcast(n->shape(), slot.domain);
      uint32_t value = scatterBase ? instance(n->input(0), 0, toNode)
                                   : instance(n, 0, toNode, /*compute=*/true);
      Store st;
      st.value = value;
      st.buffer = nodeBuffer_[n];
      st.dtype = n->dtype();
      st.index = indexOver(contiguousStrides(n->shape()), 0, 0, toNode);
      for (int64_t d = 0; d < rank; ++d) {
        bool mapped = false;
        for (int64_t r = 0; r < toNode.inRank; ++r)
          mapped |= toNode.at(r, d) != 0;
        if (!mapped && slot.domain[d] > 1)
          st.zeroAxes.push_back(int32_t(d));
      }
      k.stores.push_back(std::move(st));
    }
    break;
  case Schedule::KernelSlot::Kind::AxisReduce: {
    k.kind = Kernel::Kind::AxisReduce;
    const Node *n = s_.nodes[slot.members[0]].get();
    noteNode(n);
    for (int64_t a : n->extra().axes)
      k.reduceAxes.push_back(int32_t(a));
    Reduce r;
    r.value = instance(n->input(0), 0, id);
    r.op = n->op();
    r.accumulator = reduceAccumulator(n);
    r.dtype = n->dtype();
    r.buffer = nodeBuffer_[n];
    r.count = k.reduceLength();
    k.reduces.push_back(r);
    break;
  }
  case Schedule::KernelSlot::Kind::Scatter: {
    k.kind = Kernel::Kind::Scatter;
    const Node *u = s_.nodes[slot.members[0]].get();
    noteNode(u);
    const Layout &target = u->extra().target;
    Store st;
    st.value = instance(u->input(1), 0, id);
    st.buffer = nodeBuffer_[u];
    st.dtype = u->dtype();
    st.index.basis = 0;
    st.index.offset = target.offset;
    st.index.strides = target.strides;
    k.stores.push_back(std::move(st));
    break;
  }
  case Schedule::KernelSlot::Kind::Rowwise:
    lowerRows(slot);
    break;
  case Schedule::KernelSlot::Kind::Opaque:
    lowerOpaque(slot);
    break;
  }
  std::sort(k.nodes.begin(), k.nodes.end(),
            [](const Node *a, const Node *b) { return a->serial < b->serial; });
  k_ = nullptr;
  return k;
}

} // namespace

bool GatherRead::dense() const {
  return strides == contiguousStrides(extents);
}

int64_t Kernel::reduceOutputs() const {
  int64_t n = 1;
  for (size_t d = 0; d < domain.size(); ++d)
    if (!llvm::is_contained(reduceAxes, int32_t(d)))
      n *= domain[d];
  return n;
}

int64_t Kernel::reduceLength() const {
  int64_t n = 1;
  for (int32_t a : reduceAxes)
    n *= domain[a];
  return n;
}

Plan lower(const Schedule &schedule) { return Lowering(schedule).run(); }

Plan planForRoots(llvm::ArrayRef<NodeRef> roots,
                  llvm::function_ref<bool(const Node *)> inPlace) {
  llvm::SmallVector<NodeRef, 64> nodes;
  collectPending(roots, nodes);
  llvm::DenseSet<const Node *> rootSet;
  for (const NodeRef &r : roots)
    rootSet.insert(r.get());
  Schedule s = schedule(
      nodes, [&](const Node *n) { return n->isWrapped() || rootSet.count(n) != 0; }, inPlace);
  return lower(s);
}

} // namespace cumo
