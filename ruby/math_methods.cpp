// Numo's math in Ruby: the Cumo::NMath module, which picks a float class
// from all its arguments, the per-class modules (Cumo::SFloat::Math,
// DFloat, HFloat, BFloat, SComplex, DComplex), which keep theirs, and the elementwise methods of
// ops/math.h (rounding, sign, predicates, bitwise operators, clip, divmod,
// T.maximum and T.minimum). Glue only: every decision is in ops/math.cpp.
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/math.h"
#include "ruby/convert.h"
#include "ruby/ruby_api.h"

namespace cumo::rb {

namespace {

using Fn = VALUE (*)(ANYARGS);

/// The module a math function is defined in: Cumo::NMath, or the Math
/// module of one float class (the DType's value).
constexpr int kNMath = -1;

/// The class of one NMath argument as Numo's dispatch sees it: an NArray's
/// own; a Ruby Float is a DFloat, an Integer an Int32 (Int64 beyond its
/// range), true and false Bit, an Array what Cumo::NArray[] makes of it.
DType argClass(VALUE v, const char *fn) {
  if (isNArray(v))
    return handleOf(v, fn).dtype();
  if (isRubyScalar(v) || RB_TYPE_P(v, T_ARRAY))
    return inferDType(v);
  rb_raise(rb_eTypeError, "[%s] expected Cumo::NArray or a number, not %" PRIsVALUE,
           fn, rb_obj_class(v));
}

DType mathClass(int module, const char *fn, const VALUE *args, int n) {
  if (module != kNMath)
    return DType(module);
  llvm::SmallVector<DType, 2> classes;
  for (int i = 0; i < n; ++i)
    classes.push_back(argClass(args[i], fn));
  return guarded([&] { return nmathClass(fn, classes); });
}

VALUE mathCall(OpKind op, int module, const VALUE *args, int n) {
  const char *fn = opName(op).data();
  DType t = mathClass(module, fn, args, n);
  OperandHolder h[2];
  for (int i = 0; i < n; ++i)
    prepareOperand(h[i], args[i], t, fn);
  auto compute = [&] {
    llvm::SmallVector<Operand, 2> operands;
    for (int i = 0; i < n; ++i)
      operands.push_back(finishOperand(h[i]));
    return mathOp(op, t, operands);
  };
  // The first argument carrying Numo's inplace flag takes the result.
  for (int i = 0; i < n; ++i)
    if (isNArray(args[i]) && handleOf(args[i], fn).inplace)
      return recordInto(args[i], handleOf(args[i], fn), fn, compute);
  return recordNode(compute);
}

template <OpKind Op, int Module> VALUE math1(VALUE, VALUE x) {
  return mathCall(Op, Module, &x, 1);
}

template <OpKind Op, int Module> VALUE math2(VALUE, VALUE x, VALUE y) {
  VALUE args[2] = {x, y};
  return mathCall(Op, Module, args, 2);
}

template <int Module> VALUE frexpFn(VALUE, VALUE x) {
  DType t = mathClass(Module, "frexp", &x, 1);
  OperandHolder h;
  prepareOperand(h, x, t, "frexp");
  auto r = guarded([&] {
    releaseDeadHandles();
    return frexpOp(t, finishOperand(h));
  });
  return wrapPair(std::move(r));
}

template <int Module> void defineMathFunctions(VALUE mod) {
#define CUMO_MATH1(name, Op)                                                   \
  rb_define_module_function(mod, name, Fn(math1<OpKind::Op, Module>), 1);
#define CUMO_MATH2(name, Op)                                                   \
  rb_define_module_function(mod, name, Fn(math2<OpKind::Op, Module>), 2);
  CUMO_MATH1("sqrt", Sqrt)
  CUMO_MATH1("cbrt", Cbrt)
  CUMO_MATH1("log", Log)
  CUMO_MATH1("log2", Log2)
  CUMO_MATH1("log10", Log10)
  CUMO_MATH1("exp", Exp)
  CUMO_MATH1("exp2", Exp2)
  CUMO_MATH1("exp10", Exp10)
  CUMO_MATH1("sin", Sin)
  CUMO_MATH1("cos", Cos)
  CUMO_MATH1("tan", Tan)
  CUMO_MATH1("asin", Asin)
  CUMO_MATH1("acos", Acos)
  CUMO_MATH1("atan", Atan)
  CUMO_MATH1("sinh", Sinh)
  CUMO_MATH1("cosh", Cosh)
  CUMO_MATH1("tanh", Tanh)
  CUMO_MATH1("asinh", Asinh)
  CUMO_MATH1("acosh", Acosh)
  CUMO_MATH1("atanh", Atanh)
  CUMO_MATH1("sinc", Sinc)
  CUMO_MATH2("atan2", Atan2)
  CUMO_MATH2("hypot", Hypot)
  CUMO_MATH1("erf", Erf)
  CUMO_MATH1("erfc", Erfc)
  CUMO_MATH1("gelu", Gelu)
  CUMO_MATH1("gelu_tanh", GeluTanh)
  CUMO_MATH1("silu", Silu)
  CUMO_MATH1("sigmoid", Sigmoid)
  CUMO_MATH1("softplus", Softplus)
  CUMO_MATH1("log1p", Log1p)
  CUMO_MATH1("expm1", Expm1)
  CUMO_MATH2("ldexp", Ldexp)
#undef CUMO_MATH1
#undef CUMO_MATH2
  rb_define_module_function(mod, "frexp", Fn(frexpFn<Module>), 1);
}

// ---- elementwise methods ------------------------------------------------

template <NodeRef (*F)(const ArrayHandle &)> VALUE unaryMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "math");
  return recordInto(self, a, "math", [&] { return F(a); });
}

