#include "ops/index_reduction.h"

#include "core/error.h"
#include "fusion/row_groups.h"
#include "ops/compose.h"
#include "ops/creation.h"
#include "ops/index_dtype.h"
#include "ops/math.h"
#include "ops/opaque.h"
#include "ops/portable_ops.h"
#include "ops/record.h"

#include <algorithm>
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
  DType out = indexResultType(numElements(a.shape()));

  if (argLinesOf(a.shape(), reduced).length > kMaxOneRowLength) {
    Shape shape;
    for (int64_t d = 0; d < a.ndim(); ++d) {
      if (!llvm::is_contained(reduced, d))
        shape.push_back(a.shape()[d]);
      else if (keepdims)
        shape.push_back(1);
    }
    NodeRef n = record(isMax ? OpKind::ArgMax : OpKind::ArgMin, out, shape, {a.value()});
    n->extra().axes.push_back(flat ? 1 : 0);
    n->extra().axes.append(reduced.begin(), reduced.end());
    n->scalar = Scalar::ofInt(propagateNan && isFloat(t) ? 1 : 0);
    return n;
  }

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
  return castNode(answer, out);
}

ArgLines argLinesOf(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> reducedAxes) {
  ArgLines l;
  for (size_t d = 0; d < shape.size(); ++d)
    (llvm::is_contained(reducedAxes, int64_t(d)) ? l.length : l.count) *= shape[d];
  return l;
}

namespace {

/// The lines of one ArgMax or ArgMin call, in the kernel's order: line
/// `line`'s element k lies at offset(line, k), and its flat index in the
/// whole array (max_index's answer) is flatIndex(line, k).
struct LineWalk {
  const OpaqueOperand &in;
  llvm::ArrayRef<int64_t> reduced;

  bool isReduced(size_t d) const { return llvm::is_contained(reduced, int64_t(d)); }
  /// Coordinate d of (line, k): kept axes unravel `line`, reduced ones `k`.
  template <class F> void coords(int64_t line, int64_t k, F &&f) const {
    for (size_t d = in.shape.size(); d-- > 0;) {
      int64_t &rest = isReduced(d) ? k : line;
      f(d, rest % in.shape[d]);
      rest /= in.shape[d];
    }
  }
  int64_t offset(int64_t line, int64_t k) const {
    int64_t at = in.offset;
    coords(line, k, [&](size_t d, int64_t c) { at += c * in.strides[d]; });
    return at;
  }
  int64_t flatIndex(int64_t line, int64_t k) const {
    int64_t flat = 0, step = 1;
    llvm::SmallVector<int64_t, 4> c(in.shape.size(), 0);
    coords(line, k, [&](size_t d, int64_t v) { c[d] = v; });
    for (size_t d = in.shape.size(); d-- > 0;) {
      flat += c[d] * step;
      step *= in.shape[d];
    }
    return flat;
  }
};

/// Each line's first extreme, skipping NaN (or its first NaN when
/// `propagate`), as the CUDA kernel folds its pairs (cumo_ops::arg_better).
template <bool Max, class T, class O>
void argLines(const OpaqueCall &call) {
  const OpaqueOperand &in = call.operands[0];
  const T *src = static_cast<const T *>(in.data);
  O *dst = static_cast<O *>(call.out);
  bool flat = call.ints[0] != 0;
  bool propagate = call.scalar.asDouble() != 0;
  LineWalk walk{in, call.ints.drop_front()};
  ArgLines lines = argLinesOf(in.shape, walk.reduced);
  using K = decltype(cumo_ops::arg_key(T{}));
  for (int64_t line = 0; line < lines.count; ++line) {
    K best{};
    int64_t at = -1, nan = -1;
    for (int64_t k = 0; k < lines.length; ++k) {
      K v = cumo_ops::arg_key(src[walk.offset(line, k)]);
      if (cumo_ops::sort_isnan(v)) {
        nan = cumo_ops::arg_first_nan(nan, k);
        continue;
      }
      if (cumo_ops::arg_better<Max>(best, at, v, k)) {
        best = v;
        at = k;
      }
    }
    // Nothing but NaN: the line's first element.
    int64_t k = propagate && nan >= 0 ? nan : std::max<int64_t>(at, 0);
    dst[line] = O(flat ? walk.flatIndex(line, k) : k);
  }
}

} // namespace

void argReduceReference(const OpaqueCall &call) {
  dispatchDType(call.operands[0].dtype, [&]<DType D, class T>() {
    if constexpr (kIsComplexC<T> || D == DType::Bit) {
      throw Error(ErrorKind::Internal, "[argmax] an operand of no order");
    } else {
      bool isMax = call.op == OpKind::ArgMax;
      bool wide = call.outDtype == DType::Int64;
      if (isMax)
        wide ? argLines<true, T, int64_t>(call) : argLines<true, T, int32_t>(call);
      else
        wide ? argLines<false, T, int64_t>(call) : argLines<false, T, int32_t>(call);
    }
  });
}

} // namespace cumo
