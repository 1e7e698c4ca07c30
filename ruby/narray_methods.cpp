// NArray construction, arithmetic, comparison and conversion methods.
#include "core/format.h"
#include "graph/engine.h"
#include "ops/binary_io.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/reduction.h"
#include "ruby/compat.h"
#include "ruby/convert.h"
#include "ruby/ruby_api.h"

#include <cmath>
#include <limits>
#include <vector>

namespace cumo::rb {

namespace {

DType selfDType(VALUE klass, const char *op) {
  DType t;
  if (!dtypeOfClass(klass, &t))
    rb_raise(rb_eTypeError, "[%s] call it on a class such as Cumo::DFloat", op);
  return t;
}

template <OpKind Op> VALUE binaryMethod(VALUE self, VALUE other) {
  const char *name = opName(Op).data();
  ArrayHandle &a = handleOf(self, name);
  OperandHolder b;
  prepareOperand(b, other, a.dtype(), name);
  return recordInto(self, a, name, [&] { return binaryOp(Op, Operand::of(a), finishOperand(b)); });
}

template <OpKind Op> VALUE unaryMethod(VALUE self) {
  const char *name = opName(Op).data();
  ArrayHandle &a = handleOf(self, name);
  return recordInto(self, a, name, [&] { return unaryOp(Op, a); });
}

VALUE plusSelf(VALUE self) { return self; }

// A Ruby number on the left of an operator: Integer#- asks the NArray to
// coerce, and gets this operand back, whose methods put the number first.
VALUE coerceMethod(VALUE self, VALUE other) {
  if (!isRubyScalar(other))
    rb_raise(rb_eTypeError, "[coerce] %" PRIsVALUE " can't be coerced into %" PRIsVALUE,
             rb_obj_class(other), rb_obj_class(self));
  VALUE s = rb_obj_alloc(cScalarOperand);
  rb_ivar_set(s, rb_intern("@value"), other);
  return rb_assoc_new(s, self);
}

template <OpKind Op> VALUE scalarFirstMethod(VALUE self, VALUE other) {
  const char *name = opName(Op).data();
  Scalar s = scalarFrom(rb_ivar_get(self, rb_intern("@value")), name);
  ArrayHandle &b = handleOf(other, name);
  NodeRef n = guarded([&] {
    return binaryOp(Op, Operand::of(s), Operand::of(b));
  });
  return wrapNode(std::move(n));
}

// ---- construction -------------------------------------------------------

VALUE newMethod(int argc, VALUE *argv, VALUE klass) {
  DType t = selfDType(klass, "new");
  Shape shape = shapeFromArgs(argc, argv, "new");
  return wrapNode(guarded([&] { return emptyNode(t, shape); }));
}

VALUE fillConstant(VALUE klass, int argc, VALUE *argv, const char *op,
                   Scalar value) {
  DType t = selfDType(klass, op);
  Shape shape = shapeFromArgs(argc, argv, op);
  return wrapNode(guarded([&] { return fillNode(t, shape, value); }));
}

VALUE zerosMethod(int argc, VALUE *argv, VALUE klass) {
  return fillConstant(klass, argc, argv, "zeros", Scalar::ofInt(0));
}
VALUE onesMethod(int argc, VALUE *argv, VALUE klass) {
  return fillConstant(klass, argc, argv, "ones", Scalar::ofInt(1));
}

VALUE castTo(VALUE obj, DType t, const char *op) {
  if (isNArray(obj)) {
    ArrayHandle &a = handleOf(obj, op);
    if (a.dtype() == t)
      return obj;
    return wrapNode(guarded([&] { return cumo::castTo(a, t); }));
  }
  if (isRubyScalar(obj) || NIL_P(obj)) {
    Scalar s = scalarFor(obj, t, op);
    return wrapNode(guarded([&] { return fillNode(t, {}, s); }));
  }
  if (RB_TYPE_P(obj, T_ARRAY)) {
    HostArray h = hostArrayFrom(expandRanges(obj, op), t, op);
    return wrapNode(guarded([&] { return uploadNode(t, h.shape, h.bytes.data()); }));
  }
  rb_raise(eCastError, "[%s] cannot cast %" PRIsVALUE " to %" PRIsVALUE, op,
           rb_obj_class(obj), classOf(t));
}

VALUE castMethod(VALUE klass, VALUE obj) {
  return castTo(obj, selfDType(klass, "cast"), "cast");
}

VALUE bracketMethod(int argc, VALUE *argv, VALUE klass) {
  VALUE ary = expandRanges(rb_ary_new_from_values(argc, argv), "[]");
  DType t;
  if (klass == cNArray)
    t = inferDType(ary);
  else
    t = selfDType(klass, "[]");
  return castTo(ary, t, "[]");
}

// ---- Numo's inplace flag ------------------------------------------------

/// A view of the receiver's elements carrying the flag (Numo's `inplace`).
VALUE inplaceMethod(VALUE self) {
  checkFrozen(self, "inplace");
  ArrayHandle &a = handleOf(self, "inplace");
  ArrayHandle *h = guarded([&] {
    auto *v = new ArrayHandle(a.storageRef(), a.layout());
    v->viewObject = true;
    v->inplace = true;
    return v;
  });
  return wrapHandle(h);
}

VALUE inplaceBangMethod(VALUE self) {
  checkFrozen(self, "inplace!");
  handleOf(self, "inplace!").inplace = true;
  return self;
}

VALUE inplaceQueryMethod(VALUE self) { return handleOf(self, "inplace?").inplace ? Qtrue : Qfalse; }

VALUE outOfPlaceBangMethod(VALUE self) {
  handleOf(self, "out_of_place!").inplace = false;
  return self;
}

// ---- in-place fills (they answer self, as Numo's do) --------------------

void writeWhole(VALUE self, NodeRef (*make)(const ArrayHandle &, void *),
                void *arg, const char *op) {
  ArrayHandle &a = handleOf(self, op);
  a.frozen = OBJ_FROZEN(self);
  guarded([&] {
    releaseDeadHandles();
    NodeRef v = make(a, arg);
    assignValue(a, v, op);
  });
}

VALUE fillMethod(VALUE self, VALUE v) {
  ArrayHandle &a = handleOf(self, "fill");
  if (a.dtype() == DType::Bit && !(v == Qtrue || v == Qfalse || v == INT2FIX(0) ||
                                   v == INT2FIX(1)))
    rb_raise(rb_eArgError, "[fill] invalid value for Bit");
  Scalar s = scalarFor(v, a.dtype(), "fill");
  writeWhole(self, [](const ArrayHandle &h, void *p) {
    return fillNode(h.dtype(), h.shape(), *static_cast<Scalar *>(p));
  }, &s, "fill");
  return self;
}

struct SeqArgs {
  Scalar start, step;
};

VALUE seqMethod(int argc, VALUE *argv, VALUE self) {
  VALUE vb, vs;
  rb_scan_args(argc, argv, "02", &vb, &vs);
  ArrayHandle &a = handleOf(self, "seq");
  if (a.dtype() == DType::Bit)
    rb_raise(rb_eNoMethodError, "[seq] undefined for Cumo::Bit");
  SeqArgs args{NIL_P(vb) ? Scalar::ofInt(0) : scalarFor(vb, a.dtype(), "seq"),
               NIL_P(vs) ? Scalar::ofInt(1) : scalarFor(vs, a.dtype(), "seq")};
  if (isInteger(a.dtype())) {
    // Numo computes an integer seq in double, then converts.
    args.start = Scalar::ofFloat(args.start.asDouble());
    args.step = Scalar::ofFloat(args.step.asDouble());
  }
  writeWhole(self, [](const ArrayHandle &h, void *p) {
    auto *s = static_cast<SeqArgs *>(p);
    return seqNode(h.dtype(), h.shape(), s->start, s->step);
  }, &args, "seq");
  return self;
}

VALUE randMethod(int argc, VALUE *argv, VALUE self) {
  VALUE v1, v2;
  rb_scan_args(argc, argv, "02", &v1, &v2);
  ArrayHandle &a = handleOf(self, "rand");
  bool complex = isComplex(a.dtype());
  bool floaty = isFloat(a.dtype()) || complex;
  if (a.dtype() == DType::Bit)
    rb_raise(rb_eNoMethodError, "[rand] undefined for Cumo::Bit");
  if (!floaty && NIL_P(v1))
    rb_raise(rb_eArgError, "[rand] integer classes need a maximum: rand(max) or rand(low, high)");
  SeqArgs range;
  if (NIL_P(v1)) {
    // Complex classes draw both parts in [0, 1) (Numo's default high 1+1i).
    range = {Scalar::ofFloat(0.0),
             complex ? Scalar::ofComplex(1.0, 1.0) : Scalar::ofFloat(1.0)};
  } else if (NIL_P(v2)) {
    range = {Scalar::ofInt(0), scalarFor(v1, a.dtype(), "rand")};
  } else {
    range = {scalarFor(v1, a.dtype(), "rand"), scalarFor(v2, a.dtype(), "rand")};
  }
  if (!complex && range.step.asDouble() <= range.start.asDouble())
    rb_raise(rb_eArgError, "[rand] high must be larger than low");
  writeWhole(self, [](const ArrayHandle &h, void *p) {
    auto *s = static_cast<SeqArgs *>(p);
    return randNode(h.dtype(), h.shape(), s->start, s->step);
  }, &range, "rand");
  return self;
}

VALUE srandMethod(int argc, VALUE *argv, VALUE) {
  VALUE seed;
  rb_scan_args(argc, argv, "01", &seed);
  uint64_t s = NIL_P(seed) ? uint64_t(time(nullptr)) : NUM2ULL(seed);
  guarded([&] { seedRandom(s); });
  return Qnil;
}

// ---- shape and conversion -----------------------------------------------

VALUE shapeMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "shape");
  VALUE ary = rb_ary_new_capa(long(a.ndim()));
  for (int64_t d : a.shape())
    rb_ary_push(ary, LL2NUM(d));
  return ary;
}
VALUE ndimMethod(VALUE self) { return LL2NUM(handleOf(self, "ndim").ndim()); }
VALUE sizeMethod(VALUE self) { return LL2NUM(handleOf(self, "size").size()); }
VALUE byteSizeMethod(VALUE self) {
  // Numo's: Bit counts eight elements a byte, as its binary form packs them.
  ArrayHandle &a = handleOf(self, "byte_size");
  return ULL2NUM(binaryByteSize(a.dtype(), a.size()));
}
VALUE emptyMethod(VALUE self) { return handleOf(self, "empty?").size() == 0 ? Qtrue : Qfalse; }
VALUE viewMethod(VALUE self) { return handleOf(self, "view?").isView() ? Qtrue : Qfalse; }
VALUE contiguousMethod(VALUE self) {
  return handleOf(self, "contiguous?").layout().isContiguous() ? Qtrue : Qfalse;
}

