#include "ops/scan.h"

#include "core/error.h"
#include "ops/record.h"
#include "ops/reference.h"

#include <cstring>
#include <string>

namespace cumo {

DType scanAccumulator(OpKind op, DType t) {
  return op == OpKind::CumSum && isNarrowFloat(t) ? DType::SFloat : t;
}

NodeRef scanOp(OpKind op, const ArrayHandle &a, std::optional<int64_t> axis) {
  DType t = a.dtype();
  if (t == DType::Bit)
    opError(ErrorKind::NoMethod, opName(op), "undefined for Cumo::Bit");
  if (a.ndim() == 0 && !axis) // one element: the scan is the element
    return record(OpKind::Copy, t, a.shape(), {a.value()});
  NodeRef n = record(op, t, a.shape(), {a.value()});
  if (axis) {
    int64_t d = *axis < 0 ? *axis + a.ndim() : *axis;
    if (d < 0 || d >= a.ndim())
      opError(ErrorKind::Dimension, opName(op),
              "axis " + std::to_string(*axis) + " is out of range for an array of " +
                  std::to_string(a.ndim()) + " axes");
    n->extra().axes.push_back(d);
  } else {
    n->extra(); // no axis: every element in row-major order
  }
  return n;
}

namespace {

/// Scans every line of `in` (each run along `axis`, or all elements in
/// row-major order when `flat`) into the contiguous `out`, accumulating in
/// A and storing each running value rounded to T.
template <class T, class A>
void scanLines(const OpaqueOperand &in, void *out, OpKind step, bool flat,
               int64_t axis) {
  int64_t rank = int64_t(in.shape.size());
  int64_t n = numElements(in.shape);
  const T *src = static_cast<const T *>(in.data);
  T *dst = static_cast<T *>(out);
  int64_t len = flat ? n : (rank ? in.shape[axis] : 1);
  int64_t lines = len ? n / len : 0;
  Strides outStrides = contiguousStrides(in.shape);
  llvm::SmallVector<int64_t, 4> c(rank, 0);
  for (int64_t line = 0; line < lines; ++line) {
    // The coordinates of the line's first element.
    int64_t rest = line;
    for (int64_t d = rank; d-- > 0;) {
      if (flat || d == axis) {
        c[d] = 0;
        continue;
      }
      c[d] = rest % in.shape[d];
      rest /= in.shape[d];
    }
    A total = ref::reduceIdentity<A>(step);
    for (int64_t i = 0; i < len; ++i) {
      if (flat) {
        int64_t r = i;
        for (int64_t d = rank; d-- > 0;) {
          c[d] = r % in.shape[d];
          r /= in.shape[d];
        }
      } else {
        c[axis] = i;
      }
      int64_t at = in.offset, outIndex = 0;
      for (int64_t d = 0; d < rank; ++d) {
        at += c[d] * in.strides[d];
        outIndex += c[d] * outStrides[d];
      }
      total = ref::reduceStep(step, total, ref::convert<A>(src[at]));
      dst[outIndex] = ref::convert<T>(total);
    }
  }
}

} // namespace

void scanReference(const OpaqueCall &call) {
  const OpaqueOperand &in = call.operands[0];
  bool flat = call.ints.empty();
  int64_t axis = flat ? -1 : call.ints[0];
  OpKind step = call.op == OpKind::CumSum ? OpKind::Sum : OpKind::Prod;
  // A scan keeps its operand's class (scanOp records it so), and the
  // accumulator follows from the class: one dispatch, not one per
  // (input, accumulator, output) triple, which took minutes to compile.
  if (in.dtype != call.outDtype)
    throw Error(ErrorKind::Internal, "[scan] the result class differs from the operand's");
  bool widen = scanAccumulator(call.op, call.outDtype) != call.outDtype;
  dispatchDType(in.dtype, [&]<DType T, class C>() {
    if constexpr (kIsNarrowFloatC<C>) {
      if (widen)
        return scanLines<C, float>(in, call.out, step, flat, axis);
    }
    scanLines<C, C>(in, call.out, step, flat, axis);
  });
}

} // namespace cumo
