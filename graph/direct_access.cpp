#include "graph/direct_access.h"

#include "core/error.h"
#include "graph/engine.h"
#include "ops/record.h"

namespace cumo {

namespace {

/// Whether another array can see `n`'s values: the node held by more than
/// its storage (another array's value), its buffer by more than the node
/// (a reshape's view of it), or the buffer not the node's own whole
/// row-major block.
bool sharedValue(const Node &n) {
  return n.useCount() != 1 || !n.buffer() || n.buffer()->useCount() != 1 ||
         n.buffer()->internal() || !n.layout().isWhole(n.size());
}

void checkAccess(const ArrayHandle &a, const char *op) {
  if (a.dtype() == DType::Bit)
    opError(ErrorKind::Type, op,
            "Cumo::Bit packs its elements: it has no element memory to hand over");
  if (!a.layout().isContiguous())
    opError(ErrorKind::Argument, op,
            "the array must be contiguous (a stepped or transposed view is not: dup it first)");
}

ElementMemory memoryOf(const ArrayHandle &a, const Node &n) {
  size_t e = sizeOf(a.dtype());
  return {n.buffer(), size_t(n.layout().offset + a.layout().offset) * e, size_t(a.size()) * e};
}

/// Gives `s` a copy of its value as its current node, materialized.
void giveOwnValue(Storage &s, Engine &engine) {
  NodeRef copy = record(OpKind::Copy, s.dtype(), s.shape(), {s.currentRef()});
  s.setCurrent(copy); // wrapped through the storage's handles: stored by the flush
  engine.flush();
}

} // namespace

ElementMemory stridedElements(ArrayHandle &a, const char *op, bool forWrite) {
  if (a.dtype() == DType::Bit)
    opError(ErrorKind::Type, op,
            "Cumo::Bit packs its elements: it has no element memory to hand over");
  Engine &engine = Engine::get();
  engine.flush();
  Storage &s = a.storage();
  const Node *n = s.current();
  // The handle's strides address the storage's flat row-major order: the
  // value must lie that way (whole), and be its own when written.
  if (!n->isMaterialized() || !n->buffer() || !n->layout().isWhole(n->size()) ||
      (forWrite && sharedValue(*n)))
    giveOwnValue(s, engine);
  n = s.current();
  if (!n->isMaterialized() || !n->layout().isWhole(n->size()))
    throw Error(ErrorKind::Internal, std::string("[") + op + "] no whole value after a copy");
  ElementMemory m = memoryOf(a, *n);
  m.bytes = 0;
  return m;
}

ElementMemory readableElements(ArrayHandle &a, const char *op) {
  checkAccess(a, op);
  Engine &engine = Engine::get();
  engine.flush();
  Storage &s = a.storage();
  const Node *n = s.current();
  if (!n->isMaterialized() || !n->buffer() || !n->layout().isContiguous())
    giveOwnValue(s, engine); // a strided materialized view: a row-major copy
  n = s.current();
  if (!n->isMaterialized() || !n->layout().isContiguous())
    throw Error(ErrorKind::Internal,
                std::string("[") + op + "] no contiguous memory after a flush");
  return memoryOf(a, *n);
}

ElementMemory writableElements(ArrayHandle &a, const char *op) {
  checkAccess(a, op);
  Engine &engine = Engine::get();
  // Whatever is pending may read the old values (and an array never
  // written gets its memory here).
  engine.flush();
  Storage &s = a.storage();
  if (!s.current()->isMaterialized() || sharedValue(*s.current()))
    giveOwnValue(s, engine);
  const Node &n = *s.current();
  if (!n.isMaterialized() || sharedValue(n))
    throw Error(ErrorKind::Internal, std::string("[") + op + "] no memory of its own after a copy");
  return memoryOf(a, n);
}

} // namespace cumo
