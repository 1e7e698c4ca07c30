#include "ops/join.h"

#include "core/error.h"
#include "ops/creation.h"
#include "ops/layout.h"
#include "ops/record.h"
#include "ops/shape_ops.h"

#include <string>

namespace cumo {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// A part's layout with axes of length one inserted (stride 0) so that it
/// has the rank the join wants.
Layout shapedPart(JoinKind kind, const Layout &l, int64_t axis) {
  Layout out = l;
  auto insertAt = [&](int64_t d) {
    out.shape.insert(out.shape.begin() + d, 1);
    out.strides.insert(out.strides.begin() + d, 0);
  };
  switch (kind) {
  case JoinKind::Concatenate:
  case JoinKind::HStack:
    break;
  case JoinKind::Stack:
    insertAt(axis);
    break;
  case JoinKind::VStack:
    while (out.ndim() < 2)
      insertAt(0);
    break;
  case JoinKind::DStack:
    if (out.ndim() == 0)
      insertAt(0);
    if (out.ndim() == 1)
      insertAt(0);
    if (out.ndim() == 2)
      insertAt(2);
    break;
  case JoinKind::ColumnStack:
    if (out.ndim() == 0)
      insertAt(0);
    if (out.ndim() == 1)
      insertAt(1);
    break;
  }
  return out;
}

} // namespace

NodeRef joinNode(JoinKind kind, llvm::ArrayRef<const ArrayHandle *> parts,
                 DType dtype, int64_t axis, int64_t ndim, std::string_view op) {
  if (parts.empty())
    opError(ErrorKind::Argument, op, "needs at least one array");
  int64_t nd = 0;
  for (const ArrayHandle *p : parts)
    nd = std::max(nd, p->ndim());
  if (kind == JoinKind::Stack) {
    for (const ArrayHandle *p : parts)
      if (p->shape() != parts[0]->shape())
        opError(ErrorKind::Shape, op,
                "all input arrays must have the same shape: " +
                    shapeToString(parts[0]->shape()) + " and " +
                    shapeToString(p->shape()));
    if (axis < -nd - 1 || axis > nd)
      opError(ErrorKind::Argument, op,
              "axis=" + str(axis) + " is invalid for " + str(nd + 1) + " axes");
    if (axis < 0)
      axis += nd + 1;
  }

  // Each part's view, and the rank of the join.
  std::vector<Layout> views;
  for (const ArrayHandle *p : parts) {
    views.push_back(shapedPart(kind, p->layout(), axis));
  }
  int64_t rank = 0;
  for (const Layout &v : views)
    rank = std::max(rank, v.ndim());
  switch (kind) {
  case JoinKind::VStack: axis = 0; break;
  case JoinKind::HStack: axis = rank >= 2 ? 1 : 0; break;
  case JoinKind::DStack: axis = 2; break;
  case JoinKind::ColumnStack: axis = 1; break;
  default: break;
  }
  if (ndim >= 0) {
    // Numo's instance concatenate: the receiver's rank decides.
    for (const Layout &v : views)
      if (v.ndim() > ndim)
        opError(ErrorKind::Shape, op,
                "dimension mismatch: a part of " + str(v.ndim()) +
                    " axes joined to an array of " + str(ndim));
    rank = ndim;
  }
  if (axis < -rank || axis >= rank)
    opError(ErrorKind::Argument, op,
            "axis=" + str(axis) + " is out of range for " + str(rank) + " axes");
  if (axis < 0)
    axis += rank;

  // Leading axes of length one up to the rank; the other axes must agree.
  Shape common;
  int64_t total = 0;
  for (size_t i = 0; i < views.size(); ++i) {
    Layout &v = views[i];
    while (v.ndim() < rank) {
      v.shape.insert(v.shape.begin(), 1);
      v.strides.insert(v.strides.begin(), 0);
    }
    Shape other = v.shape;
    other.erase(other.begin() + axis);
    if (i == 0)
      common = other;
    else if (other != common)
      opError(ErrorKind::Shape, op,
              "shape mismatch: " + shapeToString(parts[0]->shape()) + " and " +
                  shapeToString(parts[i]->shape()) + " along axis " + str(axis));
    total += v.shape[axis];
  }
  Shape shape = common;
  shape.insert(shape.begin() + axis, total);

  ArrayHandle out(fillNode(dtype, shape, Scalar::ofInt(0)));
  int64_t begin = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    int64_t len = views[i].shape[axis];
    if (len == 0)
      continue;
    Layout target = out.layout();
    target.offset += begin * target.strides[axis];
    target.shape[axis] = len;
    ArrayHandle part(parts[i]->storageRef(), views[i]);
    ArrayHandle slot(out.storageRef(), target);
    assignValue(slot, castNode(part.value(), dtype), op);
    begin += len;
  }
  return out.storage().currentRef();
}

} // namespace cumo
