// The public op functions applied to nodes, for ops that are recorded as
// the ops they are made of (statistics, index reductions): each wraps its
// operands in temporary handles and checks them as the op would for a
// Ruby caller. Casts of nodes are record.h's castNode.
#pragma once

#include "ops/elementwise.h"
#include "ops/reduction.h"

namespace cumo::compose {

inline NodeRef binary(OpKind op, const NodeRef &a, const NodeRef &b) {
  ArrayHandle ha(a), hb(b);
  return binaryOp(op, Operand::of(ha), Operand::of(hb));
}

/// `a op s` for a host number `s` (Numo's promotion with a Ruby number).
inline NodeRef withScalar(OpKind op, const NodeRef &a, const Scalar &s) {
  ArrayHandle ha(a);
  return binaryOp(op, Operand::of(ha), Operand::of(s));
}

inline NodeRef unary(OpKind op, const NodeRef &a) {
  ArrayHandle ha(a);
  return unaryOp(op, ha);
}

inline NodeRef reduce(OpKind op, const NodeRef &a, llvm::ArrayRef<int64_t> axes,
                      bool keepdims) {
  ArrayHandle ha(a);
  return reduceOp(op, ha, axes, keepdims);
}

} // namespace cumo::compose
