// Element types and their promotion. The rows live in dtype.def.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cumo {

/// One element type of an array.
enum class DType : uint8_t {
#define CUMO_DTYPE(Enum, RubyName, CType, CudaType, Kind, Rank) Enum,
#include "core/dtype.def"
};

inline constexpr int kNumDTypes = 0
#define CUMO_DTYPE(Enum, RubyName, CType, CudaType, Kind, Rank) +1
#include "core/dtype.def"
    ;

enum class DTypeKind : uint8_t { Bool, SInt, UInt, Float };

/// Static facts about a dtype, read from the table.
struct DTypeInfo {
  DType dtype;
  std::string_view rubyName;  ///< "DFloat"
  std::string_view cudaType;  ///< the CUDA C spelling of one element
  uint8_t size;               ///< bytes per element
  DTypeKind kind;
  uint8_t rank;               ///< width order inside a kind
};

const DTypeInfo &info(DType t);
inline size_t sizeOf(DType t) { return info(t).size; }
inline std::string_view nameOf(DType t) { return info(t).rubyName; }
inline bool isFloat(DType t) { return info(t).kind == DTypeKind::Float; }
inline bool isInteger(DType t) {
  auto k = info(t).kind;
  return k == DTypeKind::SInt || k == DTypeKind::UInt;
}
inline bool isBool(DType t) { return t == DType::Bit; }

/// Looks a dtype up by its Ruby class name ("SFloat"), or nullopt.
std::optional<DType> dtypeNamed(std::string_view name);

/// The class Numo gives the result of a binary arithmetic op between arrays
/// of classes `a` and `b`.
DType promote(DType a, DType b);

/// What a Ruby number mixed into an op is, for promotion.
enum class ScalarKind : uint8_t { Integer, Float };

/// The class of `array op number`: a Ruby Integer keeps the array's class,
/// a Ruby Float keeps float classes and turns integer classes into DFloat.
DType promoteWithScalar(DType array, ScalarKind s);

/// The class a Ruby number alone becomes (`Cumo::NArray[1]` and friends).
DType dtypeOfScalar(ScalarKind s);

/// The class sums and products accumulate in before the result is stored.
DType accumulatorOf(DType t);

/// Maps a DType to its C++ element type.
template <DType T> struct CTypeOf;
#define CUMO_DTYPE(Enum, RubyName, CType, CudaType, Kind, Rank)               \
  template <> struct CTypeOf<DType::Enum> { using type = CType; };
#include "core/dtype.def"

/// Calls `f.template operator()<DType::X, CType>()` for the runtime dtype `t`.
/// This is how per-dtype code is instantiated from one template instead of
/// being written out per type.
template <class F> decltype(auto) dispatchDType(DType t, F &&f) {
  switch (t) {
#define CUMO_DTYPE(Enum, RubyName, CType, CudaType, Kind, Rank)               \
  case DType::Enum:                                                            \
    return f.template operator()<DType::Enum, CType>();
#include "core/dtype.def"
  }
  __builtin_unreachable();
}

} // namespace cumo
