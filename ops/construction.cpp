#include "ops/construction.h"

#include "core/error.h"
#include "ops/creation.h"
#include "ops/layout.h"
#include "ops/record.h"

#include <cmath>
#include <string>

namespace cumo {

namespace {

void checkInexact(DType t, std::string_view op) {
  if (!isFloat(t) && !isComplex(t))
    opError(ErrorKind::NoMethod, op,
            "undefined for " + className(t) + " (float and complex classes only)");
}

/// `op(x, y)` in `dtype`, broadcasting a 0-dim operand.
NodeRef apply(OpKind op, DType dtype, const NodeRef &x, const NodeRef &y) {
  Shape shape = toShape(x->ndim() >= y->ndim() ? x->shape() : y->shape());
  return record(op, dtype, shape, {x, y});
}

NodeRef apply(OpKind op, DType dtype, const NodeRef &x) {
  return record(op, dtype, x->shape(), {x});
}

NodeRef constant(DType dtype, double v) { return scalarNode(dtype, Scalar::ofFloat(v)); }

} // namespace

void eyeInto(ArrayHandle &a, const Scalar &value, int64_t offset) {
  // The checks first: a bad call leaves `a` alone.
  Layout diag = diagonalLayout(a.layout(), offset, std::nullopt, "eye");
  assignValue(a, fillNode(a.dtype(), a.shape(), Scalar::ofInt(0)), "eye");
  ArrayHandle d(a.storageRef(), diag);
  assignValue(d, fillNode(a.dtype(), d.shape(), value), "eye");
}

NodeRef logseqNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &begin,
                   const Scalar &step, const Scalar &base) {
  checkInexact(dtype, "logseq");
  NodeRef exponent = seqNode(dtype, shape, begin, step);
  return apply(OpKind::Pow, dtype, scalarNode(dtype, base), exponent);
}

NodeRef randNormNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &mu,
                     const Scalar &sigma) {
  checkInexact(dtype, "rand_norm");
  // Box-Muller in the real class: a complex value takes both normals of
  // its pair (the cosine's real, the sine's imaginary), as Numo's does.
  DType real = isComplex(dtype) ? realTypeOf(dtype) : dtype;
  Scalar zero = Scalar::ofFloat(0.0), one = Scalar::ofFloat(1.0);
  NodeRef u1 = randNode(real, shape, zero, one);
  NodeRef u2 = randNode(real, shape, zero, one);
  // 1 - u1 lies in (0, 1], so the logarithm is finite.
  NodeRef r = apply(OpKind::Sqrt, real,
                    apply(OpKind::Mul, real, constant(real, -2.0),
                          apply(OpKind::Log, real,
                                apply(OpKind::Sub, real, constant(real, 1.0), u1))));
  NodeRef angle = apply(OpKind::Mul, real, constant(real, 2.0 * M_PI), u2);
  NodeRef z = apply(OpKind::Mul, real, r, apply(OpKind::Cos, real, angle));
  if (isComplex(dtype)) {
    NodeRef im = apply(OpKind::Mul, real, r, apply(OpKind::Sin, real, angle));
    z = apply(OpKind::MakeComplex, dtype, z, im);
  }
  return apply(OpKind::Add, dtype, scalarNode(dtype, mu),
               apply(OpKind::Mul, dtype, scalarNode(dtype, sigma), z));
}

} // namespace cumo
