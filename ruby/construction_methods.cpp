// Construction: eye (class and instance), linspace, logspace, logseq,
// rand_norm, new_narray, new_zeros, new_ones, new_fill, and the class
// constants MAX, MIN, EPSILON, ELEMENT_BIT_SIZE, ELEMENT_BYTE_SIZE and
// CONTIGUOUS_STRIDE.
#include "ops/construction.h"
#include "ops/creation.h"
#include "ruby/convert.h"
#include "ruby/ruby_api.h"

#include <limits>

namespace cumo::rb {

namespace {

DType classDType(VALUE klass, const char *op) {
  DType t;
  if (!dtypeOfClass(klass, &t))
    rb_raise(rb_eTypeError, "[%s] call it on a class such as Cumo::DFloat", op);
  return t;
}

void requireFloat(DType t, const char *op) {
  if (!isFloat(t))
    rb_raise(rb_eNoMethodError, "[%s] undefined for Cumo::%s (float classes only)", op,
             std::string(nameOf(t)).c_str());
}

void requireInexact(DType t, const char *op) {
  if (!isFloat(t) && !isComplex(t))
    rb_raise(rb_eNoMethodError, "[%s] undefined for %s (float and complex classes only)", op,
             className(t).c_str());
}

/// Writes what `make` answers into the whole of `self` (self answered).
template <class F> VALUE writeInto(VALUE self, const char *op, F &&make) {
  checkFrozen(self, op);
  ArrayHandle &a = handleOf(self, op);
  guarded([&] {
    releaseDeadHandles();
    assignValue(a, make(a), op);
  });
  return self;
}

// ---- eye ----------------------------------------------------------------------

VALUE eyeMethod(int argc, VALUE *argv, VALUE self) {
  VALUE velem, vofs;
  rb_scan_args(argc, argv, "02", &velem, &vofs);
  checkFrozen(self, "eye");
  ArrayHandle &a = handleOf(self, "eye");
  Scalar value = NIL_P(velem) ? Scalar::ofInt(1) : scalarFrom(velem, "eye");
  int64_t offset = NIL_P(vofs) ? 0 : int64Arg(vofs, "eye", "an offset");
  guarded([&] {
    releaseDeadHandles();
    eyeInto(a, value, offset);
  });
  return self;
}

VALUE eyeClassMethod(int argc, VALUE *argv, VALUE klass) {
  classDType(klass, "eye");
  if (argc == 0)
    rb_raise(rb_eArgError, "[eye] No argument");
  VALUE shape[2];
  if (argc == 1) {
    shape[0] = shape[1] = argv[0];
    argv = shape;
    argc = 2;
  }
  VALUE obj = rb_funcallv(klass, rb_intern("new"), argc, argv);
  return rb_funcall(obj, rb_intern("eye"), 0);
}

// ---- sequences ----------------------------------------------------------------

/// The ends of a linspace or logspace: Ruby numbers (their difference is
/// taken in Ruby, which would raise without naming the op).
void requireNumbers(VALUE a, VALUE b, const char *op) {
  for (VALUE v : {a, b})
    if (!isRubyScalar(v) || v == Qtrue || v == Qfalse)
      rb_raise(rb_eTypeError, "[%s] the ends must be numbers, not %" PRIsVALUE, op,
               rb_obj_class(v));
}

VALUE linspaceMethod(int argc, VALUE *argv, VALUE klass) {
  VALUE x1, x2, vsize;
  rb_scan_args(argc, argv, "21", &x1, &x2, &vsize);
  classDType(klass, "linspace");
  if (NIL_P(vsize))
    vsize = INT2FIX(100);
  requireNumbers(x1, x2, "linspace");
  // Numo's arithmetic: (x2 - x1) / (n - 1.0) in Ruby, then seq.
  double n = double(int64Arg(vsize, "linspace", "a size"));
  VALUE step = rb_funcall(rb_funcall(x2, '-', 1, x1), '/', 1, DBL2NUM(n - 1));
  VALUE obj = rb_funcall(klass, rb_intern("new"), 1, vsize);
  return rb_funcall(obj, rb_intern("seq"), 2, x1, step);
}

VALUE logspaceMethod(int argc, VALUE *argv, VALUE klass) {
  VALUE a, b, vsize, vbase;
  rb_scan_args(argc, argv, "22", &a, &b, &vsize, &vbase);
  requireFloat(classDType(klass, "logspace"), "logspace");
  if (NIL_P(vsize))
    vsize = INT2FIX(50);
  if (NIL_P(vbase))
    vbase = DBL2NUM(10.0);
  requireNumbers(a, b, "logspace");
  double n = double(int64Arg(vsize, "logspace", "a size"));
  VALUE step = rb_funcall(rb_funcall(b, '-', 1, a), '/', 1, DBL2NUM(n - 1));
  VALUE obj = rb_funcall(klass, rb_intern("new"), 1, vsize);
  return rb_funcall(obj, rb_intern("logseq"), 3, a, step, vbase);
}

VALUE logseqMethod(int argc, VALUE *argv, VALUE self) {
  VALUE vbeg, vstep, vbase;
  rb_scan_args(argc, argv, "21", &vbeg, &vstep, &vbase);
  requireInexact(handleOf(self, "logseq").dtype(), "logseq");
  Scalar beg = scalarFrom(vbeg, "logseq"), step = scalarFrom(vstep, "logseq");
  Scalar base = NIL_P(vbase) ? Scalar::ofFloat(10.0) : scalarFrom(vbase, "logseq");
  return writeInto(self, "logseq", [&](const ArrayHandle &a) {
    return logseqNode(a.dtype(), a.shape(), beg, step, base);
  });
}

VALUE randNormMethod(int argc, VALUE *argv, VALUE self) {
  VALUE vmu, vsigma;
  rb_scan_args(argc, argv, "02", &vmu, &vsigma);
  requireInexact(handleOf(self, "rand_norm").dtype(), "rand_norm");
  Scalar mu = NIL_P(vmu) ? Scalar::ofFloat(0.0) : scalarFrom(vmu, "rand_norm");
  Scalar sigma = NIL_P(vsigma) ? Scalar::ofFloat(1.0) : scalarFrom(vsigma, "rand_norm");
  return writeInto(self, "rand_norm", [&](const ArrayHandle &a) {
    return randNormNode(a.dtype(), a.shape(), mu, sigma);
  });
}

// ---- arrays like self -----------------------------------------------------------

VALUE shapeArgs(VALUE self) { return rb_funcall(self, rb_intern("shape"), 0); }

VALUE newNarrayMethod(VALUE self) {
  return rb_funcall(rb_obj_class(self), rb_intern("new"), 1, shapeArgs(self));
}
VALUE newZerosMethod(VALUE self) {
  return rb_funcall(rb_obj_class(self), rb_intern("zeros"), 1, shapeArgs(self));
}
VALUE newOnesMethod(VALUE self) {
  return rb_funcall(rb_obj_class(self), rb_intern("ones"), 1, shapeArgs(self));
}
VALUE newFillMethod(VALUE self, VALUE v) {
  return rb_funcall(newNarrayMethod(self), rb_intern("fill"), 1, v);
}

// ---- constants --------------------------------------------------------------------

void defineConstants(VALUE klass, DType t) {
  if (t == DType::Bit) {
    rb_define_const(klass, "ELEMENT_BIT_SIZE", INT2FIX(1));
    rb_define_const(klass, "ELEMENT_BYTE_SIZE", DBL2NUM(1.0 / 8));
    rb_define_const(klass, "CONTIGUOUS_STRIDE", INT2FIX(1));
    return;
  }
  size_t size = sizeOf(t);
  rb_define_const(klass, "ELEMENT_BIT_SIZE", INT2FIX(size * 8));
  rb_define_const(klass, "ELEMENT_BYTE_SIZE", INT2FIX(size));
  rb_define_const(klass, "CONTIGUOUS_STRIDE", INT2FIX(size));
  // MAX, MIN and EPSILON: where the classes' own initialization has
  // defined them already (the dtype table's, which knows half, bfloat16
  // and complex), keep those.
  static const ID kMax = rb_intern("MAX");
  if (rb_const_defined_at(klass, kMax))
    return;
  dispatchDType(t, [&]<DType D, class T>() {
    using L = std::numeric_limits<T>;
    if constexpr (L::is_specialized) {
      if constexpr (L::is_integer) {
        if constexpr (L::is_signed) {
          rb_define_const(klass, "MIN", LL2NUM((long long)L::min()));
          rb_define_const(klass, "MAX", LL2NUM((long long)L::max()));
        } else {
          rb_define_const(klass, "MIN", INT2FIX(0));
          rb_define_const(klass, "MAX", ULL2NUM((unsigned long long)L::max()));
        }
      } else {
        // Numo's MIN of a float class is the smallest positive normal.
        rb_define_const(klass, "EPSILON", DBL2NUM(double(L::epsilon())));
        rb_define_const(klass, "MIN", DBL2NUM(double(L::min())));
        rb_define_const(klass, "MAX", DBL2NUM(double(L::max())));
      }
    }
  });
}

} // namespace

void initConstructionMethods() {
  using Fn = VALUE (*)(ANYARGS);
  rb_define_method(cNArray, "eye", Fn(eyeMethod), -1);
  rb_define_singleton_method(cNArray, "eye", Fn(eyeClassMethod), -1);
  rb_define_singleton_method(cNArray, "linspace", Fn(linspaceMethod), -1);
  rb_define_singleton_method(cNArray, "logspace", Fn(logspaceMethod), -1);
  rb_define_method(cNArray, "logseq", Fn(logseqMethod), -1);
  rb_define_method(cNArray, "rand_norm", Fn(randNormMethod), -1);
  rb_define_method(cNArray, "new_narray", Fn(newNarrayMethod), 0);
  rb_define_method(cNArray, "new_zeros", Fn(newZerosMethod), 0);
  rb_define_method(cNArray, "new_ones", Fn(newOnesMethod), 0);
  rb_define_method(cNArray, "new_fill", Fn(newFillMethod), 1);
  for (int i = 0; i < kNumDTypes; ++i)
    defineConstants(classOf(DType(i)), DType(i));
}

} // namespace cumo::rb
