// The one exception type the C++ core throws. ruby/ turns it into the Ruby
// class its kind names, outside any catch block (see ruby/guard.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cumo {

enum class ErrorKind : uint8_t {
  Type,        ///< TypeError: a wrong class
  Argument,    ///< ArgumentError: a bad value or keyword
  Shape,       ///< Cumo::NArray::ShapeError: shapes that do not fit
  Index,       ///< IndexError: an index out of range
  Range,       ///< RangeError: a range reaching past an axis
  Dimension,   ///< Cumo::NArray::DimensionError: an axis out of range
  Frozen,      ///< FrozenError: a write to a frozen array
  ZeroDivision, ///< ZeroDivisionError: an integer divided by zero
  NoMethod,    ///< NoMethodError: a method Numo's class does not have
               ///< (bitwise ops of a float class)
  Operation,   ///< Cumo::NArray::OperationError: clip with min > max
  Cast,        ///< Cumo::NArray::CastError: a complex class cast to a real one
  NotImplemented, ///< NotImplementedError
  Cuda,        ///< Cumo::CUDA::RuntimeError
  Nvrtc,       ///< Cumo::CUDA::NVRTCError (message carries the compiler log)
  OutOfMemory, ///< Cumo::CUDA::OutOfMemoryError
  Internal,    ///< a bug of ours: RuntimeError
};

class Error {
public:
  Error(ErrorKind kind, std::string message)
      : kind_(kind), message_(std::move(message)) {}
  ErrorKind kind() const { return kind_; }
  const std::string &message() const { return message_; }

private:
  ErrorKind kind_;
  std::string message_;
};

/// Throws an Error whose message starts with the op's name in brackets:
/// opError(ErrorKind::Shape, "add", "shapes [2] and [3] do not broadcast")
/// reads "[add] shapes [2] and [3] do not broadcast".
[[noreturn]] void opError(ErrorKind kind, std::string_view op,
                          const std::string &what);

} // namespace cumo
