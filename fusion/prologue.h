// Prologues: the row operation (layer_norm, rms_norm, softmax) whose result
// is a small product's first operand, computed by the product's own kernel.
// A decode step normalizes its residual stream before each of a layer's two
// weight products and before the LM head, and takes the softmax of each
// head's scores before their product with the values; each was a kernel of
// its own that wrote rows for the product to read back (37 of a GPT-2
// token's kernels).
//
// In the product's kernel each block copies the rows into shared memory,
// folds their statistics from there, a warp a row in the order the row op's
// own kernel folds (ops/row_layout.h: the warp layout), normalizes the
// parts of the rows it reads in place, every thread a share, as the row op
// rounds them, and multiplies from there. The product tiles k as it would
// without the prologue: the same numbers as the two kernels, bit for bit.
// The CPU executor runs the row op's reference and then the product's.
#pragma once

#include "core/op_kind.h"

#include <cstdint>

namespace cumo {

class Node;

/// Shared memory the normalized rows may take (they are M x K of the
/// product's class): 24 KiB, which with the product's own 16 KiB at 16
/// rows stays under the 48 KiB a launch has without asking.
constexpr int64_t kPrologueBytes = 24 * 1024;

/// Row ops a prologue computes.
bool isPrologueOp(OpKind op);

/// Whether row op `x` can be computed inside small product `product`'s
/// kernel as its first operand: `product` reads `x` as it is (its class),
/// a warp folds each of its rows with the row in registers, and a
/// product's rows fit kPrologueBytes. A batch of products (the heads'
/// softmax times their values) only where the matrices lie with rows
/// along k (the thread-per-column layout, whose blocks each take one
/// product of the batch). Who else reads `x` is the schedule's question.
bool fitsPrologue(const Node *x, const Node *product);

} // namespace cumo
