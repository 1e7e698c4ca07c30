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

VALUE dotMethod(VALUE self, VALUE other) {
  ArrayHandle &a = handleOf(self, "dot");
  OperandHolder b;
  prepareOperand(b, other, a.dtype(), "dot");
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return dotOp(a, rightOperand(b, a, "dot"));
  });
  return compatResult(wrapNode(std::move(n)));
}

VALUE matmulMethod(VALUE self, VALUE other) {
  ArrayHandle &a = handleOf(self, "matmul");
  OperandHolder b;
  prepareOperand(b, other, a.dtype(), "matmul");
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return matmulOp("matmul", a, rightOperand(b, a, "matmul"));
  });
  return compatResult(wrapNode(std::move(n)));
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
    VALUE keys = rb_funcall(opts, rb_intern("keys"), 0);
    for (long i = 0; i < RARRAY_LEN(keys); ++i) {
      VALUE k = rb_ary_entry(keys, i);
      ID id = SYMBOL_P(k) ? SYM2ID(k) : 0;
      if (id != kAlpha && id != kBeta && id != kC)
        rb_raise(rb_eArgError, "[gemm] unknown keyword: %" PRIsVALUE, rb_inspect(k));
    }
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
