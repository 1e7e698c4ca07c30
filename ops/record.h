// Node construction shared by the op functions: every op that passes its
// checks ends here, which records the node as pending.
#pragma once

#include "core/node.h"

#include "llvm/ADT/ArrayRef.h"

namespace cumo {

/// A new pending node with these inputs, recorded in the pending set.
NodeRef record(OpKind op, DType dtype, llvm::ArrayRef<int64_t> shape,
               llvm::ArrayRef<NodeRef> inputs = {});

/// `n` converted to `dtype` (itself when it already is).
NodeRef castNode(const NodeRef &n, DType dtype);

/// A 0-dim constant of `dtype` holding `value`.
NodeRef scalarNode(DType dtype, const Scalar &value);

} // namespace cumo
