// What the doctest suites of fusion/ and graph/ share: building arrays the
// way ruby/ does (handles over storages, views through indexLayout, slice
// updates through assignValue) and reading them back.
#pragma once

#include "core/array.h"
#include "core/error.h"
#include "core/pending.h"
#include "graph/engine.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/indexing.h"
#include "ops/record.h"
#include "ops/matmul.h"
#include "ops/reduction.h"
#include "ops/shape_ops.h"

#include "doctest_printers.h"

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

namespace cumo::test {

/// A Ruby object's handle: alive while the test holds it.
using H = std::unique_ptr<ArrayHandle>;

/// Starts the engine (and so the device) once.
inline Engine &engine() { return Engine::get(); }

/// A new handle wrapping `n`, as a Ruby op result is wrapped.
inline H wrap(NodeRef n) { return std::make_unique<ArrayHandle>(std::move(n)); }

inline Operand op(const ArrayHandle &h) { return Operand::of(h); }
inline Operand op(double v) { return Operand::of(Scalar::ofFloat(v)); }
inline Operand opInt(int64_t v) { return Operand::of(Scalar::ofInt(v)); }

/// An inclusive Ruby range begin..end, negative ends counting from the end.
inline IndexItem range(int64_t begin, int64_t end, int64_t step = 1) {
  IndexItem it;
  it.kind = IndexItem::Kind::Range;
  it.begin = begin;
  it.end = end;
  it.hasBegin = it.hasEnd = true;
  it.step = step;
  return it;
}
inline IndexItem all() { return IndexItem::all(); }
inline IndexItem at(int64_t i) { return IndexItem::integer(i); }

/// a[items]: a view onto a's storage.
inline H view(const ArrayHandle &a, std::vector<IndexItem> items) {
  return std::make_unique<ArrayHandle>(a.storageRef(),
                                       indexLayout(a.layout(), items, "[]"));
}

/// a[items] = value, as ruby/indexing.cpp's []= does it for an NArray value.
inline void assign(ArrayHandle &a, std::vector<IndexItem> items,
                   const ArrayHandle &value) {
  Layout target = indexLayout(a.layout(), items, "[]=");
  ArrayHandle v(a.storageRef(), target);
  assignValue(v, castNode(broadcastNode(value.value(), target.shape, "[]="), a.dtype()),
              "[]=");
}

/// a[items] = scalar.
inline void assign(ArrayHandle &a, std::vector<IndexItem> items, Scalar s) {
  Layout target = indexLayout(a.layout(), items, "[]=");
  ArrayHandle v(a.storageRef(), target);
  assignValue(v, fillNode(a.dtype(), target.shape, s), "[]=");
}

/// a[ia] -= b[ib], as Ruby runs it: a[ia] = a[ia] - b[ib]. The temporaries
/// Ruby would still hold (the two views and the difference) go to `temps`.
inline void subAssign(ArrayHandle &a, std::vector<IndexItem> ia,
                      const ArrayHandle &b, std::vector<IndexItem> ib,
                      std::vector<H> &temps) {
  H lhs = view(a, ia);
  H rhs = view(b, ib);
  H diff = wrap(binaryOp(OpKind::Sub, op(*lhs), op(*rhs)));
  assign(a, ia, *diff);
  temps.push_back(std::move(lhs));
  temps.push_back(std::move(rhs));
  temps.push_back(std::move(diff));
}

/// The CG stencil of examples/cg.rb: ap = v * 4 and four slice updates.
inline H laplacian(const ArrayHandle &v, std::vector<H> &temps) {
  H ap = wrap(binaryOp(OpKind::Mul, op(v), op(4.0)));
  subAssign(*ap, {range(1, -1), all()}, v, {range(0, -2), all()}, temps);
  subAssign(*ap, {range(0, -2), all()}, v, {range(1, -1), all()}, temps);
  subAssign(*ap, {all(), range(1, -1)}, v, {all(), range(0, -2)}, temps);
  subAssign(*ap, {all(), range(0, -2)}, v, {all(), range(1, -1)}, temps);
  return ap;
}

/// A materialized array holding `values` (converted to `dtype`).
template <class T>
H upload(DType dtype, Shape shape, const std::vector<T> &values) {
  engine();
  std::vector<unsigned char> bytes(values.size() * sizeOf(dtype));
  for (size_t i = 0; i < values.size(); ++i)
    dispatchDType(dtype, [&]<DType D, class C>() {
      C v = C(values[i]);
      std::memcpy(bytes.data() + i * sizeof(C), &v, sizeof(C));
    });
  return wrap(uploadNode(dtype, shape, bytes.data()));
}

/// What `h` sees, converted to T, densely in row-major order.
template <class T> std::vector<T> read(const ArrayHandle &h) {
  std::vector<unsigned char> bytes(size_t(h.size()) * sizeOf(h.dtype()));
  engine().read(h, bytes.data());
  std::vector<T> out(size_t(h.size()));
  for (size_t i = 0; i < out.size(); ++i)
    dispatchDType(h.dtype(), [&]<DType D, class C>() {
      C v;
      std::memcpy(&v, bytes.data() + i * sizeof(C), sizeof(C));
      if constexpr (std::is_arithmetic_v<C>)
        out[i] = T(v);
      else // the structs convert explicitly, through double
        out[i] = T(double(v));
    });
  return out;
}

/// `n` values stepping through -period/2 .. period/2 - 1 (period odd: a
/// ramp of small integers, times `scale`), so that a wrong index shows.
inline std::vector<double> ramp(int64_t n, double scale, int period = 11) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = double(i % period - period / 2) * scale;
  return v;
}

