#include "ops/binary_io.h"

#include "core/error.h"
#include "ops/creation.h"

#include <cstring>

namespace cumo {

size_t binaryByteSize(DType dtype, int64_t n) {
  if (dtype == DType::Bit)
    return size_t((n + 7) / 8);
  return size_t(n) * sizeOf(dtype);
}

std::string packBinary(DType dtype, const char *dense, int64_t n) {
  if (dtype != DType::Bit)
    return std::string(dense, size_t(n) * sizeOf(dtype));
  std::string out(binaryByteSize(dtype, n), '\0');
  for (int64_t i = 0; i < n; ++i)
    if (dense[i])
      out[size_t(i / 8)] = char(uint8_t(out[size_t(i / 8)]) | (1u << (i % 8)));
  return out;
}

std::vector<char> unpackBinary(DType dtype, const char *bytes, int64_t n) {
  if (dtype != DType::Bit)
    return std::vector<char>(bytes, bytes + size_t(n) * sizeOf(dtype));
  std::vector<char> out(size_t(n), 0);
  for (int64_t i = 0; i < n; ++i)
    out[size_t(i)] = char((uint8_t(bytes[i / 8]) >> (i % 8)) & 1);
  return out;
}

Shape fromBinaryShape(DType dtype, size_t length, const std::optional<Shape> &shape,
                      std::string_view op) {
  if (shape) {
    for (int64_t d : *shape)
      if (d < 0)
        opError(ErrorKind::Argument, op,
                "negative extent in shape " + shapeToString(*shape));
    size_t need = binaryByteSize(dtype, numElements(*shape));
    if (need > length)
      opError(ErrorKind::Argument, op,
              "specified size is too large: shape " + shapeToString(*shape) +
                  " takes " + std::to_string(need) + " bytes, the string has " +
                  std::to_string(length));
    return *shape;
  }
  int64_t n = dtype == DType::Bit ? int64_t(length) * 8
                                  : int64_t(length / sizeOf(dtype));
  if (n == 0)
    opError(ErrorKind::Argument, op,
            "string is empty or too short: " + std::to_string(length) +
                " bytes for elements of " + std::to_string(sizeOf(dtype)));
  return Shape{n};
}

NodeRef fromBinaryNode(DType dtype, llvm::ArrayRef<int64_t> shape, const char *bytes) {
  std::vector<char> dense = unpackBinary(dtype, bytes, numElements(shape));
  return uploadNode(dtype, shape, dense.data());
}

size_t storeBinaryBytes(const ArrayHandle &a, size_t length, size_t offset,
                        std::string_view op) {
  if (offset > length)
    opError(ErrorKind::Argument, op,
            "offset is larger than string length: " + std::to_string(offset) +
                " > " + std::to_string(length));
  size_t need = binaryByteSize(a.dtype(), a.size());
  if (need > length - offset)
    opError(ErrorKind::Argument, op,
            "string is too short to store: " + std::to_string(need) +
                " bytes wanted, " + std::to_string(length - offset) + " given");
  return need;
}

} // namespace cumo
