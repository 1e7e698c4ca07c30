// Reduction methods: sum, prod, max, min, mean (axes positional or axis:,
// keepdims:), count_true and count_false. A full reduction answers a
// 0-dim array that stays on the device (a Ruby number in compatible mode).
#include "ops/elementwise.h"
#include "ops/index_reduction.h"
#include "ops/nan_reduction.h"
#include "ops/reduction.h"
#include "ops/scan.h"
#include "ops/sort.h"
#include "ops/statistics.h"
#include "ruby/compat.h"
#include "ruby/convert.h"
#include "ruby/ruby_api.h"

namespace cumo::rb {

namespace {

struct ReduceArgs {
  llvm::SmallVector<int64_t, 4> axes;
  bool keepdims = false;
  bool nan = false;
};

void addAxes(VALUE v, ReduceArgs &args, const char *op) {
  appendAxes(v, args.axes, op, rb_eTypeError);
}

/// The axes and keywords of a reduction method. `nan:` is taken by the
/// methods that give it a meaning (`nanAllowed`); the others refuse it.
ReduceArgs parseReduceArgs(int argc, VALUE *argv, const char *op,
                           bool nanAllowed = false) {
  VALUE rest, opts;
  rb_scan_args(argc, argv, "*:", &rest, &opts);
  ReduceArgs args;
  addAxes(rest, args, op);
  if (!NIL_P(opts)) {
    static ID ids[3];
    if (!ids[0]) {
      ids[0] = rb_intern("axis");
      ids[1] = rb_intern("keepdims");
      ids[2] = rb_intern("nan");
    }
    // Unknown keywords raise ArgumentError here, at the call, naming the op.
    VALUE keys = rb_funcall(opts, rb_intern("keys"), 0);
    for (long i = 0; i < RARRAY_LEN(keys); ++i) {
      VALUE k = rb_ary_entry(keys, i);
      if (!SYMBOL_P(k) || (SYM2ID(k) != ids[0] && SYM2ID(k) != ids[1] && SYM2ID(k) != ids[2]))
        rb_raise(rb_eArgError, "[%s] unknown keyword: %" PRIsVALUE, op, rb_inspect(k));
    }
    VALUE vals[3];
    rb_get_kwargs(opts, ids, 0, 3, vals);
    if (vals[0] != Qundef)
      addAxes(vals[0], args, op);
    if (vals[1] != Qundef)
      args.keepdims = RTEST(vals[1]);
    if (vals[2] != Qundef)
      args.nan = RTEST(vals[2]);
    if (args.nan && !nanAllowed)
      rb_raise(rb_eNotImpError, "[%s] nan: true is not supported yet", op);
  }
  return args;
}

/// The body the reduction methods share: the axes and keepdims from argv,
/// then `op(args)` under the engine lock; a 0-dim answer is a Ruby number
/// in compatible mode.
template <class F>
VALUE reduceWith(int argc, VALUE *argv, const char *name, F op, bool nanAllowed = false) {
  ReduceArgs args = parseReduceArgs(argc, argv, name, nanAllowed);
  return compatResult(recordNode([&] { return op(args); }));
}

template <OpKind Op> VALUE reduceMethod(int argc, VALUE *argv, VALUE self) {
  const char *name = opName(Op).data();
  ArrayHandle &a = handleOf(self, name);
  if (a.dtype() == DType::Bit && Op != OpKind::Max && Op != OpKind::Min)
    rb_raise(rb_eNoMethodError, "[%s] undefined for Cumo::Bit; use count_true", name);
  return reduceWith(
      argc, argv, name,
      [&](const ReduceArgs &args) {
        return args.nan ? nanReduceOp(Op, a, args.axes, args.keepdims)
                        : reduceOp(Op, a, args.axes, args.keepdims);
      },
      /*nanAllowed=*/true);
}

template <Statistic S> VALUE statisticMethod(int argc, VALUE *argv, VALUE self) {
  const char *name = statisticName(S);
  ArrayHandle &a = handleOf(self, name);
  return reduceWith(
      argc, argv, name,
      [&](const ReduceArgs &args) {
        return args.nan ? nanStatisticOp(S, a, args.axes, args.keepdims)
                        : statisticOp(S, a, args.axes, args.keepdims);
      },
      /*nanAllowed=*/true);
}

template <IndexReduction R> VALUE indexReductionMethod(int argc, VALUE *argv, VALUE self) {
  const char *name = indexReductionName(R);
  ArrayHandle &a = handleOf(self, name);
  return reduceWith(
      argc, argv, name,
      [&](const ReduceArgs &args) {
        return indexReductionOp(R, a, args.axes, args.keepdims, args.nan);
      },
      /*nanAllowed=*/true);
}

VALUE ptpMethod(int argc, VALUE *argv, VALUE self) {
  ArrayHandle &a = handleOf(self, "ptp");
  return reduceWith(
      argc, argv, "ptp",
      [&](const ReduceArgs &args) { return ptpOp(a, args.axes, args.keepdims, args.nan); },
      /*nanAllowed=*/true);
}

/// minmax: [min, max], as Numo answers it.
VALUE minmaxMethod(int argc, VALUE *argv, VALUE self) {
  ArrayHandle &a = handleOf(self, "minmax");
  ReduceArgs args = parseReduceArgs(argc, argv, "minmax", /*nanAllowed=*/true);
  auto [lo, hi] = guarded([&] {
    releaseDeadHandles();
    return minmaxOp(a, args.axes, args.keepdims, args.nan);
  });
  VALUE min = compatResult(wrapNode(std::move(lo)));
  VALUE max = compatResult(wrapNode(std::move(hi)));
  return rb_assoc_new(min, max);
}

/// mulsum(other, *axes, axis:, keepdims:, nan:): the sum of self * other,
/// other an array (a Ruby Array uploaded in self's class) or a number.
VALUE mulsumMethod(int argc, VALUE *argv, VALUE self) {
  if (argc < 1)
    rb_raise(rb_eArgError, "[mulsum] wrong number of arguments (given 0, expected 1+)");
  ArrayHandle &a = handleOf(self, "mulsum");
  OperandHolder b;
  prepareOperand(b, argv[0], a.dtype(), "mulsum");
  return reduceWith(
      argc - 1, argv + 1, "mulsum",
      [&](const ReduceArgs &args) {
        const Operand &other = finishOperand(b);
        return args.nan ? nanMulsumOp(a, other, args.axes, args.keepdims)
                        : mulsumOp(a, other, args.axes, args.keepdims);
      },
      /*nanAllowed=*/true);
}

VALUE countMethod(int argc, VALUE *argv, VALUE self, bool truth, const char *name) {
  ArrayHandle &a = handleOf(self, name);
  if (a.dtype() != DType::Bit)
    rb_raise(rb_eNoMethodError, "[%s] defined for Cumo::Bit only", name);
  ReduceArgs args = parseReduceArgs(argc, argv, name);
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    ArrayHandle ones(truth ? copyOf(a)
                           : binaryOp(OpKind::Eq, Operand::of(a),
                                      Operand::of(Scalar::ofInt(0))));
    ArrayHandle wide(castTo(ones, DType::Int64));
    return reduceOp(OpKind::Sum, wide, args.axes, args.keepdims);
  });
  return compatResult(wrapNode(std::move(n)));
}

