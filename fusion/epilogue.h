// Epilogues: the elementwise consumers of a small matrix product computed
// by the product's own kernel, where it writes each element. A decode step
// writes `h.dot(w) + b`, `gelu_tanh(h.dot(fc_w) + fc_b)` and
// `x + (h.dot(proj_w) + proj_b)`: without an epilogue each is a product
// kernel and an elementwise kernel that reads the product back.
//
// The product is one the GPU computes with the generated matrix-vector
// kernel (ops/matmul.h, isSmallProduct); a cuBLAS product keeps its
// consumers in a kernel of their own. A member is an elementwise node of
// the product's shape that reads the product or another member (so at the
// same element: the identity map) and reads everything else at the stage
// the product's kernel runs (a bias along the last axis, a residual of the
// same shape, a scalar, anything that does not depend on the product).
// Members compute what was written, in the user's dtypes, from the
// product's value as the op rounds it. An index write of a member's view
// (a decode step's cache write) is a member too: the kernel writes the
// member's elements where the write's table says (fusion/epilogue_writes.h).
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace cumo {

class Node;
struct Schedule;

/// Whether `n` is a product an epilogue can follow.
bool takesEpilogue(const Node *n);

/// The members of small product `product`'s epilogue (indices into
/// `s.nodes`, in recording order, at most `maxMembers`), given the facts as
/// they stand and `readers[i]`, the nodes that read node i. A consumer
/// joins only where it pays: when it needs a buffer anyway (Ruby holds it,
/// or a reader needs its buffer) or a member that joins reads it. A
/// consumer that later kernels would compute inline stays inline. Empty:
/// no epilogue.
llvm::SmallVector<uint32_t, 4>
findEpilogue(const Schedule &s, uint32_t product,
             llvm::ArrayRef<llvm::SmallVector<uint32_t, 2>> readers, int maxMembers);

} // namespace cumo