VALUE dupMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "dup");
  return wrapNode(guarded([&] { return copyOf(a); }));
}

VALUE castToMethod(VALUE self, VALUE klass) {
  DType t = selfDType(klass, "cast_to");
  return castTo(self, t, "cast_to");
}

/// Reads every element of `a` to the host, densely in row-major order.
std::vector<char> readAll(const ArrayHandle &a) {
  std::vector<char> bytes(size_t(a.size()) * sizeOf(a.dtype()));
  guarded([&] { Engine::get().read(a, bytes.data()); });
  return bytes;
}

VALUE toAMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "to_a");
  std::vector<char> bytes = readAll(a);
  if (a.ndim() == 0)
    return rb_ary_new_from_args(1, elementToRuby(a.dtype(), bytes.data()));
  return toRubyArray(a.dtype(), a.shape(), bytes.data());
}

bool neverWritten(const ArrayHandle &a) {
  const Node *cur = a.storage().current();
  return cur->op() == OpKind::Empty && cur->isPending();
}

VALUE inspectMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "inspect");
  VALUE klassName = rb_class_name(rb_obj_class(self));
  std::string header = inspectHeader(StringValueCStr(klassName), a.isView(), a.shape());
  // Numo prints "(empty)" for an array whose memory was never allocated:
  // one never written, and any array of size 0 that is not a view.
  bool empty = neverWritten(a) || (a.size() == 0 && !a.isView());
  std::vector<char> bytes;
  if (!empty)
    bytes = readAll(a);
  std::string text =
      inspectText(header, a.dtype(), a.shape(), bytes.data(), empty, inspectLimits());
  return rb_utf8_str_new(text.data(), long(text.size()));
}

