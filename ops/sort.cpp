#include "ops/sort.h"

#include "core/error.h"
#include "ops/index_dtype.h"
#include "ops/record.h"
#include "ops/reference.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace cumo {

namespace {

/// Numo has no order on complex numbers or bits: no sort for them.
void checkSortable(const ArrayHandle &a, OpKind op) {
  DType t = a.dtype();
  if (t == DType::Bit || isComplex(t))
    opError(ErrorKind::NoMethod, opName(op),
            "undefined for " + className(t));
}

/// The axis in range, or an error naming the op.
int64_t lineAxis(const ArrayHandle &a, int64_t axis, OpKind op) {
  int64_t d = axis < 0 ? axis + a.ndim() : axis;
  if (d < 0 || d >= a.ndim())
    opError(ErrorKind::Dimension, opName(op),
            "axis " + std::to_string(axis) + " is out of range for an array of " +
                std::to_string(a.ndim()) + " axes");
  return d;
}

/// A node of `op` over the lines of `in` (its extra holds the axis, none
/// for every element).
NodeRef lineNode(OpKind op, DType t, llvm::ArrayRef<int64_t> shape, const NodeRef &in,
                 std::optional<int64_t> axis) {
  NodeRef n = record(op, t, shape, {in});
  n->extra(); // no axis: every element in row-major order
  if (axis)
    n->extra().axes.push_back(*axis);
  return n;
}

} // namespace

NodeRef sortOp(const ArrayHandle &a, std::optional<int64_t> axis) {
  checkSortable(a, OpKind::Sort);
  std::optional<int64_t> d;
  if (axis)
    d = lineAxis(a, *axis, OpKind::Sort);
  return lineNode(OpKind::Sort, a.dtype(), a.shape(), a.value(), d);
}

NodeRef sortIndexOp(const ArrayHandle &a, std::optional<int64_t> axis) {
  checkSortable(a, OpKind::SortIndex);
  std::optional<int64_t> d;
  if (axis)
    d = lineAxis(a, *axis, OpKind::SortIndex);
  DType out = indexResultType(numElements(a.shape()));
  return lineNode(OpKind::SortIndex, out, a.shape(), a.value(), d);
}

NodeRef medianOp(const ArrayHandle &a, std::optional<int64_t> axis, bool keepdims,
                 bool propagateNan) {
  checkSortable(a, OpKind::SortedMedian);
  std::optional<int64_t> d;
  if (axis)
    d = lineAxis(a, *axis, OpKind::SortedMedian);
  NodeRef sorted = lineNode(OpKind::Sort, a.dtype(), a.shape(), a.value(), d);
  Shape out;
  for (int64_t k = 0; k < a.ndim(); ++k) {
    bool reduced = !d || *d == k;
    if (!reduced)
      out.push_back(a.shape()[k]);
    else if (keepdims)
      out.push_back(1);
  }
  NodeRef n = lineNode(OpKind::SortedMedian, a.dtype(), out, sorted, d);
  n->scalar = Scalar::ofInt(propagateNan ? 1 : 0);
  return n;
}

SortLines sortLinesOf(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> ints) {
  // Lines are counted over the kept axes, so that an empty line is still a
  // line (its median is NaN).
  SortLines l;
  l.length = ints.empty() ? numElements(shape) : shape[ints[0]];
  l.count = 1;
  if (!ints.empty())
    for (size_t d = 0; d < shape.size(); ++d)
      if (int64_t(d) != ints[0])
        l.count *= shape[d];
  return l;
}

