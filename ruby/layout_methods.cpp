// Layout methods: views (view, swapaxes, expand_dims, squeeze, reverse and
// flip, fliplr, flipud, rot90, diagonal, split and its relatives), the
// copies tile and repeat, and joining: concatenate (class and instance),
// stack, vstack, hstack, dstack and column_stack.
#include "ops/join.h"
#include "ops/layout.h"
#include "ruby/convert.h"
#include "ruby/ruby_api.h"

#include <optional>
#include <vector>

namespace cumo::rb {

namespace {

/// A view object onto `a`'s storage with `l`.
VALUE wrapView(const ArrayHandle &a, Layout l) {
  ArrayHandle *h = guarded([&] {
    auto *v = new ArrayHandle(a.storageRef(), std::move(l));
    v->viewObject = true;
    return v;
  });
  return wrapHandle(h);
}

long long integerArg(VALUE v, const char *op, const char *what) {
  if (!RB_INTEGER_TYPE_P(v))
    rb_raise(rb_eArgError, "[%s] %s must be an Integer, not %" PRIsVALUE, op, what,
             rb_obj_class(v));
  return int64Arg(v, op, what);
}

/// Axes from Integers, Ranges and Arrays of them (Numo's dimension
/// arguments).
void addAxes(VALUE v, llvm::SmallVectorImpl<int64_t> &axes, const char *op) {
  appendAxes(v, axes, op, rb_eArgError);
}

/// The value of keyword `name` in `opts` (nil when absent); ArgumentError
/// naming `op` for any other keyword.
VALUE keyword(VALUE opts, const char *name, const char *op) {
  if (NIL_P(opts))
    return Qnil;
  ID id = rb_intern(name);
  checkKeywords(opts, {id}, op);
  return rb_hash_aref(opts, ID2SYM(id));
}

// ---- views ------------------------------------------------------------------

VALUE viewMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "view");
  return wrapView(a, a.layout());
}

VALUE swapaxesMethod(VALUE self, VALUE a1, VALUE a2) {
  ArrayHandle &a = handleOf(self, "swapaxes");
  int64_t i = integerArg(a1, "swapaxes", "an axis");
  int64_t j = integerArg(a2, "swapaxes", "an axis");
  return wrapView(a, guarded([&] { return swapaxesLayout(a.layout(), i, j); }));
}

VALUE expandDimsMethod(VALUE self, VALUE dim) {
  ArrayHandle &a = handleOf(self, "expand_dims");
  int64_t d = integerArg(dim, "expand_dims", "an axis");
  return wrapView(a, guarded([&] { return expandDimsLayout(a.layout(), d); }));
}

VALUE squeezeMethod(int argc, VALUE *argv, VALUE self) {
  VALUE rest, opts;
  rb_scan_args(argc, argv, "*:", &rest, &opts);
  ArrayHandle &a = handleOf(self, "squeeze");
  llvm::SmallVector<int64_t, 4> axes;
  addAxes(rest, axes, "squeeze");
  addAxes(keyword(opts, "axis", "squeeze"), axes, "squeeze");
  return wrapView(a, guarded([&] { return squeezeLayout(a.layout(), axes); }));
}

VALUE reverseWith(int argc, VALUE *argv, VALUE self, const char *op) {
  VALUE rest, opts;
  rb_scan_args(argc, argv, "*:", &rest, &opts);
  ArrayHandle &a = handleOf(self, op);
  llvm::SmallVector<int64_t, 4> axes;
  addAxes(rest, axes, op);
  addAxes(keyword(opts, "axis", op), axes, op);
  return wrapView(a, guarded([&] { return reverseLayout(a.layout(), axes, op); }));
}

VALUE reverseMethod(int argc, VALUE *argv, VALUE self) {
  return reverseWith(argc, argv, self, "reverse");
}
VALUE flipMethod(int argc, VALUE *argv, VALUE self) {
  return reverseWith(argc, argv, self, "flip");
}
VALUE fliplrMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "fliplr");
  return wrapView(a, guarded([&] { return reverseLayout(a.layout(), {1}, "fliplr"); }));
}
VALUE flipudMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "flipud");
  return wrapView(a, guarded([&] { return reverseLayout(a.layout(), {0}, "flipud"); }));
}

