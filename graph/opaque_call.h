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
///
/// With a prologue (fusion/prologue.h) the call is the product's, its first
/// operand still the row op's input: the caller runs prologueCallOf first
/// and hands the product the normalized rows.
OpaqueCall opaqueCallOf(const Kernel &k, llvm::ArrayRef<void *> pointers, size_t part = 0);
size_t opaqueParts(const Kernel &k);

/// A prologue's row op as its own call: the input, gamma (and beta), the
/// result into the prologue's store (null when the plan stores none, or
/// the engine dropped it: the caller puts it somewhere).
OpaqueCall prologueCallOf(const Kernel &k, llvm::ArrayRef<void *> pointers);

} // namespace cumo
