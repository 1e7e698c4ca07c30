// Layout methods: new layouts over the same storage (views, as Numo's are:
// writes through them reach the array they came from) and the copies built
// from broadcast views (tile, repeat). Every function checks its arguments
// and raises with the op's name in brackets, with the class Numo raises.
#pragma once

#include "core/array.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cumo {

/// `axis` counted from the front (a negative one from the end) among
/// `ndim` axes; DimensionError naming `op` outside them.
int64_t normalizeAxis(int64_t axis, int64_t ndim, std::string_view op);

/// `a` with axes `axis1` and `axis2` exchanged (swapaxes).
Layout swapaxesLayout(const Layout &a, int64_t axis1, int64_t axis2);

/// `a` with a new axis of length one before axis `axis` (expand_dims; -1
/// appends one).
Layout expandDimsLayout(const Layout &a, int64_t axis);

/// `a` without the axes of length one in `axes` (all of them when empty).
/// An axis listed that is not of length one is a ShapeError.
Layout squeezeLayout(const Layout &a, llvm::ArrayRef<int64_t> axes);

/// `a` read backwards along `axes` (all of them when empty): negative
/// strides (reverse, flip).
Layout reverseLayout(const Layout &a, llvm::ArrayRef<int64_t> axes,
                     std::string_view op);

/// The diagonal `offset` (above the main one when positive) of axes
/// `axis1` and `axis2` (the last two by default), as Numo's diagonal: the
/// other axes first, the diagonal last.
Layout diagonalLayout(const Layout &a, int64_t offset,
                      std::optional<std::pair<int64_t, int64_t>> axes,
                      std::string_view op);

/// rot90(k, axes) as Numo composes it from swapaxes and reverse.
Layout rot90Layout(const Layout &a, int64_t k, int64_t axis0, int64_t axis1);

/// The parts split(n) answers: n parts along `axis`, the first size % n of
/// them one longer.
std::vector<Layout> splitLayouts(const Layout &a, int64_t sections, int64_t axis,
                                 std::string_view op);
/// The parts split([i, j, ...]) answers: [0, i), [i, j), ..., [last, end),
/// each bound clamped to the axis (a negative one counts from its end), an
/// empty part where a bound does not move forward.
std::vector<Layout> splitLayoutsAt(const Layout &a, llvm::ArrayRef<int64_t> indices,
                                   int64_t axis, std::string_view op);

/// a.tile(*reps): a copy of `a` repeated `reps` times along each axis (more
/// reps than axes add leading axes), built from a broadcast view.
NodeRef tileNode(const ArrayHandle &a, llvm::ArrayRef<int64_t> reps);

/// a.repeat(count, axis:): each element `count` times along `axis` (the
/// flattened array when absent), a copy of a broadcast view.
NodeRef repeatNode(const ArrayHandle &a, int64_t count, std::optional<int64_t> axis);
/// a.repeat([c0, c1, ...], axis:): element i counts[i] times, written slice
/// by slice into a fresh array.
NodeRef repeatNode(const ArrayHandle &a, llvm::ArrayRef<int64_t> counts,
                   std::optional<int64_t> axis);

} // namespace cumo