/// A braced list as a vector (the element type spelled once).
template <class T> std::vector<T> values(std::initializer_list<T> v) { return v; }

/// What `fn` throws, as an Error.
template <class F> std::optional<Error> errorOf(F &&fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e;
  }
  return std::nullopt;
}

/// Raises the pending budget for one test, so that building a large DAG to
/// explain never flushes half of it on the way.
struct NoBudgetFlush {
  PendingList::Limits saved = PendingList::get().limits();
  NoBudgetFlush() {
    engine();
    PendingList::get().limits().nodes = size_t(1) << 24;
  }
  ~NoBudgetFlush() { PendingList::get().limits() = saved; }
};

// Plan inspection, for the suites that check what fusion built.

/// What a flush of the arrays `roots` would run (Engine::explain).
inline Plan explain(std::initializer_list<const ArrayHandle *> roots) {
  llvm::SmallVector<NodeRef, 8> nodes;
  for (const ArrayHandle *h : roots)
    nodes.push_back(h->value());
  return engine().explain(nodes);
}

/// The plan buffer `n` gets, or -1.
inline int bufferOf(const Plan &plan, const Node *n) {
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].node.get() == n && plan.buffers[i].role != PlanBuffer::Role::Input)
      return int(i);
  return -1;
}

inline int countRole(const Plan &plan, PlanBuffer::Role role) {
  int n = 0;
  for (const PlanBuffer &b : plan.buffers)
    n += b.role == role;
  return n;
}

inline const Store *storeTo(const Kernel &k, int buffer) {
  for (const Store &s : k.stores)
    if (int(s.buffer) == buffer)
      return &s;
  return nullptr;
}

/// Whether `k` reads `buffer` (an opaque op's operands included).
inline bool loadsFrom(const Kernel &k, int buffer) {
  for (const Load &l : k.loads)
    if (int(l.buffer) == buffer)
      return true;
  for (const Load &l : k.operands)
    if (int(l.buffer) == buffer)
      return true;
  return false;
}

/// The kernel that stores or reduces into `buffer`, or -1.
inline int writerOf(const Plan &plan, int buffer) {
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const Kernel &k = plan.kernels[i];
    if (storeTo(k, buffer))
      return int(i);
    for (const Reduce &r : k.reduces)
      if (int(r.buffer) == buffer)
        return int(i);
  }
  return -1;
}

} // namespace cumo::test
