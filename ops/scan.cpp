#include "ops/scan.h"

#include "core/error.h"
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

void scanReference(const OpaqueCall &call) {
  const OpaqueOperand &in = call.operands[0];
  int64_t rank = int64_t(in.shape.size());
  int64_t n = numElements(in.shape);
  bool flat = call.ints.empty();
  int64_t axis = flat ? -1 : call.ints[0];
  DType acc = scanAccumulator(call.op, call.outDtype);
  OpKind step = call.op == OpKind::CumSum ? OpKind::Sum : OpKind::Prod;
  size_t inSize = sizeOf(in.dtype), outSize = sizeOf(call.outDtype);
  auto addressOf = [&](llvm::ArrayRef<int64_t> c) {
    int64_t a = in.offset;
    for (int64_t d = 0; d < rank; ++d)
      a += c[d] * in.strides[d];
    return a;
  };
  dispatchDType(in.dtype, [&]<DType I, class IT>() {
    dispatchDType(acc, [&]<DType A, class AT>() {
      dispatchDType(call.outDtype, [&]<DType O, class OT>() {
        const char *src = static_cast<const char *>(in.data);
        char *dst = static_cast<char *>(call.out);
        // Lines: every element when flat, else each run along `axis`.
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
          AT total = ref::reduceIdentity<AT>(step);
          for (int64_t i = 0; i < len; ++i) {
            int64_t outIndex = 0;
            if (flat) {
              int64_t r = i;
              for (int64_t d = rank; d-- > 0;) {
                c[d] = r % in.shape[d];
                r /= in.shape[d];
              }
            } else {
              c[axis] = i;
            }
            for (int64_t d = 0; d < rank; ++d)
              outIndex += c[d] * outStrides[d];
            IT x;
            std::memcpy(&x, src + addressOf(c) * inSize, inSize);
            total = ref::reduceStep(step, total, ref::convert<AT>(x));
            OT y = ref::convert<OT>(total);
            std::memcpy(dst + outIndex * outSize, &y, outSize);
          }
        }
      });
    });
  });
}

} // namespace cumo
