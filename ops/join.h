// Joining arrays: Numo's concatenate and its stacking relatives, and
// numpy's stack. The result is a fresh array written part by part with
// assignValue, so each part is an Update of one base whose box the fusion
// pass folds into a single kernel.
#pragma once

#include "core/array.h"

#include "llvm/ADT/ArrayRef.h"

#include <string_view>

namespace cumo {

/// How the parts are shaped before they are joined.
enum class JoinKind : uint8_t {
  Concatenate, ///< as they are (fewer axes gain leading axes of length one)
  Stack,       ///< numpy's stack: equal shapes, joined along a new axis
  VStack,      ///< at least 2-D ([n] -> [1, n]), along axis 0
  HStack,      ///< along axis 1, or axis 0 when every part is 1-D
  DStack,      ///< at least 3-D ([n] -> [1, n, 1], [m, n] -> [m, n, 1]), axis 2
  ColumnStack, ///< 1-D parts as columns ([n] -> [n, 1]), along axis 1
};

/// Joins `parts` into a new array of class `dtype` (each part converted to
/// it). `axis` is used by Concatenate and Stack. `ndim`, when not -1, is
/// the receiver's rank for Numo's instance concatenate, which a part may
/// not exceed. ShapeError when the other axes disagree; ArgumentError for
/// an axis out of range, as Numo raises.
NodeRef joinNode(JoinKind kind, llvm::ArrayRef<const ArrayHandle *> parts,
                 DType dtype, int64_t axis, int64_t ndim, std::string_view op);

} // namespace cumo
