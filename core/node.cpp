#include "core/node.h"

#include "core/error.h"
#include "core/pending.h"

namespace cumo {

void Node::tooLarge() const {
  opError(ErrorKind::Argument, std::string(opName(op_)),
          "the array is too large: shape " + shapeToString(shape_) + " of Cumo::" +
              std::string(nameOf(dtype_)) + " has more elements or bytes than 2**63");
}

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
