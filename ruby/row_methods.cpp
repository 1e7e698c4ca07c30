// The fused row operations: layer_norm(gamma, beta, eps:), rms_norm(gamma,
// eps:), softmax and quantize_symmetric, along the last axis
// (ops/row_ops.h, ops/quantize.h).
#include "ops/quantize.h"
#include "ops/row_ops.h"
#include "ruby/convert.h"
#include "ruby/ruby_api.h"

namespace cumo::rb {

namespace {

constexpr double kDefaultEps = 1e-5;

/// eps: from the keywords (1e-5 when absent); any other keyword raises
/// ArgumentError naming the op.
double epsFrom(VALUE opts, const char *op) {
  if (NIL_P(opts))
    return kDefaultEps;
  static ID eps = rb_intern("eps");
  checkKeywords(opts, {eps}, op);
  VALUE v = rb_hash_aref(opts, ID2SYM(eps));
  if (!RB_FLOAT_TYPE_P(v) && !RB_INTEGER_TYPE_P(v))
    rb_raise(rb_eTypeError, "[%s] eps must be a Float, not %" PRIsVALUE, op, rb_obj_class(v));
  return NUM2DBL(v);
}

VALUE layerNormMethod(int argc, VALUE *argv, VALUE self) {
  VALUE gamma, beta, opts;
  rb_scan_args(argc, argv, "2:", &gamma, &beta, &opts);
  ArrayHandle &x = handleOf(self, "layer_norm");
  ArrayHandle &g = handleOf(gamma, "layer_norm");
  ArrayHandle &b = handleOf(beta, "layer_norm");
  double eps = epsFrom(opts, "layer_norm");
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return layerNormOp(x, g, b, eps);
  });
  return wrapNode(std::move(n));
}

VALUE rmsNormMethod(int argc, VALUE *argv, VALUE self) {
  VALUE gamma, opts;
  rb_scan_args(argc, argv, "1:", &gamma, &opts);
  ArrayHandle &x = handleOf(self, "rms_norm");
  ArrayHandle &g = handleOf(gamma, "rms_norm");
  double eps = epsFrom(opts, "rms_norm");
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return rmsNormOp(x, g, eps);
  });
  return wrapNode(std::move(n));
}

VALUE softmaxMethod(VALUE self) {
  ArrayHandle &x = handleOf(self, "softmax");
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return softmaxOp(x);
  });
  return wrapNode(std::move(n));
}

/// [xq, scale]: Int8 rows and their scales.
VALUE quantizeSymmetricMethod(VALUE self) {
  ArrayHandle &x = handleOf(self, "quantize_symmetric");
  auto r = guarded([&] {
    releaseDeadHandles();
    return quantizeSymmetricOp(x);
  });
  return wrapPair(std::move(r));
}

} // namespace

void initRowMethods() {
  using Fn = VALUE (*)(ANYARGS);
  rb_define_method(cNArray, "layer_norm", Fn(layerNormMethod), -1);
  rb_define_method(cNArray, "rms_norm", Fn(rmsNormMethod), -1);
  rb_define_method(cNArray, "softmax", Fn(softmaxMethod), 0);
  rb_define_method(cNArray, "quantize_symmetric", Fn(quantizeSymmetricMethod), 0);
}

} // namespace cumo::rb
