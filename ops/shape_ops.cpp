#include "ops/shape_ops.h"

#include "core/array.h"
#include "core/error.h"
#include "core/pending.h"
#include "ops/record.h"

#include <string>

namespace cumo {

NodeRef broadcastNode(const NodeRef &v, llvm::ArrayRef<int64_t> shape,
                      std::string_view op) {
  if (v->shape() == shape)
    return v;
  if (!broadcastsTo(v->shape(), shape))
    opError(ErrorKind::Shape, op,
            "shape " + shapeToString(v->shape()) + " does not broadcast to " +
                shapeToString(shape));
  AffineMap m = AffineMap::broadcast(v->shape(), shape);
  if (v->isMaterialized()) {
    Layout l;
    l.shape = toShape(shape);
    m.applyToLayout(v->layout().strides, v->layout().offset, l.strides, l.offset);
    return makeBufferNode(v->dtype(), v->buffer(), std::move(l));
  }
  NodeRef n = record(OpKind::View, v->dtype(), shape, {v});
  n->extra().view = std::move(m);
  return n;
}

Shape resolveShape(llvm::ArrayRef<int64_t> shape, int64_t size, std::string_view op) {
  Shape out = toShape(shape);
  int64_t known = 1;
  int free = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (free >= 0)
        opError(ErrorKind::Argument, op, "more than one -1 in the shape");
      free = int(i);
    } else if (out[i] < 0) {
      opError(ErrorKind::Argument, op, "negative extent in " + shapeToString(shape));
    } else if (__builtin_mul_overflow(known, out[i], &known)) {
      opError(ErrorKind::Argument, op, "total size must be same: " + std::to_string(size) +
                                           " elements into " + shapeToString(shape));
    }
  }
  if (free >= 0) {
    // numpy's rule: the -1 (nil) axis is what the others leave, so where
    // they hold no element (an axis of 0) nothing determines it.
    if (known == 0 || size % known != 0)
      opError(ErrorKind::Argument, op,
              "cannot reshape " + std::to_string(size) + " elements into " +
                  shapeToString(shape) + ": no extent for the -1 (nil) axis");
    out[free] = size / known;
  }
  if (numElements(out) != size)
    opError(ErrorKind::Argument, op,
            "total size must be same: " + std::to_string(size) + " elements into " +
                shapeToString(shape));
  return out;
}

NodeRef reshapeNode(const ArrayHandle &a, llvm::ArrayRef<int64_t> shape) {
  NodeRef v = a.value();
  if (v->isMaterialized()) {
    // Values that lie in row-major order are read where they lie: the
    // reshape is a view of the buffer, and costs nothing now or later.
    if (v->layout().isContiguous())
      return viewOfNode(v, Layout::contiguous(toShape(shape)));
    // A strided view is copied first: row-major order must be addressable.
    v = record(OpKind::Copy, v->dtype(), v->shape(), {v});
  }
  return record(OpKind::Reshape, v->dtype(), shape, {v});
}

Layout transposeLayout(const Layout &a, llvm::ArrayRef<int64_t> axes,
                       std::string_view op) {
  int64_t nd = a.ndim();
  llvm::SmallVector<int64_t, 4> perm;
  if (axes.empty()) {
    for (int64_t d = nd; d-- > 0;)
      perm.push_back(d);
  } else {
    if (int64_t(axes.size()) != nd)
      opError(ErrorKind::Argument, op,
              std::to_string(axes.size()) + " axes for an array of " +
                  std::to_string(nd));
    llvm::SmallVector<bool, 4> used(nd, false);
    for (int64_t ax : axes) {
      int64_t d = ax < 0 ? ax + nd : ax;
      if (d < 0 || d >= nd || used[d])
        opError(ErrorKind::Dimension, op, "bad axis " + std::to_string(ax));
      used[d] = true;
      perm.push_back(d);
    }
  }
  Layout out;
  out.offset = a.offset;
  for (int64_t d : perm) {
    out.shape.push_back(a.shape[d]);
    out.strides.push_back(a.strides[d]);
  }
  return out;
}

} // namespace cumo
