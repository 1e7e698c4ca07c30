// Host I/O: from_binary, to_binary, store_binary, Marshal (marshal_dump,
// marshal_load) and clone (initialize_copy); the block methods map,
// each_with_index and map_with_index, and Bit#where and where2, each a
// host round trip as in Numo (read, yield or compute, upload); and
// Cumo::NArray.inspect_rows and inspect_cols.
#include "graph/engine.h"
#include "ops/binary_io.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ruby/convert.h"
#include "ruby/ruby_api.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace cumo::rb {

InspectLimits &inspectLimits() {
  static InspectLimits limits;
  return limits;
}

namespace {

DType classDType(VALUE klass, const char *op) {
  DType t;
  if (!dtypeOfClass(klass, &t))
    rb_raise(rb_eTypeError, "[%s] call it on a class such as Cumo::DFloat", op);
  return t;
}

/// Every element `a` sees, densely in row-major order (a host sync).
std::vector<char> readDense(const ArrayHandle &a) {
  std::vector<char> bytes(size_t(a.size()) * sizeOf(a.dtype()));
  guarded([&] {
    releaseDeadHandles();
    Engine::get().read(a, bytes.data());
  });
  return bytes;
}

VALUE binaryString(const std::string &s) { return rb_str_new(s.data(), long(s.size())); }

VALUE shapeValue(llvm::ArrayRef<int64_t> shape) {
  VALUE ary = rb_ary_new_capa(long(shape.size()));
  for (int64_t d : shape)
    rb_ary_push(ary, LL2NUM(d));
  return ary;
}

Shape shapeOf(VALUE v, const char *op) {
  if (RB_INTEGER_TYPE_P(v))
    return Shape{int64Arg(v, op, "a size")};
  if (!RB_TYPE_P(v, T_ARRAY))
    rb_raise(rb_eArgError, "[%s] second argument must be size or shape", op);
  Shape s;
  for (long i = 0; i < RARRAY_LEN(v); ++i) {
    VALUE d = rb_ary_entry(v, i);
    if (!RB_INTEGER_TYPE_P(d))
      rb_raise(rb_eArgError, "[%s] a shape takes Integers, not %" PRIsVALUE, op,
               rb_obj_class(d));
    s.push_back(int64Arg(d, op, "a size"));
  }
  return s;
}

// ---- binary form --------------------------------------------------------------

VALUE fromBinaryMethod(int argc, VALUE *argv, VALUE klass) {
  VALUE str, vshape;
  rb_scan_args(argc, argv, "11", &str, &vshape);
  DType t = classDType(klass, "from_binary");
  if (!RB_TYPE_P(str, T_STRING))
    rb_raise(rb_eTypeError, "[from_binary] expected a String, not %" PRIsVALUE,
             rb_obj_class(str));
  std::optional<Shape> given;
  if (!NIL_P(vshape))
    given = shapeOf(vshape, "from_binary");
  std::string bytes(RSTRING_PTR(str), size_t(RSTRING_LEN(str)));
  return wrapNode(guarded([&] {
    Shape shape = fromBinaryShape(t, bytes.size(), given, "from_binary");
    return fromBinaryNode(t, shape, bytes.data());
  }));
}

VALUE toBinaryMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "to_binary");
  std::vector<char> dense = readDense(a);
  return binaryString(packBinary(a.dtype(), dense.data(), a.size()));
}

VALUE storeBinaryMethod(int argc, VALUE *argv, VALUE self) {
  VALUE str, voffset;
  rb_scan_args(argc, argv, "11", &str, &voffset);
  checkFrozen(self, "store_binary");
  ArrayHandle &a = handleOf(self, "store_binary");
  if (!RB_TYPE_P(str, T_STRING))
    rb_raise(rb_eTypeError, "[store_binary] expected a String, not %" PRIsVALUE,
             rb_obj_class(str));
  long long offset = NIL_P(voffset) ? 0 : int64Arg(voffset, "store_binary", "an offset");
  if (offset < 0)
    rb_raise(rb_eArgError, "[store_binary] negative offset %lld", offset);
  std::string bytes(RSTRING_PTR(str), size_t(RSTRING_LEN(str)));
  size_t used = guarded([&] {
    releaseDeadHandles();
    size_t n = storeBinaryBytes(a, bytes.size(), size_t(offset), "store_binary");
    assignValue(a, fromBinaryNode(a.dtype(), a.shape(), bytes.data() + offset),
                "store_binary");
    return n;
  });
  return ULL2NUM(used);
}

// ---- Marshal and clone ------------------------------------------------------------

VALUE marshalDumpMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "marshal_dump");
  VALUE out = rb_ary_new_capa(4);
  rb_ary_push(out, INT2FIX(1)); // version, as Numo's
  rb_ary_push(out, shapeValue(a.shape()));
  rb_ary_push(out, INT2FIX(0)); // Numo's flags: never byte-swapped here
  rb_ary_push(out, toBinaryMethod(self));
  return out;
}