/// all?, any? and none? of a Bit (axes positional or axis:, keepdims:): a
/// Bit array along axes, Ruby's true or false over every element (a read).
/// An empty array is all? and none?, never any?.
VALUE truthMethod(int argc, VALUE *argv, VALUE self, OpKind fold, bool negate,
                  const char *name) {
  ArrayHandle &a = handleOf(self, name);
  if (a.dtype() != DType::Bit)
    rb_raise(rb_eNoMethodError, "[%s] defined for Cumo::Bit only", name);
  ReduceArgs args = parseReduceArgs(argc, argv, name);
  if (args.axes.empty() && numElements(a.shape()) == 0)
    return fold == OpKind::Min || negate ? Qtrue : Qfalse;
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    NodeRef r = reduceOp(fold, a, args.axes, args.keepdims);
    if (!negate)
      return r;
    ArrayHandle h(r);
    return binaryOp(OpKind::Eq, Operand::of(h), Operand::of(Scalar::ofInt(0)));
  });
  // Over every axis a Ruby true or false, as Numo's; kept dimensions
  // (keepdims: true) an array.
  bool scalar = args.axes.empty() && n->shape().empty();
  VALUE r = wrapNode(std::move(n));
  if (!scalar)
    return r;
  return RTEST(rb_funcall(rb_funcall(r, rb_intern("extract_cpu"), 0), rb_intern("nonzero?"), 0))
             ? Qtrue
             : Qfalse;
}

VALUE allMethod(int argc, VALUE *argv, VALUE self) {
  return truthMethod(argc, argv, self, OpKind::Min, false, "all?");
}
VALUE anyMethod(int argc, VALUE *argv, VALUE self) {
  return truthMethod(argc, argv, self, OpKind::Max, false, "any?");
}
VALUE noneMethod(int argc, VALUE *argv, VALUE self) {
  return truthMethod(argc, argv, self, OpKind::Max, true, "none?");
}

VALUE countTrueMethod(int argc, VALUE *argv, VALUE self) {
  return countMethod(argc, argv, self, true, "count_true");
}
VALUE countFalseMethod(int argc, VALUE *argv, VALUE self) {
  return countMethod(argc, argv, self, false, "count_false");
}
VALUE countTrueCpuMethod(int argc, VALUE *argv, VALUE self) {
  VALUE r = countMethod(argc, argv, self, true, "count_true_cpu");
  return rb_funcall(r, rb_intern("extract_cpu"), 0);
}
VALUE countFalseCpuMethod(int argc, VALUE *argv, VALUE self) {
  VALUE r = countMethod(argc, argv, self, false, "count_false_cpu");
  return rb_funcall(r, rb_intern("extract_cpu"), 0);
}

} // namespace