VALUE rot90Method(int argc, VALUE *argv, VALUE self) {
  VALUE vk, vaxes;
  rb_scan_args(argc, argv, "02", &vk, &vaxes);
  ArrayHandle &a = handleOf(self, "rot90");
  int64_t k = NIL_P(vk) ? 1 : integerArg(vk, "rot90", "k");
  int64_t p = 0, q = 1;
  if (!NIL_P(vaxes)) {
    if (!RB_TYPE_P(vaxes, T_ARRAY) || RARRAY_LEN(vaxes) != 2)
      rb_raise(rb_eArgError, "[rot90] axes must be an Array of two axes");
    p = integerArg(rb_ary_entry(vaxes, 0), "rot90", "an axis");
    q = integerArg(rb_ary_entry(vaxes, 1), "rot90", "an axis");
  }
  return wrapView(a, guarded([&] { return rot90Layout(a.layout(), k, p, q); }));
}

VALUE diagonalMethod(int argc, VALUE *argv, VALUE self) {
  if (argc > 2)
    rb_raise(rb_eArgError, "[diagonal] too many arguments (%d for 0..2)", argc);
  ArrayHandle &a = handleOf(self, "diagonal");
  std::optional<int64_t> offset;
  std::optional<std::pair<int64_t, int64_t>> axes;
  for (int i = 0; i < argc; ++i) {
    if (RB_INTEGER_TYPE_P(argv[i])) {
      if (offset)
        rb_raise(rb_eArgError, "[diagonal] offset is given twice");
      offset = int64Arg(argv[i], "diagonal", "an offset");
    } else if (RB_TYPE_P(argv[i], T_ARRAY)) {
      if (axes)
        rb_raise(rb_eArgError, "[diagonal] axes-array is given twice");
      if (RARRAY_LEN(argv[i]) != 2)
        rb_raise(rb_eArgError, "[diagonal] axes must be 2-element array");
      axes = {integerArg(rb_ary_entry(argv[i], 0), "diagonal", "an axis"),
              integerArg(rb_ary_entry(argv[i], 1), "diagonal", "an axis")};
    } else {
      rb_raise(rb_eArgError, "[diagonal] expected an offset or an axes Array, not %" PRIsVALUE,
               rb_obj_class(argv[i]));
    }
  }
  return wrapView(a, guarded([&] {
    return diagonalLayout(a.layout(), offset.value_or(0), axes, "diagonal");
  }));
}

// ---- split ------------------------------------------------------------------

VALUE splitWith(VALUE self, VALUE arg, int64_t axis, const char *op) {
  ArrayHandle &a = handleOf(self, op);
  if (isNArray(arg))
    arg = rb_funcall(arg, rb_intern("to_a"), 0);
  std::vector<Layout> parts;
  if (RB_INTEGER_TYPE_P(arg)) {
    int64_t n = int64Arg(arg, op, "a number of parts");
    parts = guarded([&] { return splitLayouts(a.layout(), n, axis, op); });
  } else if (RB_TYPE_P(arg, T_ARRAY)) {
    llvm::SmallVector<int64_t, 8> at;
    for (long i = 0; i < RARRAY_LEN(arg); ++i)
      at.push_back(integerArg(rb_ary_entry(arg, i), op, "a split index"));
    parts = guarded([&] { return splitLayoutsAt(a.layout(), at, axis, op); });
  } else {
    rb_raise(rb_eTypeError, "[%s] argument must be Integer or Array, not %" PRIsVALUE, op,
             rb_obj_class(arg));
  }
  VALUE out = rb_ary_new_capa(long(parts.size()));
  for (Layout &l : parts)
    rb_ary_push(out, wrapView(a, std::move(l)));
  return out;
}

VALUE splitMethod(int argc, VALUE *argv, VALUE self) {
  VALUE arg, opts;
  rb_scan_args(argc, argv, "1:", &arg, &opts);
  VALUE axis = keyword(opts, "axis", "split");
  return splitWith(self, arg, NIL_P(axis) ? 0 : integerArg(axis, "split", "axis"), "split");
}
VALUE vsplitMethod(VALUE self, VALUE arg) { return splitWith(self, arg, 0, "vsplit"); }
VALUE hsplitMethod(VALUE self, VALUE arg) { return splitWith(self, arg, 1, "hsplit"); }
VALUE dsplitMethod(VALUE self, VALUE arg) { return splitWith(self, arg, 2, "dsplit"); }

// ---- copies -----------------------------------------------------------------

VALUE tileMethod(int argc, VALUE *argv, VALUE self) {
  ArrayHandle &a = handleOf(self, "tile");
  llvm::SmallVector<int64_t, 4> reps;
  for (int i = 0; i < argc; ++i)
    reps.push_back(integerArg(argv[i], "tile", "a repetition count"));
  return wrapNode(guarded([&] { return tileNode(a, reps); }));
}

