#include "ops/device_index.h"

#include "core/error.h"
#include "core/stats.h"
#include "ops/creation.h"
#include "ops/record.h"
#include "ops/shape_ops.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

namespace cumo {

namespace {

/// A shape of `rank` ones but `count` at `axis`.
Shape along(int64_t rank, int64_t axis, int64_t count) {
  Shape s(size_t(rank), 1);
  s[size_t(axis)] = count;
  return s;
}

/// The elements of index array `v`, in row-major order, laid along `axis`
/// of a result of `rank` axes. A one-dimensional array is a view (its
/// stride goes to that axis); a longer one is reshaped, which reads its
/// buffer in row-major order.
NodeRef laidAlong(const NodeRef &v, int64_t rank, int64_t axis) {
  Shape to = along(rank, axis, v->size());
  if (v->shape() == llvm::ArrayRef<int64_t>(to))
    return v;
  if (v->ndim() != 1) {
    ArrayHandle h(v);
    return reshapeNode(h, to);
  }
  AffineMap m;
  m.inRank = 1;
  m.outRank = rank;
  m.matrix.assign(size_t(rank), 0);
  m.at(0, axis) = 1;
  m.offset.assign(1, 0);
  if (v->isMaterialized()) {
    Layout l;
    l.shape = to;
    m.applyToLayout(v->layout().strides, v->layout().offset, l.strides, l.offset);
    return makeBufferNode(v->dtype(), v->buffer(), std::move(l));
  }
  NodeRef n = record(OpKind::View, v->dtype(), to, {v});
  n->extra().view = std::move(m);
  return n;
}

NodeRef int64Node(int64_t v) { return scalarNode(DType::Int64, Scalar::ofInt(v)); }

/// One term as a node of the result's rank (or of the index's own shape
/// when it lies along no axis).
NodeRef termNode(const PositionTerm &t, int64_t rank) {
  switch (t.kind) {
  case PositionTerm::Kind::Affine:
    return seqNode(DType::Int64, along(rank, t.axis, t.count), Scalar::ofInt(t.start),
                   Scalar::ofInt(t.step));
  case PositionTerm::Kind::List:
    return uploadNode(DType::Int64, along(rank, t.axis, int64_t(t.values.size())),
                      t.values.data());
  case PositionTerm::Kind::Index: {
    NodeRef v = t.index->value();
    if (t.axis >= 0)
      v = laidAlong(v, rank, t.axis);
    v = castNode(v, DType::Int64);
    NodeRef q = record(OpKind::IndexNormalize, DType::Int64, v->shape(),
                       {v, int64Node(t.extent)});
    if (t.stride == 1)
      return q;
    return record(OpKind::Mul, DType::Int64, q->shape(), {q, int64Node(t.stride)});
  }
  }
  llvm_unreachable("a position term of no kind");
}

} // namespace

bool positionsAreDistinct(const DevicePositions &p) {
  for (const PositionTerm &t : p.terms) {
    switch (t.kind) {
    case PositionTerm::Kind::Affine:
      if (t.count > 1 && t.step == 0)
        return false;
      break;
    case PositionTerm::Kind::List: {
      std::vector<int64_t> v = t.values;
      std::sort(v.begin(), v.end());
      if (std::adjacent_find(v.begin(), v.end()) != v.end())
        return false;
      break;
    }
    case PositionTerm::Kind::Index:
      if (t.index->size() > 1)
        return false;
      break;
    }
  }
  return true;
}

namespace {

/// The tables recorded since the last plan ran, by what they were made of.
/// A decode step writes its 24 KV caches at one device position: one
/// table serves all of them, where each write would record (and a kernel
/// store) a table of its own. An entry holds the index arrays' storages,
/// so their addresses cannot be reused by other arrays while it stands, and
/// their versions, which any write to them changes.
struct TableMemo {
  std::vector<int64_t> key;
  std::vector<Ref<Storage>> indices;
  uint64_t plans = 0; ///< Stats::plans_run when recorded
  NodeRef table;
};
constexpr size_t kTableMemoEntries = 8;

std::vector<TableMemo> &tableMemo() {
  // Never destroyed, as the engine is not: the nodes and storages it may
  // still hold at exit must not outlive what they would release into.
  static auto *memo = new std::vector<TableMemo>();
  return *memo;
}

std::vector<int64_t> tableKey(const DevicePositions &p, llvm::ArrayRef<int64_t> shape) {
  // Sized once: grown push by push, a decode step's 26 keys of some 40
  // words each reallocated six times apiece.
  size_t words = shape.size() + 3;
  for (const PositionTerm &t : p.terms)
    words += 8 + t.values.size() + (t.index ? 4 + 2 * t.index->layout().ndim() : 0);
  std::vector<int64_t> k;
  k.reserve(words);
  k.assign(shape.begin(), shape.end());
  k.push_back(-1);
  k.push_back(p.hasOffset);
  k.push_back(p.offset);
  for (const PositionTerm &t : p.terms) {
    k.insert(k.end(), {int64_t(t.kind), t.axis, t.count, t.start, t.step, t.extent, t.stride,
                       int64_t(t.values.size())});
    k.insert(k.end(), t.values.begin(), t.values.end());
    if (t.index) {
      const Layout &l = t.index->layout();
      k.push_back(int64_t(reinterpret_cast<uintptr_t>(&t.index->storage())));
      k.push_back(int64_t(t.index->storage().version()));
      k.push_back(l.offset);
      k.push_back(l.ndim());
      k.insert(k.end(), l.shape.begin(), l.shape.end());
      k.insert(k.end(), l.strides.begin(), l.strides.end());
    }
  }
  return k;
}

NodeRef recordTable(const DevicePositions &p, llvm::ArrayRef<int64_t> shape);

} // namespace

NodeRef devicePositionTable(const DevicePositions &p, llvm::ArrayRef<int64_t> shape) {
  std::vector<TableMemo> &memo = tableMemo();
  uint64_t plans = Stats::get().plans_run;
  // Entries from before the last plan ran go: their tables are settled or
  // were never needed, and holding them only holds memory.
  llvm::erase_if(memo, [&](const TableMemo &m) { return m.plans != plans; });
  std::vector<int64_t> key = tableKey(p, shape);
  for (const TableMemo &m : memo)
    if (m.key == key)
      return m.table;
  NodeRef table = recordTable(p, shape);
  if (memo.size() == kTableMemoEntries)
    memo.erase(memo.begin());
  TableMemo m{std::move(key), {}, plans, table};
  for (const PositionTerm &t : p.terms)
    if (t.index)
      m.indices.push_back(t.index->storageRef());
  memo.push_back(std::move(m));
  return table;
}

namespace {

NodeRef recordTable(const DevicePositions &p, llvm::ArrayRef<int64_t> shape) {
  int64_t rank = int64_t(shape.size());
  std::vector<PositionTerm> terms = p.terms;
  // Integer indices add a constant: into a range's start where there is
  // one (decode's `wte[tok, true]` records no node for it), else a term
  // of its own. Either way the offset is a kernel parameter.
  auto affine = llvm::find_if(
      terms, [](const PositionTerm &t) { return t.kind == PositionTerm::Kind::Affine; });
  NodeRef table;
  if (affine != terms.end())
    affine->start += p.offset;
  else if (p.hasOffset)
    table = int64Node(p.offset);
  for (size_t i = 0; i < terms.size(); ++i) {
    NodeRef t = termNode(terms[i], rank);
    if (!table) {
      table = t;
      continue;
    }
    // The last sum covers the selection's whole shape (a new axis, or a
    // 0-dim index alone, leaves the terms short of it).
    std::optional<Shape> joint = broadcastShapes(table->shape(), t->shape());
    if (!joint || !broadcastsTo(*joint, shape))
      throw Error(ErrorKind::Internal, "[index] a position term off the selection's shape");
    Shape out = i + 1 == terms.size() ? toShape(shape) : *joint;
    table = record(OpKind::IndexAdd, DType::Int64, out, {table, t});
  }
  if (!table)
    throw Error(ErrorKind::Internal, "[index] a device selection without an index array");
  return broadcastNode(table, shape, "index");
}

} // namespace

} // namespace cumo
