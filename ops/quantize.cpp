#include "ops/quantize.h"

#include "core/error.h"
#include "ops/compose.h"
#include "ops/record.h"
#include "ops/row_ops.h"

namespace cumo {

using namespace compose;

namespace {

/// `v` seen with a trailing axis of length one (v[false, :new]): a view,
/// so the elementwise kernel reads the row's scale where it was computed.
NodeRef withTrailingAxis(const NodeRef &v) {
  Shape shape(v->shape().begin(), v->shape().end());
  shape.push_back(1);
  AffineMap m;
  m.inRank = v->ndim();
  m.outRank = v->ndim() + 1;
  m.matrix.assign(size_t(m.inRank * m.outRank), 0);
  m.offset.assign(size_t(m.inRank), 0);
  for (int64_t k = 0; k < m.inRank; ++k)
    m.at(k, k) = 1;
  NodeRef n = record(OpKind::View, v->dtype(), shape, {v});
  n->extra().view = std::move(m);
  return n;
}

} // namespace

std::pair<NodeRef, NodeRef> quantizeSymmetricOp(const ArrayHandle &x) {
  checkRows("quantize_symmetric", x);
  if (x.size() == 0)
    opError(ErrorKind::Shape, "quantize_symmetric",
            "needs a row to take its scale from, not an empty array " +
                shapeToString(x.shape()));
  NodeRef xa = castNode(x.value(), rowAccumulator(x.dtype()));
  // The largest |x| of each row over kQuantizeLevels (127): NaN for a row holding one, inf
  // for one holding an infinity.
  NodeRef scale = reduce(OpKind::QuantizeScale, xa, {x.ndim() - 1}, /*keepdims=*/false);
  NodeRef xq = castNode(binary(OpKind::Quantize, xa, withTrailingAxis(scale)), DType::Int8);
  return {xq, scale};
}

} // namespace cumo