VALUE marshalLoadMethod(VALUE self, VALUE data) {
  DType t = classDType(rb_obj_class(self), "marshal_load");
  if (!RB_TYPE_P(data, T_ARRAY))
    rb_raise(rb_eArgError, "[marshal_load] marshal argument should be array");
  if (RARRAY_LEN(data) != 4)
    rb_raise(rb_eArgError, "[marshal_load] marshal array size should be 4");
  if (rb_ary_entry(data, 0) != INT2FIX(1))
    rb_raise(rb_eArgError, "[marshal_load] NArray marshal version %" PRIsVALUE
                           " is not supported (only version 1)",
             rb_inspect(rb_ary_entry(data, 0)));
  Shape shape = shapeOf(rb_ary_entry(data, 1), "marshal_load");
  VALUE str = rb_ary_entry(data, 3);
  if (!RB_TYPE_P(str, T_STRING))
    rb_raise(rb_eArgError, "[marshal_load] the data should be a String");
  std::string bytes(RSTRING_PTR(str), size_t(RSTRING_LEN(str)));
  ArrayHandle *h = guarded([&] {
    Shape s = fromBinaryShape(t, bytes.size(), shape, "marshal_load");
    return new ArrayHandle(fromBinaryNode(t, s, bytes.data()));
  });
  attachHandle(self, h, "marshal_load");
  return self;
}

VALUE initializeCopyMethod(VALUE self, VALUE orig) {
  if (self == orig)
    return self;
  ArrayHandle &a = handleOf(orig, "initialize_copy");
  if (rb_obj_class(self) != rb_obj_class(orig))
    rb_raise(rb_eTypeError, "[initialize_copy] initialize_copy should take same class object");
  ArrayHandle *h = guarded([&] { return new ArrayHandle(copyOf(a)); });
  attachHandle(self, h, "initialize_copy");
  return self;
}

// ---- block methods ------------------------------------------------------------------

void requireBlock(const char *op) {
  if (!rb_block_given_p())
    rb_raise(rb_eLocalJumpError, "[%s] no block given", op);
}

/// Yields [element, i, j, ...] for every element, as one Array (Numo's
/// each_with_index), and collects what the block answers when `collect`
/// is an Array.
VALUE yieldWithIndex(const ArrayHandle &a, const std::vector<char> &bytes, VALUE collect) {
  size_t size = sizeOf(a.dtype());
  int64_t nd = a.ndim();
  llvm::SmallVector<int64_t, 4> c(nd, 0);
  for (int64_t i = 0; i < a.size(); ++i) {
    VALUE args = rb_ary_new_capa(long(nd + 1));
    rb_ary_push(args, elementToRuby(a.dtype(), bytes.data() + i * size));
    for (int64_t d = 0; d < nd; ++d)
      rb_ary_push(args, LL2NUM(c[d]));
    if (nd == 0)
      rb_ary_push(args, INT2FIX(0)); // Numo yields [x, 0] for a 0-dim array
    VALUE r = rb_yield(args);
    if (!NIL_P(collect))
      rb_ary_push(collect, r);
    for (int64_t d = nd; d-- > 0;) {
      if (++c[d] < a.shape()[d])
        break;
      c[d] = 0;
    }
  }
  return collect;
}

/// A new array of a's class and shape holding the Ruby values in `values`
/// (converted as a store converts them).
VALUE uploadValues(const ArrayHandle &a, VALUE values, const char *op) {
  HostArray host = hostArrayFrom(values, a.dtype(), op);
  Shape shape = toShape(a.shape());
  return wrapNode(guarded([&] { return uploadNode(a.dtype(), shape, host.bytes.data()); }));
}

VALUE mapMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "map");
  if (a.dtype() == DType::Bit)
    rb_raise(rb_eNoMethodError, "[map] undefined for Cumo::Bit");
  requireBlock("map");
  std::vector<char> bytes = readDense(a);
  size_t size = sizeOf(a.dtype());
  VALUE values = rb_ary_new_capa(long(a.size()));
  for (int64_t i = 0; i < a.size(); ++i)
    rb_ary_push(values, rb_yield(elementToRuby(a.dtype(), bytes.data() + i * size)));
  return uploadValues(a, values, "map");
}

VALUE eachWithIndexMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "each_with_index");
  requireBlock("each_with_index");
  std::vector<char> bytes = readDense(a);
  yieldWithIndex(a, bytes, Qnil);
  return self;
}

VALUE mapWithIndexMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "map_with_index");
  if (a.dtype() == DType::Bit)
    rb_raise(rb_eNoMethodError, "[map_with_index] undefined for Cumo::Bit");
  requireBlock("map_with_index");
  std::vector<char> bytes = readDense(a);
  VALUE values = yieldWithIndex(a, bytes, rb_ary_new_capa(long(a.size())));
  return uploadValues(a, values, "map_with_index");
}

