#include "ops/math.h"

#include "core/error.h"
#include "ops/element_fn.h"
#include "ops/elementwise.h"
#include "ops/portable_ops.h"
#include "ops/record.h"

#include <string>

namespace cumo {

namespace {

/// NoMethodError: Numo's class `t` has no method for `op`.
[[noreturn]] void undefinedFor(OpKind op, DType t) {
  opError(ErrorKind::NoMethod, opName(op), "undefined for " + className(t));
}

/// The shape all operands broadcast to, or ShapeError naming `op`.
Shape broadcastAll(std::string_view op, llvm::ArrayRef<Operand> args) {
  Shape shape;
  for (const Operand &x : args) {
    auto s = broadcastShapes(shape, x.shape());
    if (!s)
      opError(ErrorKind::Shape, op,
              "shapes " + shapeToString(shape) + " and " +
                  shapeToString(x.shape()) + " do not broadcast");
    shape = std::move(*s);
  }
  return shape;
}

/// `op` over operands converted to `dtype`, answering `out`.
NodeRef recordOver(OpKind op, DType dtype, DType out, llvm::ArrayRef<Operand> args) {
  Shape shape = broadcastAll(opName(op), args);
  llvm::SmallVector<NodeRef, 2> inputs;
  for (const Operand &x : args)
    inputs.push_back(operandNode(x, dtype));
  return record(op, out, shape, inputs);
}

NodeRef recordUnary(OpKind op, const ArrayHandle &a) {
  return record(op, a.dtype(), a.shape(), {a.value()});
}

bool isNumeric(DType t) { return t != DType::Bit; }

/// The class a binary op's operands meet at, for ops whose receiver may be
/// the Ruby number of a coerce (`3 & a`).
DType commonClass(const Operand &a, const Operand &b) {
  return binaryResultType(OpKind::Add, a, b);
}

} // namespace

DType nmathClass(std::string_view fn, llvm::ArrayRef<DType> argClasses) {
  if (argClasses.empty())
    opError(ErrorKind::Argument, fn, "argument missing");
  DType t = argClasses[0];
  for (DType c : argClasses.drop_front())
    t = promote(t, c);
  if (t == DType::Bit)
    opError(ErrorKind::Type, fn, "Cumo::Bit is unknown for Cumo::NMath");
  return isFloat(t) || isComplex(t) ? t : DType::DFloat;
}

NodeRef mathOp(OpKind op, DType dtype, llvm::ArrayRef<Operand> args) {
  if (!isFloat(dtype) && !isComplex(dtype))
    opError(ErrorKind::Type, opName(op), "needs a float class, not " + className(dtype));
  // Complex classes have the functions of Numo's complex Math: not atan2,
  // hypot, erf, erfc, log1p, expm1, ldexp or frexp.
  if (auto d = elementDomain(op); d && !inDomain(*d, dtype))
    undefinedFor(op, dtype);
  if (int(args.size()) != opArity(op))
    opError(ErrorKind::Argument, opName(op),
            "wrong number of arguments (given " + std::to_string(args.size()) +
                ", expected " + std::to_string(opArity(op)) + ")");
  return recordOver(op, dtype, dtype, args);
}

std::pair<NodeRef, NodeRef> frexpOp(DType dtype, const Operand &x) {
  if (!isFloat(dtype))
    opError(ErrorKind::Type, "frexp", "needs a float class, not " + className(dtype));
  NodeRef in = operandNode(x, dtype);
  NodeRef mantissa = record(OpKind::Frexp, dtype, in->shape(), {in});
  NodeRef exponent = record(OpKind::FrexpExp, dtype, in->shape(), {in});
  return {mantissa, castNode(exponent, DType::Int32)};
}

std::pair<NodeRef, NodeRef> modfOp(const ArrayHandle &a) {
  if (!isFloat(a.dtype()))
    undefinedFor(OpKind::Modf, a.dtype());
  return {recordUnary(OpKind::Modf, a), recordUnary(OpKind::Trunc, a)};
}

std::unique_ptr<ArrayHandle> roundOp(OpKind op, const ArrayHandle &a) {
  DType t = a.dtype();
  if (!isNumeric(t))
    undefinedFor(op, t);
  if (isInteger(t))
    return std::make_unique<ArrayHandle>(a.storageRef(), a.layout());
  return std::make_unique<ArrayHandle>(recordUnary(op, a));
}

NodeRef signOp(const ArrayHandle &a) {
  if (!isNumeric(a.dtype()))
    undefinedFor(OpKind::Sign, a.dtype());
  return recordUnary(OpKind::Sign, a);
}

NodeRef squareOp(const ArrayHandle &a) {
  if (!isNumeric(a.dtype()))
    opError(ErrorKind::NoMethod, "square", "undefined for " + className(a.dtype()));
  NodeRef v = a.value();
  return record(OpKind::Mul, a.dtype(), a.shape(), {v, v});
}

NodeRef reciprocalOp(const ArrayHandle &a) {
  if (!isNumeric(a.dtype()))
    opError(ErrorKind::NoMethod, "reciprocal", "undefined for " + className(a.dtype()));
  return binaryOp(OpKind::Div, Operand::of(Scalar::ofInt(1)), Operand::of(a));
}

NodeRef predicateOp(OpKind op, const ArrayHandle &a) {
  // isnan and friends of float and complex classes; signbit of floats.
  if (auto d = elementDomain(op); !d || !inDomain(*d, a.dtype()))
    undefinedFor(op, a.dtype());
  return record(op, DType::Bit, a.shape(), {a.value()});
}

NodeRef copysignOp(const Operand &a, const Operand &b) {
  DType t = commonClass(a, b);
  if (!isFloat(t) && !isComplex(t))
    undefinedFor(OpKind::Copysign, t);
  return recordOver(OpKind::Copysign, t, t, {a, b});
}

NodeRef bitwiseOp(OpKind op, const Operand &a, const Operand &b) {
  bool shift = op == OpKind::LeftShift || op == OpKind::RightShift;
  bool bitReceiver = a.isArray() ? a.array->dtype() == DType::Bit
                                 : b.isArray() && b.array->dtype() == DType::Bit;
  DType t = bitReceiver ? DType::Bit : commonClass(a, b);
  if (isFloat(t) || isComplex(t) || (shift && t == DType::Bit))
    undefinedFor(op, t);
  return recordOver(op, t, t, {a, b});
}

NodeRef bitNotOp(const ArrayHandle &a) {
  DType t = a.dtype();
  if (isFloat(t) || isComplex(t))
    undefinedFor(OpKind::BitNot, t);
  if (t == DType::Bit) // Bit holds 0 and 1: its complement is x ^ 1
    return record(OpKind::BitXor, t, a.shape(),
                  {a.value(), scalarNode(t, Scalar::ofInt(1))});
  return recordUnary(OpKind::BitNot, a);
}

std::pair<NodeRef, NodeRef> divmodOp(const Operand &a, const Operand &b) {
  DType t = commonClass(a, b);
  if (!isNumeric(t) || isComplex(t))
    opError(ErrorKind::NoMethod, "divmod", "undefined for " + className(t));
  return {binaryOp(OpKind::Div, a, b), binaryOp(OpKind::Mod, a, b)};
}

NodeRef clipOp(const ArrayHandle &a, const Operand *min, const Operand *max) {
  DType t = a.dtype();
  if (!isNumeric(t) || isComplex(t))
    opError(ErrorKind::NoMethod, "clip", "undefined for " + className(t));
  if (!min && !max)
    opError(ErrorKind::Argument, "clip", "min and max are not given");
  llvm::SmallVector<Operand, 3> all{Operand::of(a)};
  for (const Operand *x : {min, max})
    if (x)
      all.push_back(*x);
  Shape shape = broadcastAll("clip", all);
  if (min && max && !min->isArray() && !max->isArray()) {
    // Numo compares the bounds once converted to the class (Int32 clip(2.7,
    // 2.2) is clip(2, 2)); a NaN bound compares false and clips nothing.
    bool inverted = dispatchDType(t, [&]<DType D, class T>() {
      if constexpr (kIsComplexC<T>)
        return false;
      else
        return min->scalar.as<T>() > max->scalar.as<T>();
    });
    if (inverted)
      opError(ErrorKind::Operation, "clip", "min is greater than max");
  }
  NodeRef v = a.value();
  if (min)
    v = record(OpKind::ClipLower, t, shape, {v, operandNode(*min, t)});
  if (max)
    v = record(OpKind::ClipUpper, t, shape, {v, operandNode(*max, t)});
  return v;
}

NodeRef extremumOp(OpKind op, DType dtype, const Operand &a, const Operand &b) {
  if (!isNumeric(dtype) || isComplex(dtype))
    opError(ErrorKind::NoMethod, op == OpKind::Fmax || op == OpKind::Maximum
                                     ? "maximum" : "minimum",
            "undefined for " + className(dtype));
  return recordOver(op, dtype, dtype, {a, b});
}

NodeRef complexPartOp(OpKind op, const ArrayHandle &a) {
  if (!isComplex(a.dtype()))
    undefinedFor(op, a.dtype());
  return record(op, unaryResultType(op, a.dtype()), a.shape(), {a.value()});
}

std::unique_ptr<ArrayHandle> imOp(const ArrayHandle &a) {
  DType t = a.dtype();
  if (!isNumeric(t))
    opError(ErrorKind::NoMethod, "im", "undefined for " + className(t));
  if (!isComplex(t)) // Numo's im of a real class is an alias of view
    return std::make_unique<ArrayHandle>(a.storageRef(), a.layout());
  // i * z, exactly: (-Im z, Re z).
  DType r = realTypeOf(t);
  NodeRef v = a.value();
  NodeRef re = record(OpKind::Real, r, a.shape(), {v});
  NodeRef im = record(OpKind::Imag, r, a.shape(), {v});
  NodeRef negIm = record(OpKind::Neg, r, a.shape(), {im});
  return std::make_unique<ArrayHandle>(
      record(OpKind::MakeComplex, t, a.shape(), {negIm, re}));
}

NodeRef setPartOp(OpKind part, const ArrayHandle &a, const Operand &value) {
  const char *name = part == OpKind::Real ? "set_real" : "set_imag";
  DType t = a.dtype();
  if (!isComplex(t))
    opError(ErrorKind::NoMethod, name, "undefined for " + className(t));
  DType r = realTypeOf(t);
  if (value.isArray()) {
    checkCast(value.array->dtype(), r, name);
    auto s = broadcastShapes(a.shape(), value.shape());
    if (!s || llvm::ArrayRef<int64_t>(*s) != a.shape())
      opError(ErrorKind::Shape, name,
              "a value of shape " + shapeToString(value.shape()) +
                  " does not broadcast to " + shapeToString(a.shape()));
  } else if (value.scalar.isComplex()) {
    opError(ErrorKind::Range, name, "a part is real, not complex");
  }
  NodeRef v = a.value();
  NodeRef given = operandNode(value, r);
  NodeRef re = part == OpKind::Real ? given : record(OpKind::Real, r, a.shape(), {v});
  NodeRef im = part == OpKind::Imag ? given : record(OpKind::Imag, r, a.shape(), {v});
  return record(OpKind::MakeComplex, t, a.shape(), {re, im});
}

std::unique_ptr<ArrayHandle> conjOp(const ArrayHandle &a) {
  DType t = a.dtype();
  if (!isNumeric(t))
    undefinedFor(OpKind::Conj, t);
  if (!isComplex(t)) // Numo's conj of a real class is an alias of view
    return std::make_unique<ArrayHandle>(a.storageRef(), a.layout());
  return std::make_unique<ArrayHandle>(recordUnary(OpKind::Conj, a));
}

} // namespace cumo