template <OpKind Op> VALUE predicateMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, opName(Op).data());
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return predicateOp(Op, a);
  });
  return wrapNode(std::move(n));
}

template <OpKind Op> VALUE roundMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, opName(Op).data());
  ArrayHandle *h = guarded([&] {
    releaseDeadHandles();
    return roundOp(Op, a).release();
  });
  return wrapHandle(h);
}

template <OpKind Op> VALUE complexPartMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, opName(Op).data());
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return complexPartOp(Op, a);
  });
  return wrapNode(std::move(n));
}

VALUE imMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "im");
  ArrayHandle *h = guarded([&] {
    releaseDeadHandles();
    return imOp(a).release();
  });
  return wrapHandle(h);
}

/// set_real / set_imag (real= / imag=): writes the part into self, as
/// Numo's do, and answers the value given.
template <OpKind Part> VALUE setPartMethod(VALUE self, VALUE value) {
  const char *name = Part == OpKind::Real ? "set_real" : "set_imag";
  ArrayHandle &a = handleOf(self, name);
  a.frozen = OBJ_FROZEN(self);
  OperandHolder v;
  prepareOperand(v, value, realTypeOf(a.dtype()), name);
  guarded([&] {
    releaseDeadHandles();
    NodeRef n = setPartOp(Part, a, finishOperand(v));
    assignValue(a, std::move(n), name);
  });
  return value;
}

VALUE conjMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "conj");
  ArrayHandle *h = guarded([&] {
    releaseDeadHandles();
    return conjOp(a).release();
  });
  return wrapHandle(h);
}

VALUE modfMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "modf");
  auto r = guarded([&] {
    releaseDeadHandles();
    return modfOp(a);
  });
  return wrapPair(std::move(r));
}

/// `self op other` through `f`, with a Ruby Array operand uploaded in
/// self's class.
template <class F> auto withOperand(VALUE self, VALUE other, const char *name, F &&f) {
  ArrayHandle &a = handleOf(self, name);
  OperandHolder b;
  prepareOperand(b, other, a.dtype(), name);
  return guarded([&] {
    releaseDeadHandles();
    return f(Operand::of(a), finishOperand(b));
  });
}

template <OpKind Op> VALUE bitwiseMethod(VALUE self, VALUE other) {
  return wrapNode(withOperand(self, other, opName(Op).data(),
                              [](const Operand &a, const Operand &b) {
                                return bitwiseOp(Op, a, b);
                              }));
}

VALUE copysignMethod(VALUE self, VALUE other) {
  return wrapNode(withOperand(self, other, "copysign", copysignOp));
}

VALUE divmodMethod(VALUE self, VALUE other) {
  return wrapPair(withOperand(self, other, "divmod", divmodOp));
}

VALUE bitNotMethod(VALUE self) { return unaryMethod<bitNotOp>(self); }