namespace {

/// At most one axis: a sort's line.
std::optional<int64_t> lineAxisArg(const ReduceArgs &args, const char *name) {
  if (args.axes.size() > 1)
    rb_raise(rb_eArgError, "[%s] one axis at most, not %zu", name, args.axes.size());
  if (args.axes.empty())
    return std::nullopt;
  return args.axes[0];
}

/// cumsum and cumprod: along axis (positional or axis:), or over every
/// element in row-major order, keeping the shape.
template <OpKind Op> VALUE scanMethod(int argc, VALUE *argv, VALUE self) {
  const char *name = opName(Op).data();
  ArrayHandle &a = handleOf(self, name);
  ReduceArgs args = parseReduceArgs(argc, argv, name, /*nanAllowed=*/true);
  if (args.keepdims)
    rb_raise(rb_eArgError, "[%s] keepdims: has no meaning for a scan", name);
  std::optional<int64_t> axis = lineAxisArg(args, name);
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return args.nan ? nanScanOp(Op, a, axis) : scanOp(Op, a, axis);
  });
  return wrapNode(std::move(n));
}

/// sort and sort_index (axis:, nan:): NaN sorts last either way, which is
/// where Numo's sort puts it by default (its nan: true leaves their place
/// to its quicksort).
template <OpKind Op> VALUE sortMethod(int argc, VALUE *argv, VALUE self) {
  const char *name = opName(Op).data();
  ArrayHandle &a = handleOf(self, name);
  ReduceArgs args = parseReduceArgs(argc, argv, name, true);
  if (args.keepdims)
    rb_raise(rb_eArgError, "[%s] keepdims: has no meaning for a sort", name);
  std::optional<int64_t> axis = lineAxisArg(args, name);
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return Op == OpKind::Sort ? sortOp(a, axis) : sortIndexOp(a, axis);
  });
  return wrapNode(std::move(n));
}

/// median(axis:, keepdims:, nan:): NaN ignored, or propagated with nan: true.
VALUE medianMethod(int argc, VALUE *argv, VALUE self) {
  ArrayHandle &a = handleOf(self, "median");
  ReduceArgs args = parseReduceArgs(argc, argv, "median", true);
  std::optional<int64_t> axis = lineAxisArg(args, "median");
  NodeRef n = guarded([&] {
    releaseDeadHandles();
    return medianOp(a, axis, args.keepdims, args.nan);
  });
  return compatResult(wrapNode(std::move(n)));
}

} // namespace

void initReductions() {
  using Fn = VALUE (*)(ANYARGS);
  rb_define_method(cNArray, "sum", Fn(reduceMethod<OpKind::Sum>), -1);
  rb_define_method(cNArray, "cumsum", Fn(scanMethod<OpKind::CumSum>), -1);
  rb_define_method(cNArray, "cumprod", Fn(scanMethod<OpKind::CumProd>), -1);
  rb_define_method(cNArray, "sort", Fn(sortMethod<OpKind::Sort>), -1);
  rb_define_method(cNArray, "sort_index", Fn(sortMethod<OpKind::SortIndex>), -1);
  rb_define_method(cNArray, "median", Fn(medianMethod), -1);
  rb_define_method(cNArray, "prod", Fn(reduceMethod<OpKind::Prod>), -1);
  rb_define_method(cNArray, "max", Fn(reduceMethod<OpKind::Max>), -1);
  rb_define_method(cNArray, "min", Fn(reduceMethod<OpKind::Min>), -1);
  rb_define_method(cNArray, "mean", Fn(reduceMethod<OpKind::Mean>), -1);
  rb_define_method(cNArray, "var", Fn(statisticMethod<Statistic::Var>), -1);
  rb_define_method(cNArray, "stddev", Fn(statisticMethod<Statistic::Stddev>), -1);
  rb_define_method(cNArray, "rms", Fn(statisticMethod<Statistic::Rms>), -1);
  rb_define_method(cNArray, "ptp", Fn(ptpMethod), -1);
  rb_define_method(cNArray, "max_index", Fn(indexReductionMethod<IndexReduction::MaxIndex>), -1);
  rb_define_method(cNArray, "min_index", Fn(indexReductionMethod<IndexReduction::MinIndex>), -1);
  rb_define_method(cNArray, "argmax", Fn(indexReductionMethod<IndexReduction::ArgMax>), -1);
  rb_define_method(cNArray, "argmin", Fn(indexReductionMethod<IndexReduction::ArgMin>), -1);
  rb_define_method(cNArray, "minmax", Fn(minmaxMethod), -1);
  rb_define_method(cNArray, "mulsum", Fn(mulsumMethod), -1);
  rb_define_method(cNArray, "count_true", Fn(countTrueMethod), -1);
  rb_define_method(cNArray, "all?", Fn(allMethod), -1);
  rb_define_method(cNArray, "any?", Fn(anyMethod), -1);
  rb_define_method(cNArray, "none?", Fn(noneMethod), -1);
  rb_define_method(cNArray, "count_false", Fn(countFalseMethod), -1);
  rb_define_method(cNArray, "count_true_cpu", Fn(countTrueCpuMethod), -1);
  rb_define_method(cNArray, "count_false_cpu", Fn(countFalseCpuMethod), -1);
}

} // namespace cumo::rb
