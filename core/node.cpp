#include "core/node.h"

#include "core/pending.h"

namespace cumo {

Node::~Node() {
  // A pending node nobody can reach any more leaves the pending set. (Its
  // inputs are released recursively; pending chains are bounded by the
  // pending budget, so the recursion is too.)
  if (pendingIndex != kNotPending)
    PendingList::get().remove(this);
}

void Node::materialize(Ref<Buffer> buffer, Layout layout) {
  buffer_ = std::move(buffer);
  layout_ = std::move(layout);
  state_ = State::Materialized;
  inputs_.clear();
  extra_.reset();
}

void Node::materializeContiguous(Ref<Buffer> buffer) {
  buffer_ = std::move(buffer);
  layout_.setContiguous(shape_);
  state_ = State::Materialized;
  inputs_.clear();
  extra_.reset();
}

NodeRef makeBufferNode(DType dtype, Ref<Buffer> buffer, Layout layout) {
  NodeRef n(new Node(OpKind::Buffer, dtype, layout.shape));
  n->materialize(std::move(buffer), std::move(layout));
  return n;
}

} // namespace cumo
