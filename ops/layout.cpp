#include "ops/layout.h"

#include "core/error.h"
#include "ops/creation.h"
#include "ops/record.h"
#include "ops/shape_ops.h"

#include <string>

namespace cumo {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// Numo's check_axis of lib/numo/narray/extra.rb (split, repeat,
/// concatenate): ArgumentError rather than DimensionError.
int64_t rubyCheckAxis(int64_t axis, int64_t ndim, std::string_view op) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    opError(ErrorKind::Argument, op,
            "axis=" + str(axis) + " is invalid for an array of " + str(ndim) +
                " axes");
  return a;
}

/// `a` with the part [begin, begin + count) of axis `axis`.
Layout sliceAxis(const Layout &a, int64_t axis, int64_t begin, int64_t count) {
  Layout out = a;
  out.offset += begin * a.strides[axis];
  out.shape[axis] = count;
  return out;
}

/// A copy of what `l` (over `a`'s storage) sees, in row-major order under
/// `shape`.
NodeRef copyReshaped(const ArrayHandle &a, const Layout &l,
                     llvm::ArrayRef<int64_t> shape) {
  ArrayHandle view(a.storageRef(), l);
  return reshapeNode(view, shape);
}

} // namespace

int64_t normalizeAxis(int64_t axis, int64_t ndim, std::string_view op) {
  if (axis < -ndim || axis >= ndim)
    opError(ErrorKind::Dimension, op,
            "invalid axis (" + str(axis) + " for " + str(ndim) + "-dimension)");
  return axis < 0 ? axis + ndim : axis;
}

Layout swapaxesLayout(const Layout &a, int64_t axis1, int64_t axis2) {
  int64_t i = normalizeAxis(axis1, a.ndim(), "swapaxes");
  int64_t j = normalizeAxis(axis2, a.ndim(), "swapaxes");
  Layout out = a;
  std::swap(out.shape[i], out.shape[j]);
  std::swap(out.strides[i], out.strides[j]);
  return out;
}

Layout expandDimsLayout(const Layout &a, int64_t axis) {
  int64_t nd = a.ndim();
  if (axis < -nd - 1 || axis > nd)
    opError(ErrorKind::Dimension, "expand_dims",
            "invalid axis (" + str(axis) + " for " + str(nd) + "D NArray)");
  int64_t d = axis < 0 ? axis + nd + 1 : axis;
  Layout out = a;
  out.shape.insert(out.shape.begin() + d, 1);
  out.strides.insert(out.strides.begin() + d, 0);
  return out;
}

Layout squeezeLayout(const Layout &a, llvm::ArrayRef<int64_t> axes) {
  int64_t nd = a.ndim();
  llvm::SmallVector<bool, 4> drop(nd, false);
  if (axes.empty()) {
    for (int64_t d = 0; d < nd; ++d)
      drop[d] = a.shape[d] == 1;
  } else {
    for (int64_t ax : axes) {
      int64_t d = normalizeAxis(ax, nd, "squeeze");
      if (drop[d])
        opError(ErrorKind::Argument, "squeeze", "axis " + str(ax) + " given twice");
      if (a.shape[d] != 1)
        opError(ErrorKind::Shape, "squeeze",
                "axis " + str(ax) + " has length " + str(a.shape[d]) + ", not 1");
      drop[d] = true;
    }
  }
  Layout out;
  out.offset = a.offset;
  for (int64_t d = 0; d < nd; ++d) {
    if (drop[d])
      continue;
    out.shape.push_back(a.shape[d]);
    out.strides.push_back(a.strides[d]);
  }
  return out;
}

Layout reverseLayout(const Layout &a, llvm::ArrayRef<int64_t> axes,
                     std::string_view op) {
  int64_t nd = a.ndim();
  llvm::SmallVector<bool, 4> flip(nd, axes.empty());
  for (int64_t ax : axes) {
    int64_t d = ax < 0 ? ax + nd : ax;
    if (d < 0 || d >= nd)
      opError(ErrorKind::Dimension, op,
              "dimension is out of range: " + str(ax) + " for " + str(nd) +
                  "-dimension");
    flip[d] = true;
  }
  Layout out = a;
  for (int64_t d = 0; d < nd; ++d) {
    if (!flip[d] || a.shape[d] == 0)
      continue;
    out.offset += (a.shape[d] - 1) * a.strides[d];
    out.strides[d] = -a.strides[d];
  }
  return out;
}