VALUE eachMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "each");
  if (!rb_block_given_p())
    rb_raise(rb_eLocalJumpError, "[each] no block given");
  std::vector<char> bytes = readAll(a);
  size_t size = sizeOf(a.dtype());
  for (int64_t i = 0; i < a.size(); ++i)
    rb_yield(elementToRuby(a.dtype(), bytes.data() + i * size));
  return self;
}

VALUE singleElement(VALUE self, const char *op, const char *target) {
  ArrayHandle &a = handleOf(self, op);
  if (a.size() != 1)
    rb_raise(rb_eTypeError, "[%s] can't convert %" PRIsVALUE " of size %lld into %s",
             op, rb_obj_class(self), (long long)a.size(), target);
  std::vector<char> bytes = readAll(a);
  return elementToRuby(a.dtype(), bytes.data());
}

/// A complex element has no real number, as in Numo, where Ruby's
/// Complex#to_f refuses a float (inexact) zero imaginary part too: the
/// same RangeError, with the op's name.
VALUE realOnly(VALUE element, const char *op, const char *target) {
  if (RB_TYPE_P(element, T_COMPLEX))
    rb_raise(rb_eRangeError, "[%s] can't convert %" PRIsVALUE " into %s", op, element, target);
  return element;
}

VALUE toFMethod(VALUE self) {
  return rb_Float(realOnly(singleElement(self, "to_f", "Float"), "to_f", "Float"));
}
VALUE toIMethod(VALUE self) {
  VALUE v = realOnly(singleElement(self, "to_i", "Integer"), "to_i", "Integer");
  // Float#to_i's FloatDomainError, with the op's name.
  if (RB_FLOAT_TYPE_P(v) && !std::isfinite(RFLOAT_VALUE(v)))
    rb_raise(rb_eFloatDomainError, "[to_i] can't convert %" PRIsVALUE " into Integer", v);
  return rb_funcall(v, rb_intern("to_i"), 0);
}
VALUE toCMethod(VALUE self) {
  return rb_funcall(singleElement(self, "to_c", "Complex"), rb_intern("to_c"), 0);
}

