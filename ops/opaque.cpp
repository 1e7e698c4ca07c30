#include "ops/opaque.h"

#include "core/error.h"
#include "ops/fancy_index.h"
#include "ops/matmul.h"
#include "ops/row_ops.h"
#include "ops/scan.h"
#include "ops/sort.h"

namespace cumo {

void runOpaqueReference(const OpaqueCall &call) {
  switch (call.op) {
  case OpKind::CumSum:
  case OpKind::CumProd:
    return scanReference(call);
  case OpKind::Sort:
  case OpKind::SortIndex:
  case OpKind::SortedMedian:
    return sortReference(call);
  case OpKind::Gather:
  case OpKind::IndexWrite:
    return fancyIndexReference(call);
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
  case OpKind::Softmax:
    return rowOpReference(call);
  case OpKind::MatMul:
    return matmulReference(call);
  default:
    break;
  }
  throw Error(ErrorKind::Internal,
              "[opaque] no reference implementation of " + std::string(opName(call.op)));
}

std::string_view opaqueKindName(OpKind op) {
  switch (op) {
  case OpKind::CumSum:
  case OpKind::CumProd:
    return "scan";
  case OpKind::Sort:
  case OpKind::SortIndex:
  case OpKind::SortedMedian:
    return "sort";
  case OpKind::Gather:
  case OpKind::IndexWrite:
    return "index";
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
  case OpKind::Softmax:
    return "rowwise";
  case OpKind::MatMul:
    return "matmul";
  default:
    return "opaque";
  }
}

} // namespace cumo
