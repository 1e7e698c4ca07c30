// A node of the expression DAG: one op with its inputs, dtype and shape,
// checked and inferred when it was recorded. A pending node waits to be
// computed; a materialized one holds a buffer and a layout and has dropped
// its inputs, so history never chains (DESIGN.md, "What gets materialized").
//
// Nodes are built only by the op functions in ops/, which check arguments
// first; the node assumes its fields are consistent.
#pragma once

#include "core/affine_map.h"
#include "core/buffer.h"
#include "core/dtype.h"
#include "core/free_list.h"
#include "core/op_kind.h"
#include "core/scalar.h"
#include "core/shape.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <string>

namespace cumo {

class Node;
using NodeRef = Ref<Node>;

/// Attributes only some ops carry, allocated only for them.
struct NodeExtra {
  AffineMap view;          ///< View: node coords -> input coords
  Layout flat;             ///< View (flat mode): over the input's flat order
  bool flatView = false;   ///< View: use `flat` instead of `view`
  Layout target;           ///< Update: where the value lands in the base
  llvm::SmallVector<int64_t, 4> axes; ///< Reduce: sorted, in range
  bool keepdims = false;   ///< Reduce
  /// The host line that recorded an op whose failure surfaces later (an
  /// integer division by zero), for the error raised at the next read.
  std::string recordedAt;
  // Every view and update records one: recycled like nodes.
  CUMO_FREE_LIST_ALLOCATED(NodeExtra)
};

class Node : public RefCounted<Node> {
public:
  enum class State : uint8_t { Pending, Materialized };

  /// Throws ArgumentError (naming `op`) where the shape's size or bytes
  /// overflow int64: every array's shape passes here.
  Node(OpKind op, DType dtype, llvm::ArrayRef<int64_t> shape)
      : op_(op), dtype_(dtype), shape_(shape.begin(), shape.end()) {
    if (!sizeFits(shape, sizeOf(dtype)))
      tooLarge();
  }
  ~Node();
  CUMO_FREE_LIST_ALLOCATED(Node)

  OpKind op() const { return op_; }
  DType dtype() const { return dtype_; }
  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  int64_t size() const { return numElements(shape_); }
  int64_t ndim() const { return int64_t(shape_.size()); }
  size_t bytes() const { return size_t(size()) * sizeOf(dtype_); }

  bool isPending() const { return state_ == State::Pending; }
  bool isMaterialized() const { return state_ == State::Materialized; }

  llvm::ArrayRef<NodeRef> inputs() const { return inputs_; }
  Node *input(size_t i) const { return inputs_[i].get(); }
  void addInput(NodeRef n) { inputs_.push_back(std::move(n)); }

  /// Fill: the value; Seq: the start; Rand: the low end.
  Scalar scalar;
  /// Seq: the step; Rand: the high end.
  Scalar scalar2;
  /// Rand: the generator's key and the counter of the first element.
  uint64_t seed = 0, counter = 0;

  NodeExtra &extra() {
    if (!extra_)
      extra_.reset(new NodeExtra); // every member has its initializer: no
                                   // zero-fill of the whole block first
    return *extra_;
  }
  const NodeExtra &extra() const { return *extra_; }
  bool hasExtra() const { return bool(extra_); }

  /// Materialized state: the values live in `buffer` at `layout`.
  const Ref<Buffer> &buffer() const { return buffer_; }
  const Layout &layout() const { return layout_; }
  /// Turns the node into a materialized one and drops its inputs.
  void materialize(Ref<Buffer> buffer, Layout layout);
  /// materialize with the contiguous layout of the node's shape, built in
  /// place (what a flush does for every node it stores).
  void materializeContiguous(Ref<Buffer> buffer);

  /// How many storages with live Ruby wrappers hold this node as their
  /// current value. A wrapped node is stored when its kernel runs; an
  /// unwrapped one can stay in registers.
  uint32_t wrappers = 0;
  bool isWrapped() const { return wrappers != 0; }

  /// Position in the pending list, or kNotPending.
  static constexpr uint32_t kNotPending = ~0u;
  uint32_t pendingIndex = kNotPending;
  /// Recording order, for stable plans.
  uint64_t serial = 0;
  /// Where the node stands in the flush being planned: valid while
  /// flushEpoch equals the engine's current flush (no map lookups on the
  /// hot path).
  uint64_t flushEpoch = 0;
  uint32_t flushPos = 0;

private:
  [[noreturn]] void tooLarge() const;
  OpKind op_;
  DType dtype_;
  State state_ = State::Pending;
  Shape shape_;
  llvm::SmallVector<NodeRef, 2> inputs_;
  std::unique_ptr<NodeExtra> extra_;
  Ref<Buffer> buffer_;
  Layout layout_;
};

/// A materialized node over an existing buffer (uploads, views of
/// materialized arrays).
NodeRef makeBufferNode(DType dtype, Ref<Buffer> buffer, Layout layout);

} // namespace cumo