VALUE repeatMethod(int argc, VALUE *argv, VALUE self) {
  VALUE arg, opts;
  rb_scan_args(argc, argv, "1:", &arg, &opts);
  ArrayHandle &a = handleOf(self, "repeat");
  VALUE vaxis = keyword(opts, "axis", "repeat");
  std::optional<int64_t> axis;
  if (!NIL_P(vaxis)) {
    if (!RB_INTEGER_TYPE_P(vaxis))
      rb_raise(rb_eArgError, "[repeat] invalid axis: %" PRIsVALUE, rb_inspect(vaxis));
    axis = int64Arg(vaxis, "repeat", "an axis");
  }
  if (RB_INTEGER_TYPE_P(arg)) {
    int64_t n = int64Arg(arg, "repeat", "a repetition count");
    return wrapNode(guarded([&] { return repeatNode(a, n, axis); }));
  }
  if (!RB_TYPE_P(arg, T_ARRAY) && !isNArray(arg))
    rb_raise(rb_eTypeError, "[repeat] repeats takes an Integer, an Array or an NArray, not %" PRIsVALUE,
             rb_obj_class(arg));
  VALUE list = rb_funcall(arg, rb_intern("to_a"), 0);
  if (!RB_TYPE_P(list, T_ARRAY))
    rb_raise(rb_eTypeError, "[repeat] repeats' to_a is no Array but %" PRIsVALUE,
             rb_obj_class(list));
  llvm::SmallVector<int64_t, 8> counts;
  for (long i = 0; i < RARRAY_LEN(list); ++i)
    counts.push_back(integerArg(rb_ary_entry(list, i), "repeat", "a repetition count"));
  return wrapNode(guarded([&] { return repeatNode(a, counts, axis); }));
}

// ---- joining ----------------------------------------------------------------

/// The class Numo's NArray.array_type gives a list of parts: their classes
/// (numbers and Arrays as Cumo::NArray[] types them) promoted together.
DType arrayType(VALUE parts, const char *op) {
  std::optional<DType> t;
  for (long i = 0; i < RARRAY_LEN(parts); ++i) {
    VALUE v = rb_ary_entry(parts, i);
    DType d;
    if (isNArray(v))
      d = handleOf(v, op).dtype();
    else if (isRubyScalar(v) || RB_TYPE_P(v, T_ARRAY))
      d = inferDType(rb_ary_new_from_args(1, v));
    else
      rb_raise(rb_eTypeError, "[%s] not Cumo::NArray: %" PRIsVALUE, op, rb_obj_class(v));
    t = t ? promote(*t, d) : d;
  }
  return t.value_or(DType::Int32);
}

/// The parts as NArrays of class `t`: numbers become one-element arrays
/// and Arrays are cast (Numo's concatenate); others raise TypeError.
std::vector<const ArrayHandle *> partHandles(VALUE parts, DType t, VALUE keep,
                                             const char *op) {
  std::vector<const ArrayHandle *> out;
  for (long i = 0; i < RARRAY_LEN(parts); ++i) {
    VALUE v = rb_ary_entry(parts, i);
    if (!isNArray(v)) {
      if (isRubyScalar(v))
        v = rb_funcall(classOf(t), rb_intern("[]"), 1, v);
      else if (RB_TYPE_P(v, T_ARRAY))
        v = rb_funcall(classOf(t), rb_intern("cast"), 1, v);
      else
        rb_raise(rb_eTypeError, "[%s] not Cumo::NArray: %" PRIsVALUE, op,
                 rb_obj_class(v));
      rb_ary_push(keep, v); // alive until the join is recorded
    }
    out.push_back(&handleOf(v, op));
  }
  return out;
}

VALUE joinClass(VALUE klass, VALUE parts, JoinKind kind, int64_t axis, const char *op) {
  if (!RB_TYPE_P(parts, T_ARRAY))
    rb_raise(rb_eTypeError, "[%s] takes an Array of arrays, not %" PRIsVALUE, op,
             rb_obj_class(parts));
  DType t;
  if (klass == cNArray)
    t = arrayType(parts, op);
  else if (!dtypeOfClass(klass, &t))
    rb_raise(rb_eTypeError, "[%s] call it on Cumo::NArray or a class such as Cumo::DFloat", op);
  VALUE keep = rb_ary_new();
  std::vector<const ArrayHandle *> handles = partHandles(parts, t, keep, op);
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return joinNode(kind, handles, t, axis, -1, op);
  });
  RB_GC_GUARD(keep);
  return wrapNode(std::move(n));
}

int64_t axisKeyword(VALUE opts, const char *op) {
  VALUE v = keyword(opts, "axis", op);
  return NIL_P(v) ? 0 : integerArg(v, op, "axis");
}

