// Elementwise ops: arithmetic, comparisons, casts and copies. Each checks
// its arguments now and answers a pending node; Numo's promotion decides
// the result class.
#pragma once

#include "ops/operand.h"

namespace cumo {

/// `a op b` for a binary or comparison op kind. `name` is the method the
/// caller used ("+", "eq"), for messages.
NodeRef binaryOp(OpKind op, const Operand &a, const Operand &b);

/// `op(a)` for a unary op kind.
NodeRef unaryOp(OpKind op, const ArrayHandle &a);

/// The class `op` answers for operands of these classes.
DType binaryResultType(OpKind op, const Operand &a, const Operand &b);

/// The class unary `op` answers for an operand of class `t`: abs, real,
/// imag and arg of a complex class answer its real class.
DType unaryResultType(OpKind op, DType t);

/// `a` converted to `dtype` (a copy even when it already is).
/// CastError from a complex class to a real one.
NodeRef castTo(const ArrayHandle &a, DType dtype);

/// CastError naming `op` where Numo has no conversion from `from` to `to`
/// (a complex class to a real one).
void checkCast(DType from, DType to, std::string_view op);

/// A copy of `a`'s values (dup).
NodeRef copyOf(const ArrayHandle &a);

/// The node for an operand inside an op whose operands meet at `dtype`.
NodeRef operandNode(const Operand &x, DType dtype);

} // namespace cumo
