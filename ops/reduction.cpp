#include "ops/reduction.h"

#include "core/error.h"
#include "ops/elementwise.h"
#include "ops/record.h"

#include <algorithm>
#include <string>

namespace cumo {

DType reductionResultType(OpKind op, DType t) {
  switch (op) {
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::QuantizeScale:
    return t;
  case OpKind::Mean:
    return isFloat(t) || isComplex(t) ? t : DType::DFloat;
  default:
    // Floats (the sixteen-bit ones included: they accumulate in single
    // precision and round once) and complex classes answer their own.
    return isFloat(t) || isComplex(t) ? t : accumulatorOf(t);
  }
}

llvm::SmallVector<int64_t, 4> reductionAxes(std::string_view op, const ArrayHandle &a,
                                            llvm::ArrayRef<int64_t> axes) {
  int64_t ndim = a.ndim();
  llvm::SmallVector<int64_t, 4> norm;
  if (axes.empty()) {
    for (int64_t d = 0; d < ndim; ++d)
      norm.push_back(d);
  } else {
    for (int64_t ax : axes) {
      int64_t d = ax < 0 ? ax + ndim : ax;
      if (d < 0 || d >= ndim)
        opError(ErrorKind::Dimension, op,
                "axis " + std::to_string(ax) + " is out of range for an array of " +
                    std::to_string(ndim) + " axes");
      if (llvm::is_contained(norm, d))
        opError(ErrorKind::Argument, op, "axis " + std::to_string(ax) + " given twice");
      norm.push_back(d);
    }
    std::sort(norm.begin(), norm.end());
  }
  if (a.size() == 0)
    opError(ErrorKind::Shape, op, "cannot reduce empty NArray");
  return norm;
}

NodeRef reduceOp(OpKind op, const ArrayHandle &a, llvm::ArrayRef<int64_t> axes,
                 bool keepdims) {
  int64_t ndim = a.ndim();
  llvm::SmallVector<int64_t, 4> norm = reductionAxes(opName(op), a, axes);
  if (a.dtype() == DType::Bit && op != OpKind::Sum && op != OpKind::Mean &&
      op != OpKind::Max && op != OpKind::Min)
    opError(ErrorKind::Type, opName(op), "not defined for Cumo::Bit");
  if (op == OpKind::QuantizeScale && !isFloat(a.dtype()))
    opError(ErrorKind::Type, opName(op), "needs a float class, not " + className(a.dtype()));
  if (isComplex(a.dtype()) && (op == OpKind::Max || op == OpKind::Min))
    opError(ErrorKind::NoMethod, opName(op),
            "undefined for Cumo::" + std::string(nameOf(a.dtype())) +
                ": complex values are not ordered");
  Shape out;
  for (int64_t d = 0; d < ndim; ++d) {
    if (llvm::is_contained(norm, d)) {
      if (keepdims)
        out.push_back(1);
    } else {
      out.push_back(a.shape()[d]);
    }
  }
  NodeRef n = record(op, reductionResultType(op, a.dtype()), out, {a.value()});
  n->extra().axes.assign(norm.begin(), norm.end());
  n->extra().keepdims = keepdims;
  return n;
}

} // namespace cumo
