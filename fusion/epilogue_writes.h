// Index writes in a small product's epilogue (fusion/epilogue.h): a decode
// step writes views of its qkv product into the KV cache at a device
// position, `k_cache[true, true, pos, true] = qkv[true, 1, true, true,
// true]`. Run as its own kernel, each layer's pair of writes cost a launch
// and 8% of a GPT-2 token (bench/probes/decode_ablation.rb, H100); in the
// product's epilogue, the thread that computes an element of the product
// writes it where the write's table says, when the element is one of the
// write's values.
//
// The values must be an affine, one-to-one view of one member of the
// epilogue (views and reshapes of it, no arithmetic), so that each element
// of the product is at most one value and the value's coordinates follow
// from the element's flat index by division (orderWriteAxes).
#pragma once

#include "core/shape.h"
#include "fusion/plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace cumo {

class Node;
struct Schedule;

/// Where the values of an index write lie among a member's elements:
/// value c is element offset + sum(c[d] * strides[d]) of `member`, in its
/// row-major order.
struct WriteView {
  const Node *member = nullptr;
  int64_t offset = 0;
  Strides strides;
};

/// The view `values` is of the first node down its chain of views and
/// reshapes (pending nodes of `s`) for which `isMember` holds; none when
/// the chain holds anything else or is not affine (a view of a reshape's
/// elements that the reshape's row-major order does not keep).
std::optional<WriteView> writeViewOf(const Schedule &s, const Node *values,
                                     llvm::function_ref<bool(const Node *)> isMember);

/// Fills `out`'s extents, view strides and table strides from the values'
/// `shape`, their view strides (WriteView) and the table's strides: axes
/// of one element dropped, the rest ordered by view stride, largest first,
/// and neighbours that step together through both merged. False when the
/// view is not one to one (a stride not larger than what the axes after
/// it span) or the write is empty.
bool orderWriteAxes(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> viewStrides,
                    llvm::ArrayRef<int64_t> tableStrides, TableWrite &out);

/// Whether index write `w` can join the epilogue of the product whose
/// kernel runs at `stage`, as a write of a member's view (`isMember`): it
/// writes into its settled base's buffer (Facts::inPlace), its table is in
/// a buffer by then (or settled and contiguous), and its positions cannot
/// repeat (a device table's repeats need a search for the last write,
/// which the index kernel does). Answers the member its values view.
const Node *writeJoinsEpilogue(const Schedule &s, uint32_t w, int stage,
                               llvm::function_ref<bool(const Node *)> isMember);

} // namespace cumo
