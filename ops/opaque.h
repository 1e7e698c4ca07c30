// Opaque ops: ops each executor computes with an implementation of its own
// (a scan, a sort, a library call) rather than with fused element code.
// This is the CPU side: the call as the executors hand it over, and the
// reference implementations the CPU executor runs and the CUDA ones are
// compared with.
#pragma once

#include "core/dtype.h"
#include "core/op_kind.h"
#include "core/scalar.h"
#include "core/shape.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <string_view>

namespace cumo {

/// One operand, where it lies: element (c0, c1, ...) is at
/// data[offset + sum(ci * strides[i])].
struct OpaqueOperand {
  const void *data = nullptr;
  DType dtype = DType::DFloat;
  Shape shape;
  Strides strides;
  int64_t offset = 0;
};

struct OpaqueCall {
  OpKind op = OpKind::Copy;
  Scalar scalar;                  ///< an attribute (eps)
  llvm::ArrayRef<int64_t> ints;   ///< integer attributes (axes)
  llvm::SmallVector<OpaqueOperand, 2> operands;
  void *out = nullptr;            ///< the result, contiguous
  DType outDtype = DType::DFloat;
  Shape outShape;
  /// The device's error words (Device::errorWord), where a check that
  /// needs the operands' values sets its bit (an index out of range) and
  /// leaves `checkTag` if it is the smallest there.
  uint32_t *errorWord = nullptr;
  uint32_t checkTag = ~0u;
};

/// Computes `call` on the host (the CPU executor, and the reference).
void runOpaqueReference(const OpaqueCall &call);

/// How Cumo.explain names a kernel of this op: "scan", "library" ...
std::string_view opaqueKindName(OpKind op);

} // namespace cumo
