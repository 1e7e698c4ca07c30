// Matrix products: dot, matmul and gemm(b, alpha:, beta:, c:) (ops/matmul.h).
#include "ops/matmul.h"
#include "ops/matmul_layout.h"
#include "ruby/compat.h"
#include "ruby/convert.h"
#include "ruby/ruby_api.h"

namespace cumo::rb {

namespace {

/// The right operand inside the engine lock. A Ruby Array was uploaded in
/// self's class (Numo's cast); a number is a 0-d operand, which numpy's
/// matmul refuses: matmulShape raises that error, naming `op`.
const ArrayHandle &rightOperand(OperandHolder &h, const ArrayHandle &a, const char *op) {
  const Operand &o = finishOperand(h);
  if (!o.isArray())
    matmulShape(op, a.shape(), {});
  return *o.array;
}

/// self.op(other): the product `make` records, other cast as rightOperand.
template <class Make>
VALUE productMethod(VALUE self, VALUE other, const char *op, Make make) {
  ArrayHandle &a = handleOf(self, op);
  OperandHolder b;
  prepareOperand(b, other, a.dtype(), op);
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return make(a, rightOperand(b, a, op));
  });
  return compatResult(wrapNode(std::move(n)));
}

VALUE dotMethod(VALUE self, VALUE other) {
  return productMethod(self, other, "dot", [](const ArrayHandle &a, const ArrayHandle &b) {
    return dotOp(a, b);
  });
}

VALUE matmulMethod(VALUE self, VALUE other) {
  return productMethod(self, other, "matmul", [](const ArrayHandle &a, const ArrayHandle &b) {
    return matmulOp("matmul", a, b);
  });
}

/// gemm(b, alpha: 1, beta: 0, c: nil): alpha * (self @ b) + beta * c. c is
/// read, not overwritten: the answer is a new array.
VALUE gemmMethod(int argc, VALUE *argv, VALUE self) {
  VALUE other, opts;
  rb_scan_args(argc, argv, "1:", &other, &opts);
  ArrayHandle &a = handleOf(self, "gemm");
  OperandHolder b;
  prepareOperand(b, other, a.dtype(), "gemm");
  Scalar alpha = Scalar::ofInt(1), beta = Scalar::ofInt(0);
  ArrayHandle *c = nullptr;
  if (!NIL_P(opts)) {
    static ID kAlpha = rb_intern("alpha"), kBeta = rb_intern("beta"), kC = rb_intern("c");
    checkKeywords(opts, {kAlpha, kBeta, kC}, "gemm");
    VALUE v;
    if (!NIL_P(v = rb_hash_aref(opts, ID2SYM(kAlpha))))
      alpha = scalarFrom(v, "gemm");
    if (!NIL_P(v = rb_hash_aref(opts, ID2SYM(kBeta))))
      beta = scalarFrom(v, "gemm");
    if (!NIL_P(v = rb_hash_aref(opts, ID2SYM(kC))))
      c = &handleOf(v, "gemm");
  }
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return gemmOp(a, rightOperand(b, a, "gemm"), alpha, beta, c);
  });
  return compatResult(wrapNode(std::move(n)));
}

} // namespace

void initLinalgMethods() {
  using Fn = VALUE (*)(ANYARGS);
  rb_define_method(cNArray, "dot", Fn(dotMethod), 1);
  rb_define_method(cNArray, "matmul", Fn(matmulMethod), 1);
  rb_define_method(cNArray, "gemm", Fn(gemmMethod), -1);
}

} // namespace cumo::rb