Layout diagonalLayout(const Layout &a, int64_t offset,
                      std::optional<std::pair<int64_t, int64_t>> axes,
                      std::string_view op) {
  int64_t nd = a.ndim();
  if (nd < 2)
    opError(ErrorKind::Dimension, op, "less than 2-d array");
  int64_t ax0 = nd - 2, ax1 = nd - 1;
  if (axes) {
    auto [p, q] = *axes;
    if (p < -nd || p >= nd || q < -nd || q >= nd)
      opError(ErrorKind::Argument, op,
              "axis out of range:[" + str(p) + "," + str(q) + "]");
    ax0 = p < 0 ? p + nd : p;
    ax1 = q < 0 ? q + nd : q;
    if (ax0 == ax1)
      opError(ErrorKind::Argument, op, "same axes:[" + str(p) + "," + str(q) + "]");
  }
  int64_t k0 = offset < 0 ? -offset : 0;
  int64_t k1 = offset > 0 ? offset : 0;
  if (k1 >= a.shape[ax1] && offset >= 0)
    opError(ErrorKind::Argument, op,
            "invalid diagonal offset(" + str(offset) + ") for last dimension size(" +
                str(a.shape[ax1]) + ")");
  if (k0 >= a.shape[ax0] && offset < 0)
    opError(ErrorKind::Argument, op,
            "invalid diagonal offset(" + str(offset) +
                ") for last-1 dimension size(" + str(a.shape[ax0]) + ")");
  int64_t n = std::min(a.shape[ax0] - k0, a.shape[ax1] - k1);
  Layout out;
  out.offset = a.offset + k0 * a.strides[ax0] + k1 * a.strides[ax1];
  for (int64_t d = 0; d < nd; ++d) {
    if (d == ax0 || d == ax1)
      continue;
    out.shape.push_back(a.shape[d]);
    out.strides.push_back(a.strides[d]);
  }
  out.shape.push_back(n);
  out.strides.push_back(a.strides[ax0] + a.strides[ax1]);
  return out;
}

Layout rot90Layout(const Layout &a, int64_t k, int64_t axis0, int64_t axis1) {
  int64_t nd = a.ndim();
  // Numo checks through swapaxes and reverse; check both axes up front so
  // that every k raises for the same bad call.
  int64_t p = normalizeAxis(axis0, nd, "rot90");
  int64_t q = normalizeAxis(axis1, nd, "rot90");
  if (p == q)
    opError(ErrorKind::Argument, "rot90", "same axes:[" + str(axis0) + "," +
                                              str(axis1) + "]");
  switch (((k % 4) + 4) % 4) {
  case 1:
    return reverseLayout(swapaxesLayout(a, p, q), {p}, "rot90");
  case 2:
    return reverseLayout(a, {p, q}, "rot90");
  case 3:
    return reverseLayout(swapaxesLayout(a, p, q), {q}, "rot90");
  default:
    return a;
  }
}

std::vector<Layout> splitLayouts(const Layout &a, int64_t sections, int64_t axis,
                                 std::string_view op) {
  int64_t d = rubyCheckAxis(axis, a.ndim(), op);
  if (sections < 1)
    opError(ErrorKind::Argument, op,
            "number of sections must be positive, not " + str(sections));
  int64_t n = a.shape[d];
  int64_t each = n / sections, extra = n % sections;
  std::vector<Layout> parts;
  int64_t begin = 0;
  for (int64_t i = 0; i < sections; ++i) {
    int64_t len = each + (i < extra ? 1 : 0);
    parts.push_back(sliceAxis(a, d, begin, len));
    begin += len;
  }
  return parts;
}