VALUE extractCpuMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "extract_cpu");
  if (a.ndim() != 0)
    return self;
  return singleElement(self, "extract_cpu", "a scalar");
}

VALUE extractMethod(VALUE self) { return compatResult(self); }

VALUE equalMethod(VALUE self, VALUE other) {
  ArrayHandle &a = handleOf(self, "==");
  VALUE o = isNArray(other) ? other : castTo(other, a.dtype(), "==");
  ArrayHandle &b = handleOf(o, "==");
  if (a.shape() != b.shape())
    return Qfalse;
  if (a.size() == 0)
    return Qtrue;
  // All equal when the minimum of the elementwise comparison is 1.
  NodeRef allEq = guarded([&] {
    ArrayHandle eq(binaryOp(OpKind::Eq, Operand::of(a), Operand::of(b)));
    return reduceOp(OpKind::Min, eq, {}, false);
  });
  VALUE r = wrapNode(std::move(allEq));
  return NUM2INT(singleElement(r, "==", "a scalar")) == 1 ? Qtrue : Qfalse;
}

/// Numo's class constants: MAX and MIN of the integer and float classes
/// (MIN of a float class is its smallest normal value, as C's FLT_MIN),
/// EPSILON of the float classes.
void defineClassConstants() {
  for (int i = 0; i < kNumDTypes; ++i) {
    VALUE klass = classOf(DType(i));
    auto floats = [&](double max, double min, double eps) {
      rb_define_const(klass, "MAX", DBL2NUM(max));
      rb_define_const(klass, "MIN", DBL2NUM(min));
      rb_define_const(klass, "EPSILON", DBL2NUM(eps));
    };
    dispatchDType(DType(i), [&]<DType D, class T>() {
      if constexpr (D == DType::Bit || kIsComplexC<T>) {
        return;
      } else if constexpr (std::is_same_v<T, cumo_ops::half>) {
        floats(double(T::of_bits(0x7bff)), double(T::of_bits(0x0400)),
               double(T::of_bits(0x1400)));
      } else if constexpr (std::is_same_v<T, cumo_ops::bfloat16>) {
        floats(double(T::of_bits(0x7f7f)), double(T::of_bits(0x0080)),
               double(T::of_bits(0x3c00)));
      } else if constexpr (std::is_floating_point_v<T>) {
        floats(double(std::numeric_limits<T>::max()),
               double(std::numeric_limits<T>::min()),
               double(std::numeric_limits<T>::epsilon()));
      } else if constexpr (std::is_signed_v<T>) {
        rb_define_const(klass, "MAX", LL2NUM(std::numeric_limits<T>::max()));
        rb_define_const(klass, "MIN", LL2NUM(std::numeric_limits<T>::min()));
      } else {
        rb_define_const(klass, "MAX", ULL2NUM(std::numeric_limits<T>::max()));
        rb_define_const(klass, "MIN", ULL2NUM(std::numeric_limits<T>::min()));
      }
    });
  }
}

} // namespace

