#include "graph/opaque_call.h"

namespace cumo {

OpaqueCall opaqueCallOf(const Kernel &k, llvm::ArrayRef<void *> pointers) {
  OpaqueCall call;
  call.op = k.opaqueOp;
  call.scalar = k.opaqueScalar;
  call.ints = k.opaqueInts;
  call.checkTag = k.checkTag;
  for (size_t i = 0; i < k.operands.size(); ++i) {
    const Load &l = k.operands[i];
    OpaqueOperand o;
    o.data = pointers[l.buffer];
    o.dtype = l.dtype;
    o.shape = k.operandShapes[i];
    o.strides = l.index.strides;
    o.offset = l.index.offset;
    call.operands.push_back(std::move(o));
  }
  call.outDtype = k.opaqueDtype;
  call.outShape = k.domain;
  // With an epilogue the result goes where the caller puts it.
  if (!k.hasEpilogue()) {
    const Store &s = k.stores[0];
    call.out = static_cast<char *>(pointers[s.buffer]) + s.index.offset * sizeOf(s.dtype);
  }
  return call;
}

} // namespace cumo
