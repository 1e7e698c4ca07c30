#include "ops/nan_reduction.h"

#include "core/error.h"
#include "ops/compose.h"
#include "ops/math.h"
#include "ops/record.h"
#include "ops/scan.h"

#include <cmath>
#include <string>

namespace cumo {

using namespace compose;

namespace {

bool holdsNan(DType t) { return isFloat(t) || isComplex(t); }

/// The class a NaN-skipping fold computes in: single precision for the
/// sixteen-bit floats, as their plain sum and mean do.
DType workClass(DType t) { return isNarrowFloat(t) ? DType::SFloat : t; }

/// The Bit array that is true where the Bit array `flags` is false.
NodeRef negated(const NodeRef &flags) {
  return withScalar(OpKind::Eq, flags, Scalar::ofInt(0));
}

/// x with NaN replaced by `fill`.
NodeRef nanTo(const NodeRef &x, double fill) {
  return binary(OpKind::NanTo, x, scalarNode(x->dtype(), Scalar::ofFloat(fill)));
}

/// How many numbers (not NaN) each output of a reduction of x over `axes`
/// folds: an Int64 count, exact however many (the callers divide by it in
/// their class, as Numo divides by its size_t count).
NodeRef numbers(const NodeRef &x, llvm::ArrayRef<int64_t> axes, bool keepdims) {
  ArrayHandle hx(x);
  NodeRef nan = castNode(predicateOp(OpKind::IsNan, hx), DType::Int64);
  NodeRef nans = reduce(OpKind::Sum, nan, axes, keepdims);
  int64_t n = 1;
  for (int64_t d : axes)
    n *= x->shape()[d];
  return binary(OpKind::Sub, scalarNode(DType::Int64, Scalar::ofInt(n)), nans);
}

/// The mean of the numbers of x (in x's class).
NodeRef nanMean(const NodeRef &x, llvm::ArrayRef<int64_t> axes, bool keepdims) {
  NodeRef total = reduce(OpKind::Sum, nanTo(x, 0), axes, keepdims);
  return binary(OpKind::Div, total, castNode(numbers(x, axes, keepdims), total->dtype()));
}

} // namespace

NodeRef nanReduceOp(OpKind op, const ArrayHandle &a, llvm::ArrayRef<int64_t> axes,
                    bool keepdims) {
  DType t = a.dtype();
  if (!holdsNan(t))
    return reduceOp(op, a, axes, keepdims);
  llvm::SmallVector<int64_t, 4> checked = reductionAxes(opName(op), a, axes);
  switch (op) {
  case OpKind::Sum:
    return reduce(OpKind::Sum, nanTo(a.value(), 0), checked, keepdims);
  case OpKind::Prod:
    return reduce(OpKind::Prod, nanTo(a.value(), 1), checked, keepdims);
  case OpKind::Mean: {
    DType work = workClass(t);
    NodeRef x = castNode(a.value(), work);
    return castNode(nanMean(x, checked, keepdims), reductionResultType(OpKind::Mean, t));
  }
  case OpKind::Max:
  case OpKind::Min: {
    // The plain max skips NaN; a line with one answers NaN.
    NodeRef m = reduceOp(op, a, checked, keepdims);
    NodeRef anyNan = reduce(OpKind::Max, predicateOp(OpKind::IsNan, a), checked, keepdims);
    return binary(OpKind::NanIf, m, castNode(anyNan, m->dtype()));
  }
  default:
    throw Error(ErrorKind::Internal, "[nan] no nan: variant of " + std::string(opName(op)));
  }
}

NodeRef nanStatisticOp(Statistic which, const ArrayHandle &a, llvm::ArrayRef<int64_t> axes,
                       bool keepdims) {
  const char *name = statisticName(which);
  DType t = a.dtype();
  if (!holdsNan(t))
    return statisticOp(which, a, axes, keepdims); // raises for these classes
  llvm::SmallVector<int64_t, 4> checked = reductionAxes(name, a, axes);
  DType work = workClass(t);
  NodeRef x = castNode(a.value(), work);
  NodeRef count = numbers(x, checked, keepdims);
  NodeRef total;
  if (which == Statistic::Rms) {
    total = reduce(OpKind::Sum, absSquaredOf(nanTo(x, 0)), checked, keepdims);
    total = binary(OpKind::Div, total, castNode(count, total->dtype()));
  } else {
    NodeRef mean = nanMean(x, checked, /*keepdims=*/true);
    NodeRef dev = nanTo(binary(OpKind::Sub, x, mean), 0);
    total = reduce(OpKind::Sum, absSquaredOf(dev), checked, keepdims);
    NodeRef less = withScalar(OpKind::Sub, count, Scalar::ofInt(1));
    total = binary(OpKind::Div, total, castNode(less, total->dtype()));
  }
  if (which != Statistic::Var)
    total = unary(OpKind::Sqrt, total);
  return castNode(total, isComplex(t) ? realTypeOf(t) : t);
}

NodeRef nanScanOp(OpKind op, const ArrayHandle &a, std::optional<int64_t> axis) {
  if (!holdsNan(a.dtype()))
    return scanOp(op, a, axis);
  // The scan of the numbers (NaN as the identity), and NaN again where no
  // number has come yet: where the running count of numbers is zero.
  double identity = op == OpKind::CumProd ? 1 : 0;
  ArrayHandle numbersOnly(nanTo(a.value(), identity));
  NodeRef scanned = scanOp(op, numbersOnly, axis);
  NodeRef isNumber =
      castNode(negated(predicateOp(OpKind::IsNan, a)), DType::Int64);
  ArrayHandle numberFlags(isNumber);
  NodeRef seen = scanOp(OpKind::CumSum, numberFlags, axis);
  NodeRef none = withScalar(OpKind::Eq, seen, Scalar::ofInt(0));
  return binary(OpKind::NanIf, scanned, castNode(none, scanned->dtype()));
}

NodeRef nanMulsumOp(const ArrayHandle &a, const Operand &b, llvm::ArrayRef<int64_t> axes,
                    bool keepdims) {
  NodeRef prod = mulsumProduct(a, b, axes);
  if (!holdsNan(prod->dtype()))
    return reduce(OpKind::Sum, prod, axes, keepdims);
  // A product with a NaN factor adds nothing; one that is NaN from its
  // numbers alone (infinity times zero) still makes the sum NaN.
  auto nanOf = [](const Operand &x) {
    if (!x.isArray()) // a host number: NaN or not, the same for every element
      return scalarNode(DType::Bit,
                        Scalar::ofInt(std::isnan(x.scalar.f) || std::isnan(x.scalar.im)));
    return holdsNan(x.array->dtype()) ? predicateOp(OpKind::IsNan, *x.array)
                                      : scalarNode(DType::Bit, Scalar::ofInt(0));
  };
  ArrayHandle skipA(nanOf(Operand::of(a))), skipB(nanOf(b));
  ArrayHandle skipped(bitwiseOp(OpKind::BitOr, Operand::of(skipA), Operand::of(skipB)));
  ArrayHandle hp(prod), kept(negated(skipped.value()));
  ArrayHandle nanProduct(predicateOp(OpKind::IsNan, hp));
  NodeRef madeNan = bitwiseOp(OpKind::BitAnd, Operand::of(nanProduct), Operand::of(kept));
  NodeRef term = binary(OpKind::NanIf, nanTo(prod, 0), castNode(madeNan, prod->dtype()));
  return reduce(OpKind::Sum, term, axes, keepdims);
}

} // namespace cumo