namespace {

/// Walks the lines of `in`: for each, the offsets of its elements in
/// `in`'s buffer, in line order, and where its first element lies in a
/// contiguous array of `in`'s shape, with the distance between its elements
/// there.
template <class F>
void forEachLine(const OpaqueOperand &in, llvm::ArrayRef<int64_t> ints, F &&f) {
  int64_t rank = int64_t(in.shape.size());
  bool flat = ints.empty();
  int64_t axis = flat ? -1 : ints[0];
  SortLines lines = sortLinesOf(in.shape, ints);
  Strides contiguous = contiguousStrides(in.shape);
  std::vector<int64_t> offsets(size_t(lines.length));
  llvm::SmallVector<int64_t, 4> c(size_t(rank), 0);
  for (int64_t line = 0; line < lines.count; ++line) {
    int64_t rest = line, base = 0;
    for (int64_t d = rank; d-- > 0;) {
      if (flat || d == axis) {
        c[d] = 0;
        continue;
      }
      c[d] = rest % in.shape[d];
      rest /= in.shape[d];
      base += c[d] * contiguous[d];
    }
    for (int64_t i = 0; i < lines.length; ++i) {
      if (flat) {
        int64_t r = i;
        for (int64_t d = rank; d-- > 0;) {
          c[d] = r % in.shape[d];
          r /= in.shape[d];
        }
      } else {
        c[axis] = i;
      }
      int64_t at = in.offset;
      for (int64_t d = 0; d < rank; ++d)
        at += c[d] * in.strides[d];
      offsets[size_t(i)] = at;
    }
    f(line, llvm::ArrayRef<int64_t>(offsets), base, flat ? 1 : contiguous[axis]);
  }
}

template <class T>
void sortLines(const OpaqueCall &call) {
  const OpaqueOperand &in = call.operands[0];
  const T *src = static_cast<const T *>(in.data);
  T *dst = static_cast<T *>(call.out);
  std::vector<T> line;
  forEachLine(in, call.ints, [&](int64_t, llvm::ArrayRef<int64_t> at, int64_t base,
                                 int64_t step) {
    line.clear();
    for (int64_t o : at)
      line.push_back(src[o]);
    std::sort(line.begin(), line.end(),
              [](T a, T b) { return cumo_ops::sort_less(a, b); });
    for (size_t i = 0; i < line.size(); ++i)
      dst[base + int64_t(i) * step] = line[i];
  });
}

template <class T, class I>
void sortIndexLines(const OpaqueCall &call) {
  const OpaqueOperand &in = call.operands[0];
  const T *src = static_cast<const T *>(in.data);
  I *dst = static_cast<I *>(call.out);
  std::vector<int64_t> order;
  forEachLine(in, call.ints, [&](int64_t, llvm::ArrayRef<int64_t> at, int64_t base,
                                 int64_t step) {
    order.resize(at.size());
    std::iota(order.begin(), order.end(), int64_t(0));
    // Ties by position: the answer does not depend on the algorithm.
    std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      T a = src[at[x]], b = src[at[y]];
      if (cumo_ops::sort_less(a, b))
        return true;
      if (cumo_ops::sort_less(b, a))
        return false;
      return x < y;
    });
    // The flat index of the line's i-th element is where a contiguous
    // array of the operand's shape holds it.
    for (size_t i = 0; i < order.size(); ++i)
      dst[base + int64_t(i) * step] = I(base + order[i] * step);
  });
}

template <class T>
void medianLines(const OpaqueCall &call) {
  const OpaqueOperand &in = call.operands[0];
  const T *src = static_cast<const T *>(in.data);
  T *dst = static_cast<T *>(call.out);
  bool propagate = call.scalar.asDouble() != 0;
  forEachLine(in, call.ints, [&](int64_t line, llvm::ArrayRef<int64_t> at, int64_t,
                                 int64_t) {
    int64_t n = int64_t(at.size());
    if (n == 0) { // an empty line: NaN, or 0 for an integer class
      if constexpr (ref::kIsFloatC<T>)
        dst[line] = ref::convert<T>(std::nan(""));
      else
        dst[line] = T(0);
      return;
    }
    // NaN sorted last: count the numbers, or answer NaN when propagating.
    int64_t m = n;
    if (!propagate)
      while (m > 0 && cumo_ops::sort_isnan(src[at[m - 1]]))
        --m;
    if (m == 0 || cumo_ops::sort_isnan(src[at[m - 1]]))
      dst[line] = src[at[n - 1]];
    else if (m % 2 == 0)
      dst[line] = cumo_ops::median_pair(src[at[m / 2 - 1]], src[at[m / 2]]);
    else
      dst[line] = src[at[(m - 1) / 2]];
  });
}

} // namespace

void sortReference(const OpaqueCall &call) {
  DType t = call.operands[0].dtype;
  dispatchDType(t, [&]<DType D, class C>() {
    if constexpr (kIsComplexC<C>) {
      throw Error(ErrorKind::Internal, "[sort] a complex operand");
    } else {
      switch (call.op) {
      case OpKind::Sort:
        return sortLines<C>(call);
      case OpKind::SortIndex:
        if (call.outDtype == DType::Int32)
          return sortIndexLines<C, int32_t>(call);
        return sortIndexLines<C, int64_t>(call);
      case OpKind::SortedMedian:
        return medianLines<C>(call);
      default:
        throw Error(ErrorKind::Internal, "[sort] not a sort op");
      }
    }
  });
}

} // namespace cumo