VALUE concatenateClassMethod(int argc, VALUE *argv, VALUE klass) {
  VALUE parts, opts;
  rb_scan_args(argc, argv, "1:", &parts, &opts);
  return joinClass(klass, parts, JoinKind::Concatenate, axisKeyword(opts, "concatenate"),
                   "concatenate");
}
VALUE stackClassMethod(int argc, VALUE *argv, VALUE klass) {
  VALUE parts, opts;
  rb_scan_args(argc, argv, "1:", &parts, &opts);
  return joinClass(klass, parts, JoinKind::Stack, axisKeyword(opts, "stack"), "stack");
}
VALUE vstackMethod(VALUE klass, VALUE parts) {
  return joinClass(klass, parts, JoinKind::VStack, 0, "vstack");
}
VALUE hstackMethod(VALUE klass, VALUE parts) {
  return joinClass(klass, parts, JoinKind::HStack, 0, "hstack");
}
VALUE dstackMethod(VALUE klass, VALUE parts) {
  return joinClass(klass, parts, JoinKind::DStack, 0, "dstack");
}
VALUE columnStackMethod(VALUE klass, VALUE parts) {
  return joinClass(klass, parts, JoinKind::ColumnStack, 0, "column_stack");
}

/// a.concatenate(*others, axis: 0): joined in a's class, along an axis of
/// a's (ArgumentError outside them, as Numo's check_axis raises).
VALUE concatenateMethod(int argc, VALUE *argv, VALUE self) {
  VALUE rest, opts;
  rb_scan_args(argc, argv, "*:", &rest, &opts);
  ArrayHandle &a = handleOf(self, "concatenate");
  int64_t axis = axisKeyword(opts, "concatenate");
  int64_t nd = a.ndim();
  if (axis < -nd || axis >= nd)
    rb_raise(rb_eArgError, "[concatenate] axis=%lld is invalid for an array of %lld axes",
             (long long)axis, (long long)nd);
  VALUE parts = rb_ary_new_from_args(1, self);
  rb_ary_concat(parts, rest);
  VALUE keep = rb_ary_new();
  std::vector<const ArrayHandle *> handles = partHandles(parts, a.dtype(), keep, "concatenate");
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return joinNode(JoinKind::Concatenate, handles, a.dtype(), axis, nd, "concatenate");
  });
  RB_GC_GUARD(keep);
  return wrapNode(std::move(n));
}

} // namespace

void initLayoutMethods() {
  using Fn = VALUE (*)(ANYARGS);
  rb_define_method(cNArray, "view", Fn(viewMethod), 0);
  rb_define_method(cNArray, "swapaxes", Fn(swapaxesMethod), 2);
  rb_define_method(cNArray, "expand_dims", Fn(expandDimsMethod), 1);
  rb_define_method(cNArray, "squeeze", Fn(squeezeMethod), -1);
  rb_define_method(cNArray, "reverse", Fn(reverseMethod), -1);
  rb_define_method(cNArray, "flip", Fn(flipMethod), -1);
  rb_define_method(cNArray, "fliplr", Fn(fliplrMethod), 0);
  rb_define_method(cNArray, "flipud", Fn(flipudMethod), 0);
  rb_define_method(cNArray, "rot90", Fn(rot90Method), -1);
  rb_define_method(cNArray, "diagonal", Fn(diagonalMethod), -1);
  rb_define_method(cNArray, "split", Fn(splitMethod), -1);
  rb_define_method(cNArray, "vsplit", Fn(vsplitMethod), 1);
  rb_define_method(cNArray, "hsplit", Fn(hsplitMethod), 1);
  rb_define_method(cNArray, "dsplit", Fn(dsplitMethod), 1);
  rb_define_method(cNArray, "tile", Fn(tileMethod), -1);
  rb_define_method(cNArray, "repeat", Fn(repeatMethod), -1);
  rb_define_method(cNArray, "concatenate", Fn(concatenateMethod), -1);
  rb_define_alias(cNArray, "concat", "concatenate");
  rb_define_singleton_method(cNArray, "concatenate", Fn(concatenateClassMethod), -1);
  rb_define_singleton_method(cNArray, "stack", Fn(stackClassMethod), -1);
  rb_define_singleton_method(cNArray, "vstack", Fn(vstackMethod), 1);
  rb_define_singleton_method(cNArray, "hstack", Fn(hstackMethod), 1);
  rb_define_singleton_method(cNArray, "dstack", Fn(dstackMethod), 1);
  rb_define_singleton_method(cNArray, "column_stack", Fn(columnStackMethod), 1);
}

} // namespace cumo::rb
