#include "ops/index_reduction.h"

#include "core/error.h"
#include "ops/compose.h"
#include "ops/creation.h"
#include "ops/index_dtype.h"
#include "ops/math.h"
#include "ops/record.h"

#include <cstdint>
#include <string>

namespace cumo {

using namespace compose;

const char *indexReductionName(IndexReduction r) {
  switch (r) {
  case IndexReduction::MaxIndex: return "max_index";
  case IndexReduction::MinIndex: return "min_index";
  case IndexReduction::ArgMax: return "argmax";
  case IndexReduction::ArgMin: return "argmin";
  }
  return "max_index";
}

NodeRef indexReductionOp(IndexReduction which, const ArrayHandle &a,
                         llvm::ArrayRef<int64_t> axes, bool keepdims,
                         bool propagateNan) {
  const char *name = indexReductionName(which);
  DType t = a.dtype();
  if (isComplex(t) || t == DType::Bit)
    opError(ErrorKind::NoMethod, name,
            "undefined for Cumo::" + std::string(nameOf(t)) +
                (isComplex(t) ? ": complex values are not ordered" : ""));
  llvm::SmallVector<int64_t, 4> reduced = reductionAxes(name, a, axes);
  bool isMax = which == IndexReduction::MaxIndex || which == IndexReduction::ArgMax;
  bool flat = which == IndexReduction::MaxIndex || which == IndexReduction::MinIndex;

  // Every candidate index: flat over the whole array, or row-major over the
  // reduced axes only (a sequence of extent 1 along the kept axes, which
  // broadcasts).
  Shape idxShape(a.shape().begin(), a.shape().end());
  if (!flat)
    for (int64_t d = 0; d < a.ndim(); ++d)
      if (!llvm::is_contained(reduced, d))
        idxShape[d] = 1;
  int64_t count = numElements(idxShape);
  NodeRef index = seqNode(DType::Int64, idxShape, Scalar::ofInt(0), Scalar::ofInt(1));

  NodeRef extreme =
      reduceOp(isMax ? OpKind::Max : OpKind::Min, a, reduced, /*keepdims=*/true);
  // hit: the element equals the extreme (never where the extreme is NaN,
  // a row of nothing but NaN).
  NodeRef hit = castNode(binary(OpKind::Eq, a.value(), extreme), DType::Int64);
  if (propagateNan && isFloat(t)) {
    // nan: true (Numo's _nan loops): a line holding NaN answers its first
    // NaN. hit becomes the NaN mask there (hit + any * (nan - hit): 0s
    // and 1s, exact in Int64).
    NodeRef nan = castNode(predicateOp(OpKind::IsNan, a), DType::Int64);
    NodeRef any = reduce(OpKind::Max, nan, reduced, /*keepdims=*/true);
    hit = binary(OpKind::Add, hit, binary(OpKind::Mul, any, binary(OpKind::Sub, nan, hit)));
  }
  // index where hit, `count` (past every index) elsewhere; the least wins.
  NodeRef candidate = binary(OpKind::Add, binary(OpKind::Mul, index, hit),
                             withScalar(OpKind::Mul, withScalar(OpKind::Sub, hit, Scalar::ofInt(1)),
                                        Scalar::ofInt(-count)));
  NodeRef least = reduce(OpKind::Min, candidate, reduced, keepdims);
  // No hit at all (nothing but NaN) answers the first element, as Numo's
  // loop does: index 0 along the axes, or that element's flat index.
  NodeRef none = castNode(withScalar(OpKind::Eq, least, Scalar::ofInt(count)), DType::Int64);
  NodeRef fallback = withScalar(OpKind::Mul, none, Scalar::ofInt(-count));
  if (flat) {
    NodeRef first = reduce(OpKind::Min, index, reduced, keepdims);
    fallback = binary(OpKind::Add, fallback, binary(OpKind::Mul, none, first));
  }
  NodeRef answer = binary(OpKind::Add, least, fallback);
  DType out = indexResultType(numElements(a.shape()));
  return castNode(answer, out);
}

} // namespace cumo
