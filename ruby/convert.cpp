#include "ruby/convert.h"

#include "ops/creation.h"

#include <cstring>

namespace cumo::rb {

bool isRubyScalar(VALUE v) {
  return RB_INTEGER_TYPE_P(v) || RB_FLOAT_TYPE_P(v) || v == Qtrue || v == Qfalse ||
         RB_TYPE_P(v, T_COMPLEX);
}

void checkKeywords(VALUE opts, llvm::ArrayRef<ID> allowed, const char *op) {
  if (NIL_P(opts))
    return;
  struct Walk {
    llvm::ArrayRef<ID> allowed;
    VALUE unknown = Qundef;
  } walk{allowed};
  rb_hash_foreach(
      opts,
      [](VALUE key, VALUE, VALUE arg) -> int {
        Walk &w = *reinterpret_cast<Walk *>(arg);
        if (SYMBOL_P(key) && llvm::is_contained(w.allowed, SYM2ID(key)))
          return ST_CONTINUE;
        w.unknown = key;
        return ST_STOP;
      },
      VALUE(&walk));
  if (walk.unknown != Qundef)
    rb_raise(rb_eArgError, "[%s] unknown keyword: %" PRIsVALUE, op, rb_inspect(walk.unknown));
}

Scalar scalarFrom(VALUE v, const char *op) {
  if (RB_FLOAT_TYPE_P(v))
    return Scalar::ofFloat(RFLOAT_VALUE(v));
  if (RB_TYPE_P(v, T_COMPLEX))
    return Scalar::ofComplex(NUM2DBL(rb_complex_real(v)),
                             NUM2DBL(rb_complex_imag(v)));
  if (RB_INTEGER_TYPE_P(v)) {
    // Integers past 64 bits wrap as a C conversion would.
    if (RB_TYPE_P(v, T_BIGNUM)) {
      VALUE masked = rb_funcall(v, '&', 1, ULL2NUM(~0ULL));
      return Scalar::ofInt(int64_t(NUM2ULL(masked)));
    }
    return Scalar::ofInt(NUM2LL(v));
  }
  if (v == Qtrue)
    return Scalar::ofInt(1);
  if (v == Qfalse)
    return Scalar::ofInt(0);
  if (NIL_P(v))
    return Scalar::ofFloat(std::nan(""));
  rb_raise(rb_eTypeError, "[%s] expected a number, not %" PRIsVALUE, op,
           rb_obj_class(v));
}

Scalar scalarFor(VALUE v, DType t, const char *op) {
  if (RB_TYPE_P(v, T_COMPLEX) && !isComplex(t)) {
    // As Complex#to_f converts: only an exact zero imaginary part goes.
    VALUE im = rb_complex_imag(v);
    if (!(FIXNUM_P(im) && FIX2LONG(im) == 0))
      rb_raise(rb_eRangeError, "[%s] can't convert %" PRIsVALUE " into %" PRIsVALUE,
               op, rb_inspect(v), classOf(t));
    return scalarFrom(rb_complex_real(v), op);
  }
  return scalarFrom(v, op);
}

int64_t int64Arg(VALUE v, const char *op, const char *what) {
  if (FIXNUM_P(v))
    return int64_t(FIX2LONG(v));
  if (RB_INTEGER_TYPE_P(v)) {
    // A Bignum: past the Fixnums, and in int64 only up to 2**63 - 1 (down
    // to -2**63).
    if (rb_big_cmp(v, LL2NUM(INT64_MAX)) == INT2FIX(1) ||
        rb_big_cmp(v, LL2NUM(INT64_MIN)) == INT2FIX(-1))
      rb_raise(rb_eRangeError, "[%s] %s %" PRIsVALUE " is out of the range of int64", op, what,
               rb_inspect(v));
    return int64_t(NUM2LL(v));
  }
  if (RB_FLOAT_TYPE_P(v)) {
    double d = RFLOAT_VALUE(v);
    // -2**63 is an int64 and 2**63 is not; both are exact doubles. NaN
    // fails both tests.
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
      rb_raise(rb_eRangeError, "[%s] %s %" PRIsVALUE " is not an int64", op, what,
               rb_inspect(v));
    return int64_t(d);
  }
  rb_raise(rb_eTypeError, "[%s] %s must be an Integer, not %" PRIsVALUE, op, what,
           rb_obj_class(v));
}

void appendAxes(VALUE v, llvm::SmallVectorImpl<int64_t> &axes, const char *op, VALUE wrongClass) {
  if (NIL_P(v))
    return;
  if (RB_TYPE_P(v, T_ARRAY)) {
    for (long i = 0; i < RARRAY_LEN(v); ++i)
      appendAxes(rb_ary_entry(v, i), axes, op, wrongClass);
    return;
  }
  if (rb_obj_is_kind_of(v, rb_cRange)) {
    VALUE begin, end;
    int exclusive;
    rb_range_values(v, &begin, &end, &exclusive);
    if (NIL_P(begin) || NIL_P(end))
      rb_raise(rb_eArgError, "[%s] an axis range needs both ends, not %" PRIsVALUE, op,
               rb_inspect(v));
    int64_t first = int64Arg(begin, op, "an axis"), last = int64Arg(end, op, "an axis");
    // More axes than any array has are a mistake, not a loop to run.
    if (double(last) - double(first) > 64)
      rb_raise(rb_eArgError, "[%s] an axis range of more axes than an array has: %" PRIsVALUE,
               op, rb_inspect(v));
    for (int64_t a = first; exclusive ? a < last : a <= last; ++a)
      axes.push_back(a);
    return;
  }
  if (!RB_INTEGER_TYPE_P(v))
    rb_raise(wrongClass, "[%s] an axis is an Integer, not %" PRIsVALUE, op, rb_obj_class(v));
  axes.push_back(int64Arg(v, op, "an axis"));
}

Shape shapeFromArgs(int argc, const VALUE *argv, const char *op) {
  Shape shape;
  const VALUE *items = argv;
  long n = argc;
  if (argc == 1 && RB_TYPE_P(argv[0], T_ARRAY)) {
    items = RARRAY_CONST_PTR(argv[0]);
    n = RARRAY_LEN(argv[0]);
  }
  for (long i = 0; i < n; ++i) {
    if (!RB_INTEGER_TYPE_P(items[i]) && !RB_FLOAT_TYPE_P(items[i]))
      rb_raise(rb_eTypeError, "[%s] a shape takes Integers, not %" PRIsVALUE, op,
               rb_obj_class(items[i]));
    long long d = int64Arg(items[i], op, "a size");
    if (d < 0)
      rb_raise(rb_eArgError, "[%s] size must be non-negative, not %lld", op, d);
    shape.push_back(d);
  }
  // In elements here; the dtype's bytes are checked where the array is made.
  if (!sizeFits(shape, 1))
    rb_raise(rb_eArgError, "[%s] the array is too large: shape %s has more than 2**63 elements",
             op, shapeToString(shape).c_str());
  return shape;
}

namespace {

VALUE cArithSeq = Qnil;

IndexItem rangeItem(VALUE begin, VALUE end, bool exclusive, int64_t step, const char *op) {
  IndexItem it;
  it.kind = IndexItem::Kind::Range;
  it.hasBegin = !NIL_P(begin);
  it.hasEnd = !NIL_P(end);
  // Fixnum ends (every slice a loop writes) without the Integer() call.
  auto toInt = [&](VALUE v) {
    return FIXNUM_P(v) ? int64_t(FIX2LONG(v)) : int64Arg(v, op, "a range's end");
  };
  if (it.hasBegin)
    it.begin = toInt(begin);
  if (it.hasEnd)
    it.end = toInt(end);
  it.exclusive = exclusive;
  it.step = step;
  return it;
}

} // namespace

IndexItem indexItemFrom(VALUE v, const char *op) {
  if (RB_INTEGER_TYPE_P(v) || RB_FLOAT_TYPE_P(v))
    return IndexItem::integer(int64Arg(v, op, "an index"));
  if (v == Qtrue || NIL_P(v))
    return IndexItem::all();
  if (v == Qfalse) {
    IndexItem it;
    it.kind = IndexItem::Kind::Rest;
    return it;
  }
  if (RB_TYPE_P(v, T_SYMBOL)) {
    std::string s = rb_id2name(SYM2ID(v));
    IndexItem it;
    if (s == "new" || s == "-") {
      it.kind = IndexItem::Kind::NewAxis;
      return it;
    }
    if (s == "rest" || s == "~") {
      it.kind = IndexItem::Kind::Rest;
      return it;
    }
    if (s == "*" || s == "all")
      return IndexItem::all();
    if (s == "reverse") {
      it.kind = IndexItem::Kind::Range;
      it.step = -1;
      return it;
    }
    rb_raise(rb_eIndexError, "[%s] invalid symbol for index: :%s", op, s.c_str());
  }
  // Ranges through the C API: a method call per end would cost more than
  // the rest of the index.
  VALUE begin, end;
  int exclusive;
  if (rb_range_values(v, &begin, &end, &exclusive) == Qtrue &&
      rb_obj_is_kind_of(v, rb_cRange))
    return rangeItem(begin, end, exclusive, 1, op);
  if (!NIL_P(cArithSeq) && rb_obj_is_kind_of(v, cArithSeq)) {
    rb_arithmetic_sequence_components_t c;
    rb_arithmetic_sequence_extract(v, &c);
    return rangeItem(c.begin, c.end, c.exclude_end, int64Arg(c.step, op, "a step"), op);
  }
  rb_raise(rb_eIndexError, "[%s] not allowed type: %" PRIsVALUE, op,
           rb_obj_class(v));
}

IndexItems indexItemsFrom(int argc, const VALUE *argv, const char *op) {
  IndexItems items;
  items.reserve(size_t(argc));
  for (int i = 0; i < argc; ++i)
    items.push_back(indexItemFrom(argv[i], op));
  return items;
}

VALUE elementToRuby(DType dtype, const void *p) {
  return dispatchDType(dtype, [&]<DType D, class T>() -> VALUE {
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (kIsComplexC<T>)
      return rb_Complex(DBL2NUM(double(v.re)), DBL2NUM(double(v.im)));
    else if constexpr (std::is_floating_point_v<T> || kIsNarrowFloatC<T>)
      return DBL2NUM(double(v));
    else if constexpr (D == DType::Bit)
      return INT2FIX(v ? 1 : 0);
    else if constexpr (std::is_signed_v<T>)
      return LL2NUM(int64_t(v));
    else
      return ULL2NUM(uint64_t(v));
  });
}

namespace {
VALUE toRubyRec(DType dtype, llvm::ArrayRef<int64_t> shape, const char *&p,
                size_t size) {
  if (shape.empty()) {
    VALUE v = elementToRuby(dtype, p);
    p += size;
    return v;
  }
  VALUE ary = rb_ary_new_capa(long(shape[0]));
  for (int64_t i = 0; i < shape[0]; ++i)
    rb_ary_push(ary, toRubyRec(dtype, shape.drop_front(), p, size));
  return ary;
}
} // namespace

VALUE toRubyArray(DType dtype, llvm::ArrayRef<int64_t> shape, const char *data) {
  const char *p = data;
  return toRubyRec(dtype, shape, p, sizeOf(dtype));
}

namespace {

// The shape of a nested Array: the longest length at each depth.
void measure(VALUE v, size_t depth, Shape &shape) {
  if (!RB_TYPE_P(v, T_ARRAY))
    return;
  long n = RARRAY_LEN(v);
  if (shape.size() <= depth)
    shape.push_back(0);
  shape[depth] = std::max<int64_t>(shape[depth], n);
  for (long i = 0; i < n; ++i)
    measure(rb_ary_entry(v, i), depth + 1, shape);
}

void store(VALUE v, DType dtype, llvm::ArrayRef<int64_t> shape, char *dst,
           const char *op) {
  size_t size = sizeOf(dtype);
  if (shape.empty()) {
    if (RB_TYPE_P(v, T_ARRAY))
      rb_raise(rb_eArgError, "[%s] the nesting of the Array is uneven", op);
    Scalar s = scalarFor(v, dtype, op);
    dispatchDType(dtype, [&]<DType D, class T>() {
      T x;
      if constexpr (D == DType::Bit)
        x = T(s.asDouble() != 0);
      else
        x = s.as<T>();
      std::memcpy(dst, &x, sizeof(T));
    });
    return;
  }
  // Rows of no elements (an empty Array beside numbers, `[1, []]`, makes
  // the shape [2, 0]) hold nothing to store.
  if (numElements(shape) == 0)
    return;
  int64_t stride = numElements(shape.drop_front()) * int64_t(size);
  if (!RB_TYPE_P(v, T_ARRAY)) {
    // A scalar where a row is expected: it is the row's first element.
    store(v, dtype, shape.drop_front(), dst, op);
    return;
  }
  long n = RARRAY_LEN(v);
  for (long i = 0; i < n; ++i)
    store(rb_ary_entry(v, i), dtype, shape.drop_front(), dst + i * stride, op);
}

} // namespace

VALUE expandRanges(VALUE v, const char *op) {
  if (!RB_TYPE_P(v, T_ARRAY))
    return v;
  long n = RARRAY_LEN(v);
  VALUE out = rb_ary_new_capa(n);
  bool changed = false;
  for (long i = 0; i < n; ++i) {
    VALUE e = rb_ary_entry(v, i);
    if (rb_obj_is_kind_of(e, rb_cRange) || rb_obj_is_kind_of(e, cArithSeq)) {
      VALUE begin, end;
      int exclusive;
      if (rb_obj_is_kind_of(e, rb_cRange) && rb_range_values(e, &begin, &end, &exclusive) &&
          (NIL_P(begin) || NIL_P(end)))
        rb_raise(rb_eArgError, "[%s] a range without both ends has no elements to list: %" PRIsVALUE,
                 op, e);
      rb_ary_concat(out, rb_funcall(e, rb_intern("to_a"), 0));
      changed = true;
    } else {
      VALUE x = expandRanges(e, op);
      changed = changed || x != e;
      rb_ary_push(out, x);
    }
  }
  return changed ? out : v;
}

HostArray hostArrayFrom(VALUE ary, DType dtype, const char *op) {
  HostArray h;
  measure(ary, 0, h.shape);
  h.bytes.assign(size_t(numElements(h.shape)) * sizeOf(dtype), 0);
  store(ary, dtype, h.shape, h.bytes.data(), op);
  return h;
}

void prepareOperand(OperandHolder &h, VALUE v, DType selfType, const char *op) {
  if (isNArray(v)) {
    h.operand = Operand::of(handleOf(v, op));
  } else if (isRubyScalar(v)) {
    h.operand = Operand::of(scalarFrom(v, op));
  } else if (RB_TYPE_P(v, T_ARRAY)) {
    h.host = hostArrayFrom(v, selfType, op);
    h.upload = true;
    h.uploadType = selfType;
  } else {
    rb_raise(rb_eTypeError, "[%s] expected Cumo::NArray or a number, not %" PRIsVALUE,
             op, rb_obj_class(v));
  }
}

const Operand &finishOperand(OperandHolder &h) {
  if (h.upload) {
    h.temp = std::make_unique<ArrayHandle>(
        uploadNode(h.uploadType, h.host.shape, h.host.bytes.data()));
    h.operand = Operand::of(*h.temp);
  }
  return h.operand;
}

namespace {
void inferRec(VALUE v, int &rank) {
  // NONE < Bit < Int32 < Int64 < DFloat < DComplex
  if (RB_TYPE_P(v, T_ARRAY)) {
    long n = RARRAY_LEN(v);
    for (long i = 0; i < n; ++i)
      inferRec(rb_ary_entry(v, i), rank);
    return;
  }
  if (v == Qtrue || v == Qfalse)
    rank = std::max(rank, 1);
  else if (RB_INTEGER_TYPE_P(v)) {
    bool fits = FIXNUM_P(v) && FIX2LONG(v) >= INT32_MIN && FIX2LONG(v) <= INT32_MAX;
    rank = std::max(rank, fits ? 2 : 3);
  } else if (RB_FLOAT_TYPE_P(v))
    rank = std::max(rank, 4);
  else if (RB_TYPE_P(v, T_COMPLEX))
    rank = std::max(rank, 5);
  else if (!NIL_P(v))
    rb_raise(rb_eTypeError, "[NArray[]] cannot infer a class for %" PRIsVALUE,
             rb_obj_class(v));
}
} // namespace

DType inferDType(VALUE ary) {
  int rank = 0;
  inferRec(ary, rank);
  switch (rank) {
  case 1: return DType::Bit;
  case 3: return DType::Int64;
  case 4: return DType::DFloat;
  case 5: return DType::DComplex;
  default: return DType::Int32;
  }
}

void initConversions() {
  cArithSeq = rb_const_get(rb_cEnumerator, rb_intern("ArithmeticSequence"));
  rb_gc_register_address(&cArithSeq);
}

} // namespace cumo::rb