/// The Ruby number of a coerce (`3 & a`, `7.divmod(a)`): see
/// ruby/narray_methods.cpp's ScalarOperand.
Scalar coercedScalar(VALUE self, const char *op) {
  return scalarFrom(rb_ivar_get(self, rb_intern("@value")), op);
}

template <OpKind Op> VALUE scalarFirstBitwise(VALUE self, VALUE other) {
  const char *name = opName(Op).data();
  Scalar s = coercedScalar(self, name);
  ArrayHandle &b = handleOf(other, name);
  return wrapNode(guarded([&] {
    return bitwiseOp(Op, Operand::of(s), Operand::of(b));
  }));
}

VALUE scalarFirstDivmod(VALUE self, VALUE other) {
  Scalar s = coercedScalar(self, "divmod");
  ArrayHandle &b = handleOf(other, "divmod");
  return wrapPair(guarded([&] {
    return divmodOp(Operand::of(s), Operand::of(b));
  }));
}

VALUE clipMethod(VALUE self, VALUE vmin, VALUE vmax) {
  ArrayHandle &a = handleOf(self, "clip");
  OperandHolder lo, hi;
  bool hasMin = RTEST(vmin), hasMax = RTEST(vmax);
  if (hasMin)
    prepareOperand(lo, vmin, a.dtype(), "clip");
  if (hasMax)
    prepareOperand(hi, vmax, a.dtype(), "clip");
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    const Operand *min = hasMin ? &finishOperand(lo) : nullptr;
    const Operand *max = hasMax ? &finishOperand(hi) : nullptr;
    return clipOp(a, min, max);
  });
  return wrapNode(std::move(n));
}

/// T.maximum(a, b, nan: false) and T.minimum: operands converted to T;
/// nan: true (float classes) answers NaN where either is NaN. Numo picks
/// that form whenever the keyword is given, even as nan: false; here its
/// value decides.
VALUE extremum(int argc, VALUE *argv, VALUE klass, bool maximum) {
  const char *name = maximum ? "maximum" : "minimum";
  VALUE a, b, opts;
  rb_scan_args(argc, argv, "20:", &a, &b, &opts);
  DType t;
  if (!dtypeOfClass(klass, &t))
    rb_raise(rb_eTypeError, "[%s] call it on a class such as Cumo::DFloat", name);
  bool propagate = false;
  if (!NIL_P(opts)) {
    if (!isFloat(t))
      rb_raise(rb_eArgError, "[%s] nan: is a keyword of the float classes", name);
    ID kw[1] = {rb_intern("nan")};
    VALUE vals[1];
    rb_get_kwargs(opts, kw, 0, 1, vals);
    propagate = vals[0] != Qundef && RTEST(vals[0]);
  }
  OpKind op = maximum ? (propagate ? OpKind::Maximum : OpKind::Fmax)
                      : (propagate ? OpKind::Minimum : OpKind::Fmin);
  OperandHolder x, y;
  prepareOperand(x, a, t, name);
  prepareOperand(y, b, t, name);
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return extremumOp(op, t, finishOperand(x), finishOperand(y));
  });
  return wrapNode(std::move(n));
}

VALUE maximumMethod(int argc, VALUE *argv, VALUE klass) {
  return extremum(argc, argv, klass, true);
}
VALUE minimumMethod(int argc, VALUE *argv, VALUE klass) {
  return extremum(argc, argv, klass, false);
}

} // namespace

