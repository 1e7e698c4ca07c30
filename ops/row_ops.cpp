#include "ops/row_ops.h"

#include "core/error.h"
#include "fusion/reduce_order.h"
#include "ops/record.h"
#include "ops/reference.h"
#include "ops/row_layout.h"

#include <string>
#include <vector>

namespace cumo {

void checkRows(std::string_view op, const ArrayHandle &x) {
  if (!isFloat(x.dtype()))
    opError(ErrorKind::Type, op, "needs a float class, not " + className(x.dtype()));
  if (x.ndim() == 0)
    opError(ErrorKind::Shape, op, "needs an array with a last axis, not a 0-dim one");
}

namespace {

/// gamma and beta: one-dimensional, as long as the last axis, of the
/// receiver's class.
void checkAffine(std::string_view op, const char *name, const ArrayHandle &x,
                 const ArrayHandle &p) {
  if (p.dtype() != x.dtype())
    opError(ErrorKind::Type, op,
            std::string(name) + " must be " + className(x.dtype()) + ", not " +
                className(p.dtype()));
  int64_t n = x.shape().back();
  if (p.ndim() != 1 || p.shape()[0] != n)
    opError(ErrorKind::Shape, op,
            std::string(name) + " must be one-dimensional of length " + std::to_string(n) +
                " (the last axis), not " + shapeToString(p.shape()));
}

NodeRef rowNode(OpKind op, const ArrayHandle &x, llvm::ArrayRef<NodeRef> inputs,
                double eps) {
  NodeRef n = record(op, x.dtype(), x.shape(), inputs);
  n->scalar = Scalar::ofFloat(eps);
  return n;
}

/// The rows of an operand: element j of row r lies at base(r) + j * step.
struct Rows {
  const OpaqueOperand &in;
  int64_t n = 0, count = 0;
  explicit Rows(const OpaqueOperand &o) : in(o) {
    n = o.shape.back();
    count = n ? numElements(o.shape) / n : 0;
  }
  int64_t step() const { return in.strides.back(); }
  int64_t base(int64_t r) const {
    int64_t at = in.offset;
    for (size_t d = in.shape.size() - 1; d-- > 0;) {
      at += (r % in.shape[d]) * in.strides[d];
      r /= in.shape[d];
    }
    return at;
  }
};

/// Folds term(j) over a row of n elements in the order of `layout`.
template <class A, class Op, class Term>
A foldRow(const RowLayout &layout, int64_t n, A identity, Op op, Term term,
          std::vector<A> &lanes) {
  lanes.assign(size_t(layout.lanes), identity);
  for (int64_t t = 0; t < layout.lanes; ++t)
    for (int64_t g = t; g * layout.group < n; g += layout.lanes)
      for (int64_t j = g * layout.group; j < std::min(n, (g + 1) * layout.group); ++j)
        lanes[size_t(t)] = op(lanes[size_t(t)], term(j));
  return layout.warpPerRow() ? warpTree(lanes.data(), op)
                             : blockTree(lanes.data(), layout.lanes, identity, op);
}

template <class T, class A> void runRows(const OpaqueCall &call) {
  Rows rows(call.operands[0]);
  const T *x = static_cast<const T *>(rows.in.data);
  T *out = static_cast<T *>(call.out);
  int64_t n = rows.n;
  RowLayout layout = rowOpLayout(call.op, rows.count, n, call.outDtype,
                                rowAccumulator(call.outDtype));
  A eps = A(call.scalar.asDouble());
  auto param = [&](size_t i, int64_t j) {
    const OpaqueOperand &p = call.operands[i];
    return ref::convert<A>(static_cast<const T *>(p.data)[p.offset + j * p.strides[0]]);
  };
  auto sum = [](A a, A b) { return cumo_ops::wadd(a, b); };
  auto max = [](A a, A b) { return cumo_ops::reduce_max(a, b); };
  std::vector<A> lanes;
  for (int64_t r = 0; r < rows.count; ++r) {
    int64_t base = rows.base(r), step = rows.step();
    auto at = [&](int64_t j) { return ref::convert<A>(x[base + j * step]); };
    T *o = out + r * n;
    switch (call.op) {
    case OpKind::LayerNorm: {
      A mean = foldRow<A>(layout, n, A(0), sum, at, lanes) / A(n);
      A var = foldRow<A>(
                  layout, n, A(0), sum,
                  [&](int64_t j) {
                    A d = at(j) - mean;
                    return d * d;
                  },
                  lanes) /
              A(n);
      A sd = cumo_ops::m_sqrt(var + eps);
      for (int64_t j = 0; j < n; ++j)
        o[j] = ref::convert<T>(
            cumo_ops::layer_norm_element(at(j), mean, sd, param(1, j), param(2, j)));
      break;
    }
    case OpKind::RmsNorm: {
      A ms = foldRow<A>(
                 layout, n, A(0), sum,
                 [&](int64_t j) {
                   A v = at(j);
                   return v * v;
                 },
                 lanes) /
             A(n);
      A rms = cumo_ops::m_sqrt(ms + eps);
      for (int64_t j = 0; j < n; ++j)
        o[j] = ref::convert<T>(cumo_ops::rms_norm_element(at(j), rms, param(1, j)));
      break;
    }
    case OpKind::Softmax: {
      A m = foldRow<A>(layout, n, ref::reduceIdentity<A>(OpKind::Max), max, at, lanes);
      A total = foldRow<A>(
          layout, n, A(0), sum, [&](int64_t j) { return cumo_ops::m_exp(at(j) - m); }, lanes);
      for (int64_t j = 0; j < n; ++j)
        o[j] = ref::convert<T>(cumo_ops::m_exp(at(j) - m) / total);
      break;
    }
    default:
      throw Error(ErrorKind::Internal, "[row ops] not a row operation");
    }
  }
}

} // namespace

DType rowAccumulator(DType t) { return t == DType::DFloat ? DType::DFloat : DType::SFloat; }

NodeRef layerNormOp(const ArrayHandle &x, const ArrayHandle &gamma, const ArrayHandle &beta,
                    double eps) {
  checkRows("layer_norm", x);
  checkAffine("layer_norm", "gamma", x, gamma);
  checkAffine("layer_norm", "beta", x, beta);
  return rowNode(OpKind::LayerNorm, x, {x.value(), gamma.value(), beta.value()}, eps);
}

NodeRef rmsNormOp(const ArrayHandle &x, const ArrayHandle &gamma, double eps) {
  checkRows("rms_norm", x);
  checkAffine("rms_norm", "gamma", x, gamma);
  return rowNode(OpKind::RmsNorm, x, {x.value(), gamma.value()}, eps);
}

NodeRef softmaxOp(const ArrayHandle &x) {
  checkRows("softmax", x);
  return rowNode(OpKind::Softmax, x, {x.value()}, 0.0);
}

void rowOpReference(const OpaqueCall &call) {
  switch (call.outDtype) {
  case DType::HFloat: return runRows<cumo_ops::half, float>(call);
  case DType::BFloat: return runRows<cumo_ops::bfloat16, float>(call);
  case DType::SFloat: return runRows<float, float>(call);
  case DType::DFloat: return runRows<double, double>(call);
  default: throw Error(ErrorKind::Internal, "[row ops] not a float class");
  }
}

} // namespace cumo