void initNArrayMethods() {
  defineClassConstants();
  using Fn = VALUE (*)(ANYARGS);
  cScalarOperand = rb_define_class_under(cNArray, "ScalarOperand", rb_cObject);
#define CUMO_BINARY(name, op)                                                  \
  rb_define_method(cNArray, name, Fn(binaryMethod<OpKind::op>), 1);             \
  rb_define_method(cScalarOperand, name, Fn(scalarFirstMethod<OpKind::op>), 1);
  CUMO_BINARY("+", Add)
  CUMO_BINARY("-", Sub)
  CUMO_BINARY("*", Mul)
  CUMO_BINARY("/", Div)
  CUMO_BINARY("%", Mod)
  CUMO_BINARY("**", Pow)
  CUMO_BINARY("eq", Eq)
  CUMO_BINARY("ne", Ne)
  CUMO_BINARY("gt", Gt)
  CUMO_BINARY("ge", Ge)
  CUMO_BINARY("lt", Lt)
  CUMO_BINARY("le", Le)
  CUMO_BINARY(">", Gt)
  CUMO_BINARY(">=", Ge)
  CUMO_BINARY("<", Lt)
  CUMO_BINARY("<=", Le)
#undef CUMO_BINARY
  rb_define_method(cNArray, "-@", Fn(unaryMethod<OpKind::Neg>), 0);
  rb_define_method(cNArray, "+@", Fn(plusSelf), 0);
  rb_define_method(cNArray, "abs", Fn(unaryMethod<OpKind::Abs>), 0);
  rb_define_method(cNArray, "coerce", Fn(coerceMethod), 1);
  rb_define_method(cNArray, "==", Fn(equalMethod), 1);

  rb_define_singleton_method(cNArray, "new", Fn(newMethod), -1);
  rb_define_singleton_method(cNArray, "zeros", Fn(zerosMethod), -1);
  rb_define_singleton_method(cNArray, "ones", Fn(onesMethod), -1);
  rb_define_singleton_method(cNArray, "cast", Fn(castMethod), 1);
  rb_define_singleton_method(cNArray, "[]", Fn(bracketMethod), -1);
  rb_define_singleton_method(cNArray, "srand", Fn(srandMethod), -1);

  rb_define_method(cNArray, "inplace", Fn(inplaceMethod), 0);
  rb_define_method(cNArray, "inplace!", Fn(inplaceBangMethod), 0);
  rb_define_method(cNArray, "inplace?", Fn(inplaceQueryMethod), 0);
  rb_define_method(cNArray, "out_of_place!", Fn(outOfPlaceBangMethod), 0);
  rb_define_alias(cNArray, "not_inplace!", "out_of_place!");

  rb_define_method(cNArray, "fill", Fn(fillMethod), 1);
  rb_define_method(cNArray, "seq", Fn(seqMethod), -1);
  rb_define_alias(cNArray, "indgen", "seq");
  rb_define_method(cNArray, "rand", Fn(randMethod), -1);

  rb_define_method(cNArray, "shape", Fn(shapeMethod), 0);
  rb_define_method(cNArray, "ndim", Fn(ndimMethod), 0);
  rb_define_alias(cNArray, "rank", "ndim");
  rb_define_method(cNArray, "size", Fn(sizeMethod), 0);
  rb_define_alias(cNArray, "length", "size");
  rb_define_method(cNArray, "byte_size", Fn(byteSizeMethod), 0);
  rb_define_method(cNArray, "empty?", Fn(emptyMethod), 0);
  rb_define_method(cNArray, "view?", Fn(viewMethod), 0);
  rb_define_method(cNArray, "contiguous?", Fn(contiguousMethod), 0);
  rb_define_method(cNArray, "dup", Fn(dupMethod), 0);
  rb_define_method(cNArray, "cast_to", Fn(castToMethod), 1);
  rb_define_method(cNArray, "to_a", Fn(toAMethod), 0);
  rb_define_method(cNArray, "inspect", Fn(inspectMethod), 0);
  rb_define_method(cNArray, "each", Fn(eachMethod), 0);
  rb_define_method(cNArray, "to_f", Fn(toFMethod), 0);
  rb_define_method(cNArray, "to_i", Fn(toIMethod), 0);
  rb_define_method(cNArray, "to_c", Fn(toCMethod), 0);
  rb_define_method(cNArray, "extract", Fn(extractMethod), 0);
  rb_define_method(cNArray, "extract_cpu", Fn(extractCpuMethod), 0);
}

} // namespace cumo::rb
