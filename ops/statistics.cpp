#include "ops/statistics.h"

#include "core/error.h"
#include "ops/compose.h"
#include "ops/nan_reduction.h"
#include "ops/record.h"

#include <string>

namespace cumo {

using namespace compose;

const char *statisticName(Statistic s) {
  switch (s) {
  case Statistic::Var: return "var";
  case Statistic::Stddev: return "stddev";
  case Statistic::Rms: return "rms";
  }
  return "var";
}

namespace {

/// How many elements each output of a reduction of `shape` over the
/// (checked) `axes` folds.
int64_t foldedCount(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axes) {
  int64_t n = 1;
  for (int64_t d : axes)
    n *= shape[d];
  return n;
}

} // namespace

NodeRef absSquaredOf(const NodeRef &x) {
  if (!isComplex(x->dtype()))
    return binary(OpKind::Mul, x, x);
  NodeRef m = unary(OpKind::Abs, x);
  return binary(OpKind::Mul, m, m);
}

NodeRef statisticOp(Statistic which, const ArrayHandle &a, llvm::ArrayRef<int64_t> axes,
                    bool keepdims) {
  const char *name = statisticName(which);
  DType t = a.dtype();
  if (!isFloat(t) && !isComplex(t))
    opError(ErrorKind::NoMethod, name,
            "undefined for Cumo::" + std::string(nameOf(t)) + " (float and complex classes only)");
  llvm::SmallVector<int64_t, 4> checked = reductionAxes(name, a, axes);
  axes = checked;
  // The class it computes in: single precision for the sixteen-bit floats.
  DType work = isNarrowFloat(t) ? DType::SFloat : t;
  ArrayHandle x(a.dtype() == work ? a.value() : castTo(a, work));
  int64_t n = foldedCount(a.shape(), axes);
  NodeRef total;
  if (which == Statistic::Rms) {
    total = reduce(OpKind::Sum, absSquaredOf(x.value()), axes, keepdims);
    total = withScalar(OpKind::Div, total, Scalar::ofFloat(double(n)));
  } else {
    NodeRef mean = reduce(OpKind::Mean, x.value(), axes, /*keepdims=*/true);
    NodeRef dev = binary(OpKind::Sub, x.value(), mean);
    total = reduce(OpKind::Sum, absSquaredOf(dev), axes, keepdims);
    total = withScalar(OpKind::Div, total, Scalar::ofFloat(double(n - 1)));
  }
  if (which != Statistic::Var)
    total = unary(OpKind::Sqrt, total);
  return castNode(total, isComplex(t) ? realTypeOf(t) : t);
}

NodeRef ptpOp(const ArrayHandle &a, llvm::ArrayRef<int64_t> axes, bool keepdims,
              bool propagateNan) {
  if (isComplex(a.dtype()))
    opError(ErrorKind::NoMethod, "ptp",
            "undefined for Cumo::" + std::string(nameOf(a.dtype())) +
                ": complex values are not ordered");
  if (a.dtype() == DType::Bit)
    opError(ErrorKind::NoMethod, "ptp", "undefined for Cumo::Bit");
  reductionAxes("ptp", a, axes);
  auto extreme = propagateNan ? nanReduceOp : reduceOp;
  return binary(OpKind::Sub, extreme(OpKind::Max, a, axes, keepdims),
                extreme(OpKind::Min, a, axes, keepdims));
}

std::pair<NodeRef, NodeRef> minmaxOp(const ArrayHandle &a, llvm::ArrayRef<int64_t> axes,
                                     bool keepdims, bool propagateNan) {
  if (isComplex(a.dtype()))
    opError(ErrorKind::NoMethod, "minmax",
            "undefined for Cumo::" + std::string(nameOf(a.dtype())) +
                ": complex values are not ordered");
  reductionAxes("minmax", a, axes);
  auto extreme = propagateNan ? nanReduceOp : reduceOp;
  return {extreme(OpKind::Min, a, axes, keepdims), extreme(OpKind::Max, a, axes, keepdims)};
}

NodeRef mulsumProduct(const ArrayHandle &a, const Operand &b, llvm::ArrayRef<int64_t> axes) {
  if (a.dtype() == DType::Bit || (b.isArray() && b.array->dtype() == DType::Bit))
    opError(ErrorKind::NoMethod, "mulsum", "undefined for Cumo::Bit");
  if (!broadcastShapes(a.shape(), b.shape()))
    opError(ErrorKind::Shape, "mulsum",
            "shapes " + shapeToString(a.shape()) + " and " + shapeToString(b.shape()) +
                " do not broadcast");
  NodeRef prod = binaryOp(OpKind::Mul, Operand::of(a), b);
  ArrayHandle p(prod);
  reductionAxes("mulsum", p, axes);
  return prod;
}

NodeRef mulsumOp(const ArrayHandle &a, const Operand &b, llvm::ArrayRef<int64_t> axes,
                 bool keepdims) {
  return reduce(OpKind::Sum, mulsumProduct(a, b, axes), axes, keepdims);
}

} // namespace cumo