std::vector<Layout> splitLayoutsAt(const Layout &a, llvm::ArrayRef<int64_t> indices,
                                   int64_t axis, std::string_view op) {
  int64_t d = rubyCheckAxis(axis, a.ndim(), op);
  int64_t n = a.shape[d];
  auto clamp = [n](int64_t i) {
    if (i < 0)
      i += n;
    return std::min(std::max<int64_t>(i, 0), n);
  };
  std::vector<Layout> parts;
  int64_t begin = 0;
  for (size_t i = 0; i <= indices.size(); ++i) {
    int64_t end = i < indices.size() ? clamp(indices[i]) : n;
    int64_t b = std::min(begin, n);
    parts.push_back(sliceAxis(a, d, b, std::max<int64_t>(end - b, 0)));
    begin = std::max(begin, end);
  }
  return parts;
}

NodeRef tileNode(const ArrayHandle &a, llvm::ArrayRef<int64_t> reps) {
  for (int64_t r : reps)
    if (r < 1)
      opError(ErrorKind::Argument, "tile",
              "argument should be positive integer, not " + str(r));
  const Layout &l = a.layout();
  int64_t nd = l.ndim(), ns = int64_t(reps.size());
  // Numo's tile: every repetition is an axis of stride 0 before the axis it
  // repeats, and the copy merges the pairs.
  Layout view;
  view.offset = l.offset;
  Shape result;
  auto add = [&](int64_t n, int64_t stride) {
    view.shape.push_back(n);
    view.strides.push_back(stride);
  };
  for (int64_t i = 0; i < nd - ns; ++i) {
    add(l.shape[i], l.strides[i]);
    result.push_back(l.shape[i]);
  }
  for (int64_t i = 0; i < ns - nd; ++i) {
    add(reps[i], 0);
    result.push_back(reps[i]);
  }
  int64_t firstAxis = std::max<int64_t>(nd - ns, 0);
  int64_t firstRep = std::max<int64_t>(ns - nd, 0);
  for (int64_t i = 0; i < std::min(nd, ns); ++i) {
    int64_t m = reps[firstRep + i], d = firstAxis + i;
    add(m, 0);
    add(l.shape[d], l.strides[d]);
    result.push_back(m * l.shape[d]);
  }
  return copyReshaped(a, view, result);
}

NodeRef repeatNode(const ArrayHandle &a, int64_t count, std::optional<int64_t> axis) {
  if (count < 1)
    opError(ErrorKind::Argument, "repeat",
            "argument should be positive integer, not " + str(count));
  if (!axis) {
    // The flattened array, each element `count` times.
    ArrayHandle flat(reshapeNode(a, {a.size()}));
    return repeatNode(flat, count, 0);
  }
  int64_t d = rubyCheckAxis(*axis, a.ndim(), "repeat");
  Layout view = a.layout();
  view.shape.insert(view.shape.begin() + d + 1, count);
  view.strides.insert(view.strides.begin() + d + 1, 0);
  Shape result = toShape(a.shape());
  result[d] *= count;
  return copyReshaped(a, view, result);
}

NodeRef repeatNode(const ArrayHandle &a, llvm::ArrayRef<int64_t> counts,
                   std::optional<int64_t> axis) {
  if (!axis) {
    ArrayHandle flat(reshapeNode(a, {a.size()}));
    return repeatNode(flat, counts, 0);
  }
  int64_t d = rubyCheckAxis(*axis, a.ndim(), "repeat");
  if (int64_t(counts.size()) != a.shape()[d])
    opError(ErrorKind::Argument, "repeat",
            "repeat size should be equal to size along axis: " +
                str(counts.size()) + " counts for length " + str(a.shape()[d]));
  int64_t total = 0;
  for (int64_t c : counts) {
    if (c < 0)
      opError(ErrorKind::Argument, "repeat",
              "argument should be non-negative integer, not " + str(c));
    total += c;
  }
  Shape shape = toShape(a.shape());
  shape[d] = total;
  ArrayHandle out(emptyNode(a.dtype(), shape));
  int64_t begin = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0)
      continue;
    // Element i along the axis, seen `counts[i]` times.
    Layout src = sliceAxis(a.layout(), d, int64_t(i), counts[i]);
    src.strides[d] = 0;
    ArrayHandle part(a.storageRef(), src);
    ArrayHandle target(out.storageRef(),
                       sliceAxis(out.layout(), d, begin, counts[i]));
    assignValue(target, part.value(), "repeat");
    begin += counts[i];
  }
  return out.storage().currentRef();
}

} // namespace cumo
