#include "ops/record.h"

#include "core/pending.h"
#include "core/stats.h"

namespace cumo {

NodeRef record(OpKind op, DType dtype, llvm::ArrayRef<int64_t> shape,
               llvm::ArrayRef<NodeRef> inputs) {
  NodeRef n(new Node(op, dtype, shape));
  for (const NodeRef &in : inputs)
    n->addInput(in);
  ++Stats::get().nodes_recorded;
  PendingList::get().add(n.get());
  return n;
}

NodeRef castNode(const NodeRef &n, DType dtype) {
  if (n->dtype() == dtype)
    return n;
  if (n->op() == OpKind::Fill && n->isPending()) {
    // A constant converts now: its value is a kernel parameter.
    NodeRef c = record(OpKind::Fill, dtype, n->shape());
    c->scalar = n->scalar;
    return c;
  }
  return record(OpKind::Cast, dtype, n->shape(), {n});
}

NodeRef scalarNode(DType dtype, const Scalar &value) {
  NodeRef n = record(OpKind::Fill, dtype, {});
  n->scalar = value;
  return n;
}

} // namespace cumo
