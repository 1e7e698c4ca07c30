// An opaque kernel of a plan as the call its implementation takes: the
// operands' addresses and layouts, the result's address.
#pragma once

#include "fusion/plan.h"
#include "ops/opaque.h"

#include "llvm/ADT/ArrayRef.h"

namespace cumo {

/// `pointers[i]` is the address of plan buffer i (host or device memory,
/// whichever the executor runs on).
OpaqueCall opaqueCallOf(const Kernel &k, llvm::ArrayRef<void *> pointers);

} // namespace cumo
