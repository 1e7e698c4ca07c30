#include "core/dtype.h"

namespace cumo {

std::optional<DType> dtypeNamed(std::string_view name) {
  for (const DTypeInfo &i : detail::kDTypeInfos)
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
  // Complex wins over everything, with parts as wide as the wider side's
  // (SComplex with DFloat is DComplex), as Numo's table has it.
  if (ia.kind == DTypeKind::Complex || ib.kind == DTypeKind::Complex) {
    const DTypeInfo &c = ia.kind == DTypeKind::Complex ? ia : ib;
    const DTypeInfo &o = &c == &ia ? ib : ia;
    bool wide = c.dtype == DType::DComplex ||
                ((o.kind == DTypeKind::Float || o.kind == DTypeKind::Complex) &&
                 o.rank >= 4);
    return wide ? DType::DComplex : DType::SComplex;
  }
  // Floats win over integers, and the wider float wins. The sixteen-bit
  // floats contain neither each other: together they are SFloat.
  if (ia.kind == DTypeKind::Float || ib.kind == DTypeKind::Float) {
    if (ia.kind != DTypeKind::Float)
      return b;
    if (ib.kind != DTypeKind::Float)
      return a;
    if (isNarrowFloat(a) && isNarrowFloat(b))
      return DType::SFloat;
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
  // Ruby Float keeps float and complex classes and makes integer ones
  // DFloat; a Ruby Complex makes every class complex.
  switch (s) {
  case ScalarKind::Integer:
    return array;
  case ScalarKind::Float:
    return isFloat(array) || isComplex(array) ? array : DType::DFloat;
  case ScalarKind::Complex:
    return complexTypeOf(array);
  }
  return array;
}

DType dtypeOfScalar(ScalarKind s) {
  switch (s) {
  case ScalarKind::Integer: return DType::Int64;
  case ScalarKind::Float: return DType::DFloat;
  case ScalarKind::Complex: return DType::DComplex;
  }
  return DType::DFloat;
}

DType realTypeOf(DType t) {
  switch (t) {
  case DType::SComplex: return DType::SFloat;
  case DType::DComplex: return DType::DFloat;
  default: return t;
  }
}

DType complexTypeOf(DType t) {
  switch (t) {
  case DType::SFloat:
  case DType::HFloat:
  case DType::BFloat:
  case DType::SComplex:
    return DType::SComplex;
  default:
    return DType::DComplex;
  }
}

DType accumulatorOf(DType t) {
  switch (info(t).kind) {
  case DTypeKind::Float:
    return isNarrowFloat(t) ? DType::SFloat : t;
  case DTypeKind::Complex:
    return t;
  case DTypeKind::UInt:
    return DType::UInt64;
  default:
    return DType::Int64;
  }
}

} // namespace cumo
