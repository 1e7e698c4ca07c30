#include "ops/elementwise.h"

#include "core/error.h"
#include "core/host_hooks.h"
#include "ops/element_fn.h"
#include "ops/record.h"

#include <string>

namespace cumo {

namespace {

Shape resultShape(OpKind op, const Operand &a, const Operand &b) {
  auto s = broadcastShapes(a.shape(), b.shape());
  if (!s)
    opError(ErrorKind::Shape, opName(op),
            "shapes " + shapeToString(a.shape()) + " and " +
                shapeToString(b.shape()) + " do not broadcast");
  return *s;
}

void checkTypes(OpKind op, DType t) {
  if (t == DType::Bit && opCategory(op) == OpCategory::Binary)
    opError(ErrorKind::Type, opName(op),
            "Cumo::Bit has no arithmetic; cast it to a numeric class first");
  // Complex classes are not ordered and have no remainder (Numo defines
  // eq and ne for them, not < or %).
  if (isComplex(t)) {
    switch (op) {
    case OpKind::Mod:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::Lt:
    case OpKind::Le:
      opError(ErrorKind::NoMethod, opName(op), "undefined for " + className(t));
    default:
      break;
    }
  }
}

/// The dtype both operands of a binary op meet at: the result's, or for a
/// comparison the one it compares in.
DType commonType(const Operand &a, const Operand &b) {
  DType common;
  if (a.isArray() && b.isArray())
    common = promote(a.array->dtype(), b.array->dtype());
  else if (a.isArray())
    common = promoteWithScalar(a.array->dtype(), b.scalar.scalarKind());
  else if (b.isArray())
    common = promoteWithScalar(b.array->dtype(), a.scalar.scalarKind());
  else
    common = promote(dtypeOfScalar(a.scalar.scalarKind()),
                     dtypeOfScalar(b.scalar.scalarKind()));
  return common;
}

} // namespace

DType binaryResultType(OpKind op, const Operand &a, const Operand &b) {
  return opCategory(op) == OpCategory::Compare ? DType::Bit : commonType(a, b);
}

NodeRef operandNode(const Operand &x, DType dtype) {
  if (!x.isArray())
    return scalarNode(dtype, x.scalar);
  return castNode(x.array->value(), dtype);
}

NodeRef binaryOp(OpKind op, const Operand &a, const Operand &b) {
  DType common = commonType(a, b);
  checkTypes(op, common);
  Shape shape = resultShape(op, a, b);
  DType out = opCategory(op) == OpCategory::Compare ? DType::Bit : common;
  NodeRef na = operandNode(a, common);
  NodeRef nb = operandNode(b, common);
  NodeRef n = record(op, out, shape, {na, nb});
  if ((op == OpKind::Div || op == OpKind::Mod) && isInteger(common) &&
      HostHooks::get().sourceLocation)
    n->extra().recordedAt = HostHooks::get().sourceLocation();
  return n;
}

DType unaryResultType(OpKind op, DType t) {
  return isComplex(t) && answersRealPart(op) ? realTypeOf(t) : t;
}

NodeRef unaryOp(OpKind op, const ArrayHandle &a) {
  DType t = a.dtype();
  switch (op) {
  case OpKind::Neg:
  case OpKind::Abs:
    if (t == DType::Bit)
      opError(ErrorKind::Type, opName(op), "not defined for Cumo::Bit");
    break;
  default:
    if (auto d = elementDomain(op); d && !inDomain(*d, t)) {
      if ((*d == ElementDomain::Float || *d == ElementDomain::Inexact) &&
          !isComplex(t))
        opError(ErrorKind::Type, opName(op),
                "needs a float class, not " + className(t));
      opError(ErrorKind::NoMethod, opName(op), "undefined for " + className(t));
    }
    break;
  }
  return record(op, unaryResultType(op, t), a.shape(), {a.value()});
}

void checkCast(DType from, DType to, std::string_view op) {
  // Numo has no conversion from a complex class to a real one.
  if (isComplex(from) && !isComplex(to))
    opError(ErrorKind::Cast, op,
            "unknown conversion from " + className(from) + " to " + className(to));
}

NodeRef castTo(const ArrayHandle &a, DType dtype) {
  NodeRef v = a.value();
  if (v->dtype() == dtype)
    return record(OpKind::Copy, dtype, v->shape(), {v});
  checkCast(v->dtype(), dtype, "cast");
  return record(OpKind::Cast, dtype, v->shape(), {v});
}

NodeRef copyOf(const ArrayHandle &a) {
  NodeRef v = a.value();
  return record(OpKind::Copy, v->dtype(), v->shape(), {v});
}

} // namespace cumo
