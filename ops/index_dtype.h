// The class of an index result (argmax, max_index, sort_index ...).
#pragma once

#include "core/dtype.h"

#include <cstdint>

namespace cumo {

/// Int32 while every index of an array of `elements` fits a signed 32-bit
/// integer, else Int64. Numo keeps Int32 up to 2**32 - 1 elements
/// (`na->size > (~(u_int32_t)0)` in its accum_index.c), where an index past
/// INT32_MAX wraps negative; an index must never wrap, so ours moves to
/// Int64 one bit sooner.
inline DType indexResultType(int64_t elements) {
  return elements - 1 <= int64_t(INT32_MAX) ? DType::Int32 : DType::Int64;
}

} // namespace cumo