// ---- where --------------------------------------------------------------------

/// The flat indices of the elements of a Bit array that are `truth`, as
/// an Int32 array (Int64 past 2**31 elements), as Numo's where answers.
VALUE whereIndices(const ArrayHandle &a, const std::vector<char> &bits, bool truth) {
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < a.size(); ++i)
    if ((bits[size_t(i)] != 0) == truth)
      idx.push_back(i);
  bool wide = a.size() > INT32_MAX;
  DType t = wide ? DType::Int64 : DType::Int32;
  std::vector<char> bytes(idx.size() * sizeOf(t));
  for (size_t i = 0; i < idx.size(); ++i) {
    if (wide) {
      std::memcpy(bytes.data() + i * 8, &idx[i], 8);
    } else {
      int32_t v = int32_t(idx[i]);
      std::memcpy(bytes.data() + i * 4, &v, 4);
    }
  }
  int64_t n = int64_t(idx.size());
  return wrapNode(guarded([&] { return uploadNode(t, {n}, bytes.data()); }));
}

const ArrayHandle &bitReceiver(VALUE self, const char *op) {
  ArrayHandle &a = handleOf(self, op);
  if (a.dtype() != DType::Bit)
    rb_raise(rb_eNoMethodError, "[%s] defined for Cumo::Bit only", op);
  return a;
}

/// mask(array): the elements of `array` where this Bit is true, as
/// array[self] selects them.
VALUE maskMethod(VALUE self, VALUE array) {
  bitReceiver(self, "mask");
  handleOf(array, "mask");
  return rb_funcall(array, rb_intern("[]"), 1, self);
}

VALUE whereMethod(VALUE self) {
  const ArrayHandle &a = bitReceiver(self, "where");
  return whereIndices(a, readDense(a), true);
}

VALUE where2Method(VALUE self) {
  const ArrayHandle &a = bitReceiver(self, "where2");
  std::vector<char> bits = readDense(a);
  return rb_assoc_new(whereIndices(a, bits, true), whereIndices(a, bits, false));
}

// ---- inspect limits -------------------------------------------------------------

VALUE limitValue(int v) { return v > 0 ? INT2NUM(v) : Qnil; }
/// nil (or false) or a count under 1: no limit, as in Numo; a count past
/// int's range is no limit either.
int limitFrom(VALUE v, const char *op) {
  if (!RTEST(v))
    return 0;
  int64_t n = int64Arg(v, op, "the limit");
  return n > 0 ? int(std::min<int64_t>(n, INT_MAX)) : 0;
}

VALUE inspectRows(VALUE) { return limitValue(inspectLimits().rows); }
VALUE inspectCols(VALUE) { return limitValue(inspectLimits().cols); }
VALUE setInspectRows(VALUE, VALUE v) {
  inspectLimits().rows = limitFrom(v, "inspect_rows=");
  return Qnil;
}
VALUE setInspectCols(VALUE, VALUE v) {
  inspectLimits().cols = limitFrom(v, "inspect_cols=");
  return Qnil;
}

} // namespace

void initIOMethods() {
  using Fn = VALUE (*)(ANYARGS);
  rb_define_singleton_method(cNArray, "from_binary", Fn(fromBinaryMethod), -1);
  rb_define_alias(rb_singleton_class(cNArray), "from_string", "from_binary");
  rb_define_method(cNArray, "to_binary", Fn(toBinaryMethod), 0);
  rb_define_alias(cNArray, "to_string", "to_binary");
  rb_define_method(cNArray, "store_binary", Fn(storeBinaryMethod), -1);
  rb_define_method(cNArray, "marshal_dump", Fn(marshalDumpMethod), 0);
  rb_define_method(cNArray, "marshal_load", Fn(marshalLoadMethod), 1);
  rb_define_method(cNArray, "initialize_copy", Fn(initializeCopyMethod), 1);
  rb_define_method(cNArray, "map", Fn(mapMethod), 0);
  rb_define_method(cNArray, "each_with_index", Fn(eachWithIndexMethod), 0);
  rb_define_method(cNArray, "map_with_index", Fn(mapWithIndexMethod), 0);
  rb_define_method(cNArray, "where", Fn(whereMethod), 0);
  rb_define_method(cNArray, "mask", Fn(maskMethod), 1);
  rb_define_method(cNArray, "where2", Fn(where2Method), 0);
  rb_define_singleton_method(cNArray, "inspect_rows", Fn(inspectRows), 0);
  rb_define_singleton_method(cNArray, "inspect_rows=", Fn(setInspectRows), 1);
  rb_define_singleton_method(cNArray, "inspect_cols", Fn(inspectCols), 0);
  rb_define_singleton_method(cNArray, "inspect_cols=", Fn(setInspectCols), 1);
}

} // namespace cumo::rb
