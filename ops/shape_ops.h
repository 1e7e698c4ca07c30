// Ops that change how elements are arranged: broadcasts, reshapes and
// transposes.
#pragma once

#include "core/array.h"

#include <string_view>

namespace cumo {

/// `v` seen with `shape`, by numpy's broadcasting rules (ShapeError naming
/// `op` when it does not broadcast). Costs nothing: a view.
NodeRef broadcastNode(const NodeRef &v, llvm::ArrayRef<int64_t> shape,
                      std::string_view op);

/// A shape with one -1 resolved against `size` (ArgumentError when the
/// sizes differ).
Shape resolveShape(llvm::ArrayRef<int64_t> shape, int64_t size, std::string_view op);

/// The elements of `a` in row-major order under `shape`: a new array.
NodeRef reshapeNode(const ArrayHandle &a, llvm::ArrayRef<int64_t> shape);

/// `a`'s layout with its axes permuted (`axes` empty: reversed).
Layout transposeLayout(const Layout &a, llvm::ArrayRef<int64_t> axes,
                       std::string_view op);

} // namespace cumo
