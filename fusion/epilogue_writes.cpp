#include "fusion/epilogue_writes.h"

#include "core/node.h"
#include "fusion/schedule.h"
#include "ops/fancy_index.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace cumo {

std::optional<WriteView> writeViewOf(const Schedule &s, const Node *values,
                                     llvm::function_ref<bool(const Node *)> isMember) {
  // Walking down from the values: while only views have been passed, an
  // affine map from the values' coordinates to x's; past a reshape, an
  // offset and strides into x's row-major order (a reshape keeps it).
  AffineMap map = AffineMap::identity(values->ndim());
  std::optional<WriteView> flat;
  const Node *x = values;
  for (;;) {
    if (!s.contains(x) || !x->isPending())
      return std::nullopt;
    if (isMember(x)) {
      if (!flat) {
        flat.emplace();
        map.applyToLayout(contiguousStrides(x->shape()), 0, flat->strides, flat->offset);
      }
      flat->member = x;
      return flat;
    }
    if (x->op() == OpKind::Reshape) {
      if (!flat) {
        flat.emplace();
        map.applyToLayout(contiguousStrides(x->shape()), 0, flat->strides, flat->offset);
      }
    } else if (x->op() == OpKind::View && !flat) {
      const NodeExtra &e = x->extra();
      if (e.flatView) {
        flat.emplace();
        map.applyToLayout(e.flat.strides, e.flat.offset, flat->strides, flat->offset);
      } else {
        map = e.view.compose(map);
      }
    } else {
      return std::nullopt; // arithmetic, or a view of a reshape's order
    }
    x = x->input(0);
  }
}

bool orderWriteAxes(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> viewStrides,
                    llvm::ArrayRef<int64_t> tableStrides, TableWrite &out) {
  llvm::SmallVector<size_t, 4> axes;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0)
      return false;
    if (shape[d] == 1)
      continue;
    if (viewStrides[d] <= 0)
      return false; // a broadcast or a reversed view
    axes.push_back(d);
  }
  llvm::stable_sort(axes, [&](size_t a, size_t b) { return viewStrides[a] > viewStrides[b]; });
  // Each stride must exceed the span of the axes after it, so that the
  // quotient by it is that axis's coordinate.
  int64_t span = 0;
  for (size_t i = axes.size(); i-- > 0;) {
    size_t d = axes[i];
    if (viewStrides[d] <= span)
      return false;
    span += (shape[d] - 1) * viewStrides[d];
  }
  out.extents.clear();
  out.viewStrides.clear();
  out.tableStrides.clear();
  for (size_t d : axes) {
    // An axis that steps as far as the whole of the one before it, in
    // the view and in the table, continues that axis.
    if (!out.extents.empty() && out.viewStrides.back() == shape[d] * viewStrides[d] &&
        out.tableStrides.back() == shape[d] * tableStrides[d]) {
      out.extents.back() *= shape[d];
      out.viewStrides.back() = viewStrides[d];
      out.tableStrides.back() = tableStrides[d];
      continue;
    }
    out.extents.push_back(shape[d]);
    out.viewStrides.push_back(viewStrides[d]);
    out.tableStrides.push_back(tableStrides[d]);
  }
  return true;
}

const Node *writeJoinsEpilogue(const Schedule &s, uint32_t w, int stage,
                               llvm::function_ref<bool(const Node *)> isMember) {
  const Node *n = s.nodes[w].get();
  const Schedule::Facts &f = s.facts[w];
  if (n->op() != OpKind::IndexWrite || !f.inPlace || f.epilogue >= 0 || f.rowGroup >= 0 ||
      n->size() == 0)
    return nullptr;
  // A base written in this flush (a chained write) is written by another
  // kernel; the settled base is the array's own memory.
  const Node *base = n->input(0), *table = n->input(1), *values = n->input(2);
  if (s.contains(base))
    return nullptr;
  if (!writesDistinctPositions(*n))
    return nullptr;
  // The table is read at positions the kernel computes: from a buffer of
  // its own, written before the product's kernel runs, or settled and
  // contiguous (a host table is).
  if (table->isMaterialized() && !table->layout().isContiguous())
    return nullptr;
  if (auto it = s.index.find(table); it != s.index.end()) {
    const Schedule::Facts &tf = s.facts[it->second];
    OpCategory c = opCategory(table->op());
    if (c == OpCategory::View || c == OpCategory::Reshape || tf.epilogue >= 0 ||
        tf.rowGroup >= 0 || (tf.buffered ? tf.ready : tf.avail + 1) > stage)
      return nullptr;
  }
  std::optional<WriteView> view = writeViewOf(s, values, isMember);
  if (!view || view->member->dtype() != n->dtype())
    return nullptr;
  TableWrite order;
  if (!orderWriteAxes(values->shape(), view->strides, contiguousStrides(values->shape()), order))
    return nullptr;
  return view->member;
}

} // namespace cumo
