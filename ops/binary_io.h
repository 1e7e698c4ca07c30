// Numo's binary form of an array (to_binary, from_binary, store_binary,
// Marshal): the elements in row-major order, in the host's byte order,
// ELEMENT_BYTE_SIZE bytes each, except Cumo::Bit, which packs eight
// elements a byte (element i is bit i % 8 of byte i / 8), as Numo stores it.
#pragma once

#include "core/array.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cumo {

/// The bytes `n` elements of `dtype` take in the binary form.
size_t binaryByteSize(DType dtype, int64_t n);

/// The binary form of `n` dense elements (one slot per element, as the
/// engine reads them).
std::string packBinary(DType dtype, const char *dense, int64_t n);

/// `n` dense elements from the binary form at `bytes`.
std::vector<char> unpackBinary(DType dtype, const char *bytes, int64_t n);

/// The shape from_binary(string, shape) answers for a string of `length`
/// bytes: `shape` when given (ArgumentError when the string is too short
/// for it), else as many whole elements as the string holds (ArgumentError
/// when that is none).
Shape fromBinaryShape(DType dtype, size_t length,
                      const std::optional<Shape> &shape, std::string_view op);

/// An array of `shape` holding the binary form at `bytes` (uploaded).
NodeRef fromBinaryNode(DType dtype, llvm::ArrayRef<int64_t> shape, const char *bytes);

/// store_binary: checks that `length` bytes from `offset` fill `a`
/// (ArgumentError otherwise, naming `op`) and answers the bytes it takes.
size_t storeBinaryBytes(const ArrayHandle &a, size_t length, size_t offset,
                        std::string_view op);

} // namespace cumo
