// Elementwise ops beyond arithmetic: Numo's math functions (Cumo::NMath
// and the per-class modules SFloat::Math, DFloat::Math), rounding, sign,
// the float predicates, bitwise operations, clip, divmod, and the class
// methods maximum and minimum. Each checks its arguments now, raising with
// the op's name in brackets, and answers pending nodes; a call Numo's class
// does not have (a bitwise op of a float class) raises NoMethodError.
#pragma once

#include "ops/operand.h"

#include <memory>
#include <string_view>
#include <utility>

namespace cumo {

/// The class Cumo::NMath dispatches a call to, given the class of each
/// argument (an NArray's own; the caller counts a Ruby Float as DFloat, an
/// Integer as Int32 or Int64, an Array as what Cumo::NArray[] makes of it,
/// as Numo does): all of them promoted, then an integer class taken to
/// DFloat, as Numo's NMath::DISPATCH does. So a Ruby Float beside an SFloat
/// array makes the call DFloat, while a 0-dim SFloat keeps it SFloat.
/// TypeError naming `fn` where the promotion is Bit.
DType nmathClass(std::string_view fn, llvm::ArrayRef<DType> argClasses);

/// A function of T::Math (sqrt, sin, atan2, hypot, ldexp ...) in the float
/// class `dtype`: every argument converted to it (a number becomes a 0-dim
/// constant), the arguments broadcast together.
NodeRef mathOp(OpKind op, DType dtype, llvm::ArrayRef<Operand> args);

/// frexp of T::Math: the mantissa (in `dtype`) and the exponent (Int32),
/// x = mantissa * 2**exponent.
std::pair<NodeRef, NodeRef> frexpOp(DType dtype, const Operand &x);

/// modf: the fractional and the integral part, both of a's float class.
std::pair<NodeRef, NodeRef> modfOp(const ArrayHandle &a);

/// floor, ceil, round (ties away from zero), rint (ties to even), trunc.
/// An integer class answers a handle onto a's own storage, as Numo's are
/// aliases of view there.
std::unique_ptr<ArrayHandle> roundOp(OpKind op, const ArrayHandle &a);

/// sign (-1, 0 or 1; NaN stays NaN), square (a * a) and reciprocal (1 / a:
/// an integer 0 raises ZeroDivisionError at the next read, as division
/// does) of a numeric class.
NodeRef signOp(const ArrayHandle &a);
NodeRef squareOp(const ArrayHandle &a);
NodeRef reciprocalOp(const ArrayHandle &a);

/// isnan, isinf, isposinf, isneginf, isfinite, signbit of a float class,
/// answering Bit.
NodeRef predicateOp(OpKind op, const ArrayHandle &a);

/// a.copysign(b) under the binary promotion, which must give a float class.
NodeRef copysignOp(const Operand &a, const Operand &b);

/// a & b, a | b, a ^ b, a << b, a >> b with `a` the receiver (or the Ruby
/// number before it). Integer classes promote as arithmetic does; a Bit
/// receiver, or a number before a Bit, converts the other operand to Bit
/// (nonzero is 1), as Numo's Bit methods do. Shifts are for integer
/// classes only; a count outside the width shifts everything out.
NodeRef bitwiseOp(OpKind op, const Operand &a, const Operand &b);

/// ~a of an integer class or Bit.
NodeRef bitNotOp(const ArrayHandle &a);

/// a.divmod(b): a / b and a % b under the binary promotion (C's truncating
/// division for integers; for floats x / y and fmod, as Numo computes).
std::pair<NodeRef, NodeRef> divmodOp(const Operand &a, const Operand &b);

/// a.clip(min, max) in a's class; either bound may be absent (nullptr),
/// not both. Numbers that convert to min > max raise OperationError now;
/// bounds that are arrays are not checked (that needs their values).
NodeRef clipOp(const ArrayHandle &a, const Operand *min, const Operand *max);

/// real, imag and arg (Real, Imag, Arg) of a complex class, answering its
/// real class; NoMethodError for other classes, as Numo defines them only
/// on SComplex and DComplex.
NodeRef complexPartOp(OpKind op, const ArrayHandle &a);

/// im: i * a, exactly (-Im a, Re a); a handle onto a's own storage for a
/// real class (Numo's im is an alias of view there).
std::unique_ptr<ArrayHandle> imOp(const ArrayHandle &a);

/// The new value of a complex array whose real part (`part` Real) or
/// imaginary part (Imag) becomes `value` (converted to the real class,
/// broadcast to a's shape): Numo's set_real and set_imag, which write it
/// into the array. NoMethodError for a real class, CastError for a
/// complex array value.
NodeRef setPartOp(OpKind part, const ArrayHandle &a, const Operand &value);

/// conj: the complex conjugate; a handle onto a's own storage for a real
/// class (Numo's conj is an alias of view there).
std::unique_ptr<ArrayHandle> conjOp(const ArrayHandle &a);

/// T.maximum(a, b) and T.minimum(a, b): both operands converted to `dtype`.
/// Fmax and Fmin skip a NaN (Numo's default), Maximum and Minimum answer it
/// (nan: true).
NodeRef extremumOp(OpKind op, DType dtype, const Operand &a, const Operand &b);

} // namespace cumo
