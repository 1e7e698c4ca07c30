#include "ops/opaque.h"

#include "core/error.h"
#include "ops/scan.h"

namespace cumo {

void runOpaqueReference(const OpaqueCall &call) {
  switch (call.op) {
  case OpKind::CumSum:
  case OpKind::CumProd:
    return scanReference(call);
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
  default:
    return "opaque";
  }
}

} // namespace cumo
