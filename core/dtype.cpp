#include "core/dtype.h"

namespace cumo {

namespace {
constexpr DTypeInfo kInfos[] = {
#define CUMO_DTYPE(Enum, RubyName, CType, CudaType, Kind, Rank)               \
  {DType::Enum, RubyName, CudaType, sizeof(CType), DTypeKind::Kind, Rank},
#include "core/dtype.def"
};

} // namespace

const DTypeInfo &info(DType t) { return kInfos[int(t)]; }

std::optional<DType> dtypeNamed(std::string_view name) {
  for (const DTypeInfo &i : kInfos)
    if (i.rubyName == name)
      return i.dtype;
  return std::nullopt;
}

DType promote(DType a, DType b) {
  if (a == b)
    return a;
  const DTypeInfo &ia = info(a), &ib = info(b);
  if (ia.kind == DTypeKind::Bool)
    return b;
  if (ib.kind == DTypeKind::Bool)
    return a;
  // Floats win over integers, and the wider float wins.
  if (ia.kind == DTypeKind::Float || ib.kind == DTypeKind::Float) {
    if (ia.kind != DTypeKind::Float)
      return b;
    if (ib.kind != DTypeKind::Float)
      return a;
    return ia.rank >= ib.rank ? a : b;
  }
  if (ia.kind == ib.kind)
    return ia.rank >= ib.rank ? a : b;
  // Signed with unsigned: Numo's effective table, read from Numo 0.9.2.1
  // (its class initialization order drops half the declared entries, so a
  // signed type of the same width wins, and some pairs widen unevenly).
  using D = DType;
  static constexpr D kSignedUnsigned[4][4] = {
      //            UInt8     UInt16    UInt32    UInt64
      /* Int8  */ {D::Int8, D::Int32, D::Int64, D::Int64},
      /* Int16 */ {D::Int16, D::Int16, D::Int32, D::Int64},
      /* Int32 */ {D::Int32, D::Int32, D::Int32, D::Int64},
      /* Int64 */ {D::Int64, D::Int64, D::Int64, D::Int64},
  };
  const DTypeInfo &sg = ia.kind == DTypeKind::SInt ? ia : ib;
  const DTypeInfo &un = ia.kind == DTypeKind::UInt ? ia : ib;
  return kSignedUnsigned[sg.rank - 1][un.rank - 1];
}

DType promoteWithScalar(DType array, ScalarKind s) {
  // A Ruby Integer never widens the class (Numo: Int8[1] + 200 wraps); a
  // Ruby Float keeps float classes and makes integer ones DFloat.
  if (s == ScalarKind::Float)
    return isFloat(array) ? array : DType::DFloat;
  return array;
}

DType dtypeOfScalar(ScalarKind s) {
  return s == ScalarKind::Float ? DType::DFloat : DType::Int64;
}

DType accumulatorOf(DType t) {
  switch (info(t).kind) {
  case DTypeKind::Float:
    return t;
  case DTypeKind::UInt:
    return DType::UInt64;
  default:
    return DType::Int64;
  }
}

} // namespace cumo
