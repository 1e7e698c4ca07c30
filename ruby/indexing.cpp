// Indexing and layout methods: [], []=, aref_cpu, reshape, reshape!,
// transpose, flatten.
#include "ops/creation.h"
#include "graph/engine.h"
#include "ops/elementwise.h"
#include "ops/fancy_index.h"
#include "ops/indexing.h"
#include "ops/shape_ops.h"
#include "ops/record.h"
#include "ruby/compat.h"
#include "ruby/convert.h"
#include "ruby/ruby_api.h"

namespace cumo::rb {

namespace {

/// A new handle onto what `items` select from `a` (a view of its storage,
/// or of a copy when a flat index meets a strided view).
ArrayHandle *indexHandle(ArrayHandle &a, llvm::ArrayRef<IndexItem> items,
                         const char *op) {
  bool needsCopy = false;
  Layout l = indexLayout(a.layout(), items, op, &needsCopy);
  if (!needsCopy)
    return new ArrayHandle(a.storageRef(), std::move(l));
  ArrayHandle copy(copyOf(a));
  Layout flat = indexLayout(copy.layout(), items, op);
  return new ArrayHandle(copy.storageRef(), std::move(flat));
}

/// Whether some index is an index array or a mask (a Ruby Array or an
/// NArray), which selects by a table of positions rather than a view.
bool hasIndexArray(int argc, const VALUE *argv) {
  for (int i = 0; i < argc; ++i)
    if (RB_TYPE_P(argv[i], T_ARRAY) || isNArray(argv[i]))
      return true;
  return false;
}

/// One index as a FancyItem: a Ruby Array gives its values, an NArray of
/// an integer class stays on the device (nothing is read back), a Bit mask
/// gives the positions of its true elements in row-major order (read back:
/// a sync, as the result's shape depends on their count).
FancyItem fancyItemFrom(VALUE v, const char *op) {
  FancyItem f;
  if (RB_TYPE_P(v, T_ARRAY)) {
    HostArray h = hostArrayFrom(v, DType::Int64, op);
    f.isList = true;
    f.listShape = h.shape;
    const int64_t *p = reinterpret_cast<const int64_t *>(h.bytes.data());
    f.positions.assign(p, p + numElements(h.shape));
    return f;
  }
  if (!isNArray(v)) {
    f.item = indexItemFrom(v, op);
    return f;
  }
  ArrayHandle &h = handleOf(v, op);
  DType t = h.dtype();
  if (t != DType::Bit && !isInteger(t))
    rb_raise(rb_eTypeError, "[%s] an index array is of an integer class or Bit, not %s", op,
             className(t).c_str());
  f.isList = true;
  f.listShape = toShape(h.shape());
  if (t != DType::Bit) {
    f.device = &h;
    return f;
  }
  int64_t n = numElements(h.shape());
  guarded([&] {
    std::vector<uint8_t> bits(static_cast<size_t>(n));
    Engine::get().read(h, bits.data());
    for (int64_t i = 0; i < n; ++i)
      if (bits[size_t(i)])
        f.positions.push_back(i);
    f.maskLength = n;
    f.listShape = {int64_t(f.positions.size())};
  });
  return f;
}

/// What index arrays and masks select from `a` (checked, nothing recorded
/// yet: an integer NArray index is read where the op records its table),
/// into `sel`; a failure is left in `raised`.
void fancySelectionOf(const ArrayHandle &a, int argc, const VALUE *argv, const char *op,
                      Selection &sel, DeferredRaise &raised) {
  std::vector<FancyItem> items;
  items.reserve(size_t(argc));
  raised.ruby([&] {
    for (int i = 0; i < argc; ++i)
      items.push_back(fancyItemFrom(argv[i], op));
  });
  raised.engine([&] { sel = fancySelection(a.shape(), items, op); });
}

/// `a[*argv]` with index arrays or masks: a copy of the selected elements
/// (Numo answers a view of them).
VALUE indexArrayRead(ArrayHandle &a, int argc, VALUE *argv, const char *op) {
  DeferredRaise raised;
  NodeRef n;
  {
    Selection sel;
    fancySelectionOf(a, argc, argv, op, sel, raised);
    raised.engine([&] {
      releaseDeadHandles();
      n = gatherOp(a, sel);
    });
  }
  raised.raise();
  return wrapNode(std::move(n));
}

/// What `self[*argv]` selects, as an NArray (errors name `op`).
VALUE aref(int argc, VALUE *argv, VALUE self, const char *op) {
  ArrayHandle &a = handleOf(self, op);
  if (hasIndexArray(argc, argv))
    return indexArrayRead(a, argc, argv, op);
  IndexItems items = indexItemsFrom(argc, argv, op);
  ArrayHandle *h = guarded([&] {
    ArrayHandle *v = indexHandle(a, items, op);
    v->viewObject = true; // Numo answers a view for every array index
    return v;
  });
  return wrapHandle(h);
}

VALUE arefMethod(int argc, VALUE *argv, VALUE self) {
  return compatResult(aref(argc, argv, self, "[]"));
}

VALUE arefCpuMethod(int argc, VALUE *argv, VALUE self) {
  VALUE r = aref(argc, argv, self, "aref_cpu");
  if (handleOf(r, "aref_cpu").ndim() == 0)
    return rb_funcall(r, rb_intern("extract_cpu"), 0);
  return r;
}

/// Shapes a Ruby Array value to `shape` the way Numo stores one: in nested
/// order, missing elements zero, extra ones ignored (no broadcasting).
HostArray shapedHostArray(VALUE ary, DType t, llvm::ArrayRef<int64_t> shape,
                          const char *op) {
  HostArray h;
  h.shape = toShape(shape);
  h.bytes.assign(size_t(numElements(shape)) * sizeOf(t), 0);
  // An empty target (an empty index list selects nothing) takes nothing
  // of the value (the rows below would write into no memory).
  if (h.bytes.empty())
    return h;
  size_t size = sizeOf(t);
  struct Rec {
    static void fill(VALUE v, DType t, llvm::ArrayRef<int64_t> shape, char *dst,
                     size_t size, const char *op) {
      if (!RB_TYPE_P(v, T_ARRAY)) {
        HostArray one = hostArrayFrom(rb_ary_new_from_args(1, v), t, op);
        std::memcpy(dst, one.bytes.data(), size);
        return;
      }
      if (shape.empty()) {
        if (RARRAY_LEN(v) > 0)
          fill(rb_ary_entry(v, 0), t, shape, dst, size, op);
        return;
      }
      long n = std::min<long>(RARRAY_LEN(v), long(shape[0]));
      int64_t stride = numElements(shape.drop_front()) * int64_t(size);
      for (long i = 0; i < n; ++i)
        fill(rb_ary_entry(v, i), t, shape.drop_front(), dst + i * stride, size, op);
    }
  };
  Rec::fill(ary, t, shape, h.bytes.data(), size, op);
  return h;
}

/// The right side of []=, read from Ruby before the engine is locked (a
/// Ruby Array laid out in the target's shape, a number, or an NArray), and
/// made a node of the target's shape and class under the lock.
struct AssignedValue {
  AssignedValue(VALUE value, DType t, llvm::ArrayRef<int64_t> shape) : t(t) {
    fromArray = RB_TYPE_P(value, T_ARRAY);
    if (fromArray)
      host = shapedHostArray(value, t, shape, "[]=");
    fromScalar = !fromArray && !isNArray(value);
    if (fromScalar)
      scalar = scalarFor(value, t, "[]=");
    src = isNArray(value) ? &handleOf(value, "[]=") : nullptr;
  }
  NodeRef node(llvm::ArrayRef<int64_t> shape) const {
    if (fromArray)
      return uploadNode(t, host.shape, host.bytes.data());
    if (fromScalar)
      return fillNode(t, shape, scalar);
    checkCast(src->dtype(), t, "[]=");
    return castNode(broadcastNode(src->value(), shape, "[]="), t);
  }
  DType t;
  HostArray host;
  Scalar scalar;
  bool fromArray = false, fromScalar = false;
  ArrayHandle *src = nullptr;
};

/// a[index arrays or masks] = value: the selected elements replaced, the
/// value broadcast to the selection's shape (a Ruby Array laid out in it).
VALUE indexArrayWrite(ArrayHandle &a, int argc, VALUE *argv, VALUE value) {
  DeferredRaise raised;
  {
    Selection sel;
    fancySelectionOf(a, argc, argv, "[]=", sel, raised);
    std::optional<AssignedValue> v;
    raised.ruby([&] { v.emplace(value, a.dtype(), sel.shape); });
    raised.engine([&] {
      releaseDeadHandles();
      ArrayHandle whole(a.storageRef(), a.layout());
      assignValue(whole, indexWriteOp(a, sel, v->node(sel.shape)), "[]=");
    });
  }
  raised.raise();
  return value;
}

VALUE asetMethod(int argc, VALUE *argv, VALUE self) {
  if (argc < 1)
    rb_raise(rb_eArgError, "[[]=] needs a value");
  checkFrozen(self, "[]=");
  ArrayHandle &a = handleOf(self, "[]=");
  VALUE value = argv[argc - 1];
  if (hasIndexArray(argc - 1, argv))
    return indexArrayWrite(a, argc - 1, argv, value);
  IndexItems items = indexItemsFrom(argc - 1, argv, "[]=");
  // The target's shape decides how a Ruby Array value is laid out.
  Layout target = guarded([&] {
    bool needsCopy = false;
    Layout l = argc == 1 ? a.layout() : indexLayout(a.layout(), items, "[]=", &needsCopy);
    if (needsCopy)
      opError(ErrorKind::Index, "[]=", "a flat index into a strided view cannot be written");
    return l;
  });
  AssignedValue v(value, a.dtype(), target.shape);
  guarded([&] {
    releaseDeadHandles();
    ArrayHandle view(a.storageRef(), target);
    assignValue(view, v.node(target.shape), "[]=");
  });
  return value;
}

VALUE reshapeMethod(int argc, VALUE *argv, VALUE self) {
  ArrayHandle &a = handleOf(self, "reshape");
  Shape want;
  for (int i = 0; i < argc; ++i)
    want.push_back(NIL_P(argv[i]) ? -1 : int64Arg(argv[i], "reshape", "a size"));
  return wrapNode(guarded([&] {
    Shape shape = resolveShape(want, a.size(), "reshape");
    return reshapeNode(a, shape);
  }));
}

VALUE reshapeBangMethod(int argc, VALUE *argv, VALUE self) {
  ArrayHandle &a = handleOf(self, "reshape!");
  checkFrozen(self, "reshape!");
  Shape want;
  for (int i = 0; i < argc; ++i)
    want.push_back(NIL_P(argv[i]) ? -1 : int64Arg(argv[i], "reshape!", "a size"));
  guarded([&] {
    Shape shape = resolveShape(want, a.size(), "reshape!");
    if (!a.layout().isContiguous())
      opError(ErrorKind::Shape, "reshape!", "a strided view cannot be reshaped in place; "
                                            "reshape copies it");
    a.reshapeInPlace(shape);
  });
  return self;
}

VALUE transposeMethod(int argc, VALUE *argv, VALUE self) {
  ArrayHandle &a = handleOf(self, "transpose");
  llvm::SmallVector<int64_t, 4> axes;
  for (int i = 0; i < argc; ++i)
    axes.push_back(int64Arg(argv[i], "transpose", "an axis"));
  ArrayHandle *h = guarded([&] {
    auto *v = new ArrayHandle(a.storageRef(), transposeLayout(a.layout(), axes, "transpose"));
    v->viewObject = true;
    return v;
  });
  return wrapHandle(h);
}

VALUE flattenMethod(VALUE self) {
  ArrayHandle &a = handleOf(self, "flatten");
  ArrayHandle *h = guarded([&] {
    if (a.layout().isContiguous()) {
      auto *v = new ArrayHandle(a.storageRef(), a.layout());
      v->reshapeInPlace({a.size()});
      v->viewObject = true;
      return v;
    }
    return new ArrayHandle(reshapeNode(a, {a.size()}));
  });
  return wrapHandle(h);
}

} // namespace

void initIndexing() {
  using Fn = VALUE (*)(ANYARGS);
  rb_define_method(cNArray, "[]", Fn(arefMethod), -1);
  rb_define_method(cNArray, "[]=", Fn(asetMethod), -1);
  rb_define_method(cNArray, "aref_cpu", Fn(arefCpuMethod), -1);
  rb_define_method(cNArray, "reshape", Fn(reshapeMethod), -1);
  rb_define_method(cNArray, "reshape!", Fn(reshapeBangMethod), -1);
  rb_define_method(cNArray, "transpose", Fn(transposeMethod), -1);
  rb_define_method(cNArray, "flatten", Fn(flattenMethod), 0);
}

} // namespace cumo::rb
