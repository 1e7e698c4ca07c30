// Element types and their promotion. The rows live in dtype.def.
#pragma once

#include "core/element_types.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

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

enum class DTypeKind : uint8_t { Bool, SInt, UInt, Float, Complex };

/// Static facts about a dtype, read from the table.
struct DTypeInfo {
  DType dtype;
  std::string_view rubyName;  ///< "DFloat"
  std::string_view cudaType;  ///< the CUDA C spelling of one element
  uint8_t size;               ///< bytes per element
  DTypeKind kind;
  uint8_t rank;               ///< width order inside a kind
};

namespace detail {
/// The table, in the header: every recorded op asks a dtype's size or
/// kind several times (an out-of-line lookup was 1% of the CG loop's host
/// instructions).
inline constexpr DTypeInfo kDTypeInfos[] = {
#define CUMO_DTYPE(Enum, RubyName, CType, CudaType, Kind, Rank)               \
  {DType::Enum, RubyName, CudaType, sizeof(CType), DTypeKind::Kind, Rank},
#include "core/dtype.def"
};
} // namespace detail

inline const DTypeInfo &info(DType t) { return detail::kDTypeInfos[int(t)]; }
inline size_t sizeOf(DType t) { return info(t).size; }
inline std::string_view nameOf(DType t) { return info(t).rubyName; }
/// The Ruby class of `t` as messages name it: "Cumo::SFloat".
inline std::string className(DType t) { return "Cumo::" + std::string(nameOf(t)); }
inline bool isFloat(DType t) { return info(t).kind == DTypeKind::Float; }
inline bool isInteger(DType t) {
  auto k = info(t).kind;
  return k == DTypeKind::SInt || k == DTypeKind::UInt;
}
inline bool isBool(DType t) { return t == DType::Bit; }
inline bool isComplex(DType t) { return info(t).kind == DTypeKind::Complex; }
/// HFloat and BFloat: sixteen-bit floats that compute in single precision.
inline bool isNarrowFloat(DType t) {
  return t == DType::HFloat || t == DType::BFloat;
}
/// Whether `t` is stored as one of the structs of core/element_types.h
/// rather than a C arithmetic type.
inline bool isStructType(DType t) { return isNarrowFloat(t) || isComplex(t); }
/// The class of a complex class's parts (SComplex: SFloat); `t` otherwise.
DType realTypeOf(DType t);
/// The complex class whose parts are `t`'s class or wider: SComplex for
/// SFloat, HFloat and BFloat, DComplex for everything else.
DType complexTypeOf(DType t);

/// Looks a dtype up by its Ruby class name ("SFloat"), or nullopt.
std::optional<DType> dtypeNamed(std::string_view name);

/// The class Numo gives the result of a binary arithmetic op between arrays
/// of classes `a` and `b`.
DType promote(DType a, DType b);

/// What a Ruby number mixed into an op is, for promotion.
enum class ScalarKind : uint8_t { Integer, Float, Complex };

/// The class of `array op number`: a Ruby Integer keeps the array's class;
/// a Ruby Float keeps float and complex classes and turns integer classes
/// into DFloat; a Ruby Complex keeps complex classes, turns SFloat (and
/// the sixteen-bit floats, which promote as SFloat does) into SComplex and
/// every other class into DComplex.
DType promoteWithScalar(DType array, ScalarKind s);

/// The class a Ruby number alone becomes (`Cumo::NArray[1]` and friends).
DType dtypeOfScalar(ScalarKind s);

/// The class sums accumulate in before the result is stored: Int64 or
/// UInt64 for integers, SFloat for HFloat and BFloat, the class itself for
/// SFloat, DFloat and the complex classes. (Products of the sixteen-bit
/// floats do not widen: see fusion/lower.cpp.)
DType accumulatorOf(DType t);

/// Maps a DType to its C++ element type.
template <DType T> struct CTypeOf;
#define CUMO_DTYPE(Enum, RubyName, CType, CudaType, Kind, Rank)               \
  template <> struct CTypeOf<DType::Enum> { using type = CType; };
#include "core/dtype.def"

/// C++ traits of the element types.
template <class T>
constexpr bool kIsNarrowFloatC = std::is_same_v<T, cumo_ops::half> ||
                                 std::is_same_v<T, cumo_ops::bfloat16>;
template <class T>
constexpr bool kIsComplexC = std::is_same_v<T, cumo_ops::scomplex> ||
                             std::is_same_v<T, cumo_ops::dcomplex>;
/// The part type of a complex C type (float for scomplex).
template <class T> struct RealPartOf { using type = T; };
template <> struct RealPartOf<cumo_ops::scomplex> { using type = float; };
template <> struct RealPartOf<cumo_ops::dcomplex> { using type = double; };

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
