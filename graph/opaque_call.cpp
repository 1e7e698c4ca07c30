#include "graph/opaque_call.h"

namespace cumo {

size_t opaqueParts(const Kernel &k) {
  return k.opaqueOp == OpKind::IndexWrite && !k.hasEpilogue() ? k.stores.size() : 1;
}

namespace {
OpaqueOperand operandOf(const Kernel &k, llvm::ArrayRef<void *> pointers, size_t i) {
  const Load &l = k.operands[i];
  OpaqueOperand o;
  o.data = pointers[l.buffer];
  o.dtype = l.dtype;
  o.shape = k.operandShapes[i];
  o.strides = l.index.strides;
  o.offset = l.index.offset;
  return o;
}
} // namespace

OpaqueCall opaqueCallOf(const Kernel &k, llvm::ArrayRef<void *> pointers, size_t part) {
  OpaqueCall call;
  call.op = k.opaqueOp;
  call.scalar = k.opaqueScalar;
  call.ints = k.opaqueInts;
  call.checkTag = k.checkTag;
  // A sibling write's operands: the shared table, then its own values; a
  // product with a prologue has its two (the row op's follow).
  llvm::SmallVector<size_t, 3> which;
  if (opaqueParts(k) > 1)
    which = {0, 1 + part};
  else
    for (size_t i = 0; i < (k.hasPrologue() ? 2 : k.operands.size()); ++i)
      which.push_back(i);
  for (size_t i : which)
    call.operands.push_back(operandOf(k, pointers, i));
  call.outDtype = k.opaqueDtype;
  call.outShape = k.domain;
  // With an epilogue the result goes where the caller puts it.
  if (!k.hasEpilogue()) {
    const Store &s = k.stores[part];
    call.out = static_cast<char *>(pointers[s.buffer]) + s.index.offset * sizeOf(s.dtype);
  }
  return call;
}

OpaqueCall prologueCallOf(const Kernel &k, llvm::ArrayRef<void *> pointers) {
  OpaqueCall call;
  call.op = k.prologue.op;
  call.scalar = k.prologue.eps;
  call.operands.push_back(operandOf(k, pointers, 0));
  for (size_t i = 2; i < k.operands.size(); ++i)
    call.operands.push_back(operandOf(k, pointers, i));
  call.outDtype = k.operands[0].dtype;
  call.outShape = k.operandShapes[0];
  if (k.prologue.stored && pointers[k.prologue.out.buffer]) {
    const Store &s = k.prologue.out;
    call.out = static_cast<char *>(pointers[s.buffer]) + s.index.offset * sizeOf(s.dtype);
  }
  return call;
}

} // namespace cumo
