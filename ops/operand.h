// An argument of an op as the caller hands it over: an array or a host
// number.
#pragma once

#include "core/array.h"
#include "core/scalar.h"

namespace cumo {

struct Operand {
  const ArrayHandle *array = nullptr;
  Scalar scalar;

  static Operand of(const ArrayHandle &a) { return {&a, {}}; }
  static Operand of(const Scalar &s) { return {nullptr, s}; }
  bool isArray() const { return array != nullptr; }
  llvm::ArrayRef<int64_t> shape() const {
    return array ? array->shape() : llvm::ArrayRef<int64_t>();
  }
};

} // namespace cumo