void initMath() {
  VALUE nmath = rb_define_module_under(mCumo, "NMath");
  defineMathFunctions<kNMath>(nmath);
  defineMathFunctions<int(DType::SFloat)>(
      rb_define_module_under(classOf(DType::SFloat), "Math"));
  defineMathFunctions<int(DType::DFloat)>(
      rb_define_module_under(classOf(DType::DFloat), "Math"));
  defineMathFunctions<int(DType::HFloat)>(
      rb_define_module_under(classOf(DType::HFloat), "Math"));
  defineMathFunctions<int(DType::BFloat)>(
      rb_define_module_under(classOf(DType::BFloat), "Math"));
  // The complex modules answer NoMethodError for the functions Numo's do
  // not have (atan2, hypot, erf, erfc, log1p, expm1, ldexp, frexp).
  defineMathFunctions<int(DType::SComplex)>(
      rb_define_module_under(classOf(DType::SComplex), "Math"));
  defineMathFunctions<int(DType::DComplex)>(
      rb_define_module_under(classOf(DType::DComplex), "Math"));

  // Numo defines maximum and minimum on every class that compares (not Bit,
  // not the complex classes).
  for (int i = 0; i < kNumDTypes; ++i) {
    if (DType(i) == DType::Bit || isComplex(DType(i)))
      continue;
    rb_define_singleton_method(classOf(DType(i)), "maximum", Fn(maximumMethod), -1);
    rb_define_singleton_method(classOf(DType(i)), "minimum", Fn(minimumMethod), -1);
  }

  rb_define_method(cNArray, "floor", Fn(roundMethod<OpKind::Floor>), 0);
  rb_define_method(cNArray, "ceil", Fn(roundMethod<OpKind::Ceil>), 0);
  rb_define_method(cNArray, "round", Fn(roundMethod<OpKind::Round>), 0);
  rb_define_method(cNArray, "rint", Fn(roundMethod<OpKind::Rint>), 0);
  rb_define_method(cNArray, "trunc", Fn(roundMethod<OpKind::Trunc>), 0);
  rb_define_method(cNArray, "modf", Fn(modfMethod), 0);
  rb_define_method(cNArray, "sign", Fn(unaryMethod<signOp>), 0);
  rb_define_method(cNArray, "real", Fn(complexPartMethod<OpKind::Real>), 0);
  rb_define_method(cNArray, "imag", Fn(complexPartMethod<OpKind::Imag>), 0);
  rb_define_method(cNArray, "arg", Fn(complexPartMethod<OpKind::Arg>), 0);
  rb_define_alias(cNArray, "angle", "arg");
  rb_define_method(cNArray, "conj", Fn(conjMethod), 0);
  rb_define_method(cNArray, "im", Fn(imMethod), 0);
  rb_define_method(cNArray, "set_real", Fn(setPartMethod<OpKind::Real>), 1);
  rb_define_method(cNArray, "set_imag", Fn(setPartMethod<OpKind::Imag>), 1);
  rb_define_alias(cNArray, "real=", "set_real");
  rb_define_alias(cNArray, "imag=", "set_imag");
  rb_define_alias(cNArray, "conjugate", "conj");
  rb_define_method(cNArray, "square", Fn(unaryMethod<squareOp>), 0);
  rb_define_method(cNArray, "reciprocal", Fn(unaryMethod<reciprocalOp>), 0);
  rb_define_method(cNArray, "isnan", Fn(predicateMethod<OpKind::IsNan>), 0);
  rb_define_method(cNArray, "isinf", Fn(predicateMethod<OpKind::IsInf>), 0);
  rb_define_method(cNArray, "isposinf", Fn(predicateMethod<OpKind::IsPosInf>), 0);
  rb_define_method(cNArray, "isneginf", Fn(predicateMethod<OpKind::IsNegInf>), 0);
  rb_define_method(cNArray, "isfinite", Fn(predicateMethod<OpKind::IsFinite>), 0);
  rb_define_method(cNArray, "signbit", Fn(predicateMethod<OpKind::Signbit>), 0);
  rb_define_method(cNArray, "copysign", Fn(copysignMethod), 1);
  rb_define_method(cNArray, "clip", Fn(clipMethod), 2);
  rb_define_method(cNArray, "divmod", Fn(divmodMethod), 1);
  rb_define_method(cNArray, "~", Fn(bitNotMethod), 0);
#define CUMO_BITWISE(name, Op)                                                 \
  rb_define_method(cNArray, name, Fn(bitwiseMethod<OpKind::Op>), 1);
  CUMO_BITWISE("&", BitAnd)
  CUMO_BITWISE("|", BitOr)
  CUMO_BITWISE("^", BitXor)
  CUMO_BITWISE("<<", LeftShift)
  CUMO_BITWISE(">>", RightShift)
#undef CUMO_BITWISE
  rb_define_method(cScalarOperand, "&", Fn(scalarFirstBitwise<OpKind::BitAnd>), 1);
  rb_define_method(cScalarOperand, "|", Fn(scalarFirstBitwise<OpKind::BitOr>), 1);
  rb_define_method(cScalarOperand, "^", Fn(scalarFirstBitwise<OpKind::BitXor>), 1);
  rb_define_method(cScalarOperand, "divmod", Fn(scalarFirstDivmod), 1);
}

} // namespace cumo::rb
