// Ruby values in and out: numbers, shapes, index arguments, nested Arrays.
#pragma once

#include "core/scalar.h"
#include "ops/indexing.h"
#include "ops/operand.h"
#include "ruby/ruby_api.h"

#include <memory>
#include <vector>

namespace cumo::rb {

/// Whether `v` is a Ruby number an op takes as a scalar operand.
bool isRubyScalar(VALUE v);
/// A Ruby Integer, Float, Complex, true or false as a Scalar; TypeError
/// naming `op` otherwise.
Scalar scalarFrom(VALUE v, const char *op);
/// scalarFrom for a value stored into class `t`: a Ruby Complex goes into a
/// real class only with an exact zero imaginary part (Complex#to_f's rule),
/// else RangeError.
Scalar scalarFor(VALUE v, DType t, const char *op);

/// Checks that every key of the keyword Hash `opts` (nil: none) is one of
/// `allowed`: ArgumentError naming `op` and the first other key. Walks the
/// Hash in place: a Hash#keys Array a call took a fifth of a layer_norm's
/// recording (callgrind, 2026-12-07).
void checkKeywords(VALUE opts, llvm::ArrayRef<ID> allowed, const char *op);

/// An integer argument (`what`: "an axis", "a size") as int64: a Ruby
/// Integer, or a finite Float (truncated, as Integer() would); TypeError
/// naming `op` for another class, RangeError naming it past int64 or for
/// NaN and infinities.
int64_t int64Arg(VALUE v, const char *op, const char *what);

/// Axes from an Integer, a Range of them or an Array of either (Numo's
/// dimension arguments; nil: none), appended to `axes`. Another class
/// raises `wrongClass` (TypeError or ArgumentError, as the Numo method
/// does), naming `op`; an endless Range or one of more axes than an array
/// has, ArgumentError.
void appendAxes(VALUE v, llvm::SmallVectorImpl<int64_t> &axes, const char *op, VALUE wrongClass);

/// A shape from `new(3, 5)` or `new([3, 5])`.
Shape shapeFromArgs(int argc, const VALUE *argv, const char *op);

/// The index items of `a[...]`: inline for up to four (no heap block to
/// leak when a later argument raises).
using IndexItems = llvm::SmallVector<IndexItem, 4>;
IndexItems indexItemsFrom(int argc, const VALUE *argv, const char *op);
/// One of them (an index array or a mask is ruby/indexing.cpp's).
IndexItem indexItemFrom(VALUE v, const char *op);

/// A Ruby value from one element.
VALUE elementToRuby(DType dtype, const void *p);

/// Nested Ruby Arrays from dense row-major elements (0-dim: the element).
VALUE toRubyArray(DType dtype, llvm::ArrayRef<int64_t> shape, const char *data);

/// `v` with every Range or step sequence inside its Arrays replaced by its
/// elements, in place (Numo reads Int32[0..4] as [0, 1, 2, 3, 4]); `v`
/// itself when it holds none. ArgumentError naming `op` for an endless one.
VALUE expandRanges(VALUE v, const char *op);

/// Dense row-major elements of a nested Ruby Array, converted to `dtype`.
/// Ragged rows are padded with zeros, as Numo pads them.
struct HostArray {
  Shape shape;
  std::vector<char> bytes;
};
HostArray hostArrayFrom(VALUE ary, DType dtype, const char *op);

/// Holds an operand for the length of one op: an NArray's handle, a Ruby
/// number, or a Ruby Array uploaded in the receiver's class (as Numo casts
/// an Array operand to self's class).
struct OperandHolder {
  Operand operand;
  std::unique_ptr<ArrayHandle> temp;
  HostArray host;
  bool upload = false;
  DType uploadType = DType::DFloat;
};

/// Converts `v` into `h` (before the engine lock): a Ruby Array is read
/// into host memory of class `selfType`. TypeError naming `op` for
/// anything else that is not an NArray or a number.
void prepareOperand(OperandHolder &h, VALUE v, DType selfType, const char *op);

/// Inside the engine lock: finishes an operand that needs device work.
const Operand &finishOperand(OperandHolder &h);

/// The class Numo infers for a nested Array (Cumo::NArray[...]): Bit for
/// true/false, Int32 for integers in its range, Int64 beyond, DFloat once
/// a Float appears, DComplex once a Complex does.
DType inferDType(VALUE ary);

} // namespace cumo::rb
