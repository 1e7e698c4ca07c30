// An opaque kernel of a plan as the call its implementation takes: the
// operands' addresses and layouts, the result's address.
#pragma once

#include "fusion/plan.h"
#include "ops/opaque.h"

#include "llvm/ADT/ArrayRef.h"

namespace cumo {

/// `pointers[i]` is the address of plan buffer i (host or device memory,
/// whichever the executor runs on). A kernel with an epilogue stores no
/// result of its own: `out` is left null for the caller to set.
///
/// Sibling index writes (one table, several arrays written) are one call
/// per array: `part` says which, and opaqueParts how many there are.
OpaqueCall opaqueCallOf(const Kernel &k, llvm::ArrayRef<void *> pointers, size_t part = 0);
size_t opaqueParts(const Kernel &k);

} // namespace cumo
