#include "ops/matmul.h"

#include "core/env_flag.h"
#include "core/error.h"
#include "core/stats.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/matmul_layout.h"
#include "ops/record.h"
#include "ops/reduction.h"
#include "ops/reference.h"

#include <string>

namespace cumo {

DType matmulAccumulator(DType t) { return isNarrowFloat(t) ? DType::SFloat : t; }

bool isSmallProduct(DType t, llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  if (!isFloat(t) || a.empty() || b.empty() || a.back() == 0)
    return false;
  // A batch only of matrices by matrices (the vector cases of a batch keep
  // cuBLAS).
  bool batched = a.size() > 2 || b.size() > 2;
  if (batched && (a.size() < 2 || b.size() < 2))
    return false;
  int64_t m = a.size() >= 2 ? a[a.size() - 2] : 1;
  if (m > kMaxSmallRows)
    return false;
  // The batch's outputs, each a warp or a thread, counted in 32 bits.
  int64_t outputs = m * (b.size() >= 2 ? b.back() : 1);
  for (size_t d = 0; d + 2 < std::max(a.size(), b.size()); ++d) {
    int64_t ea = d + 2 < a.size() ? a[a.size() - 3 - d] : 1;
    int64_t eb = d + 2 < b.size() ? b[b.size() - 3 - d] : 1;
    outputs *= std::max(ea, eb);
  }
  return outputs <= kMaxSmallOutputs;
}

bool allowTf32() {
  static const bool on = envFlag("CUMO_ALLOW_TF32", false);
  return on;
}

namespace {

void checkOperandClass(std::string_view op, const ArrayHandle &x) {
  if (x.dtype() == DType::Bit)
    opError(ErrorKind::NoMethod, op, "undefined for Cumo::Bit");
}

/// The node an operand enters the product as: converted to the product's
/// class (a fresh, contiguous array), read where it lies when cuBLAS can
/// read it so (a transposed view included), or else copied once. The
/// integer kernel and the CPU reference read any layout.
NodeRef productOperand(const ArrayHandle &x, DType t, bool isB) {
  if (x.dtype() != t)
    return castNode(x.value(), t);
  if (isInteger(t) || coreOf(x.shape(), x.layout().strides, isB).blasable())
    return x.value();
  ++Stats::get().matmul_copies;
  return copyOf(x);
}

} // namespace

NodeRef matmulOp(std::string_view op, const ArrayHandle &a, const ArrayHandle &b,
                 const Scalar &alpha) {
  checkOperandClass(op, a);
  checkOperandClass(op, b);
  MatmulShape s = matmulShape(op, a.shape(), b.shape());
  DType t = promote(a.dtype(), b.dtype());
  if (alpha.isComplex() && !isComplex(t))
    opError(ErrorKind::Type, op,
            "a complex alpha needs a complex class, not " + className(t));
  if (!isInteger(t) && (s.n > kBlasMaxInt || s.k > kBlasMaxInt || s.m > kBlasMaxInt))
    opError(ErrorKind::NotImplemented, op,
            "a core dimension past " + std::to_string(kBlasMaxInt) +
                " (cuBLAS counts in int): shapes " + shapeToString(a.shape()) + " and " +
                shapeToString(b.shape()));
  // Nothing to sum: zeros, as numpy answers, from an ordinary fill kernel
  // rather than a library call that would write them with a memset.
  if (s.k == 0)
    return fillNode(t, s.result, Scalar::ofInt(0));
  NodeRef na = productOperand(a, t, false);
  NodeRef nb = productOperand(b, t, true);
  NodeRef n = record(OpKind::MatMul, t, s.result, {na, nb});
  n->scalar = alpha;
  return n;
}

NodeRef dotOp(const ArrayHandle &a, const ArrayHandle &b) {
  if (a.ndim() != 1 || b.ndim() != 1)
    return matmulOp("dot", a, b);
  checkOperandClass("dot", a);
  checkOperandClass("dot", b);
  if (a.shape()[0] != b.shape()[0])
    opError(ErrorKind::Shape, "dot",
            "lengths " + std::to_string(a.shape()[0]) + " and " +
                std::to_string(b.shape()[0]) + " differ");
  // Two vectors: a reduction, which fuses with its operands' producers.
  NodeRef prod = binaryOp(OpKind::Mul, Operand::of(a), Operand::of(b));
  DType t = prod->dtype();
  NodeRef n = record(OpKind::Sum, reductionResultType(OpKind::Sum, t), {}, {prod});
  n->extra().axes.push_back(0);
  return n;
}

NodeRef gemmOp(const ArrayHandle &a, const ArrayHandle &b, const Scalar &alpha,
               const Scalar &beta, const ArrayHandle *c) {
  NodeRef product = matmulOp("gemm", a, b, alpha);
  if (!c)
    return product;
  if (c->shape() != product->shape())
    opError(ErrorKind::Shape, "gemm",
            "c must have the product's shape " + shapeToString(product->shape()) + ", not " +
                shapeToString(c->shape()));
  checkOperandClass("gemm", *c);
  // beta = 0 does not read c, as BLAS defines it (a NaN there stays out).
  if (!beta.isComplex() && beta.asDouble() == 0.0)
    return product;
  ArrayHandle p(product);
  ArrayHandle scaled(beta.isOne() ? c->value()
                                 : binaryOp(OpKind::Mul, Operand::of(*c), Operand::of(beta)));
  return binaryOp(OpKind::Add, Operand::of(p), Operand::of(scaled));
}

namespace {

template <class T, class A>
void multiply(const OpaqueCall &call, const MatmulStrides &g) {
  const T *a = static_cast<const T *>(call.operands[0].data);
  const T *b = static_cast<const T *>(call.operands[1].data);
  T *out = static_cast<T *>(call.out);
  const int64_t n = g.shape.n, k = g.shape.k, m = g.shape.m;
  const bool scale = !call.scalar.isOne();
  const A alpha = call.scalar.as<A>();
  const Shape &batch = g.shape.batch;
  int64_t batches = numElements(batch);
  for (int64_t q = 0; q < batches; ++q) {
    int64_t aAt = call.operands[0].offset, bAt = call.operands[1].offset;
    for (int64_t d = int64_t(batch.size()), r = q; d-- > 0;) {
      int64_t c = r % batch[d];
      r /= batch[d];
      aAt += c * g.aBatch[d];
      bAt += c * g.bBatch[d];
    }
    T *o = out + q * n * m;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        A acc = A(0);
        const T *ai = a + aAt + i * g.a.rowStride;
        const T *bj = b + bAt + j * g.b.colStride;
        for (int64_t p = 0; p < k; ++p)
          acc = cumo_ops::wadd(acc, cumo_ops::wmul(ref::convert<A>(ai[p * g.a.colStride]),
                                                   ref::convert<A>(bj[p * g.b.rowStride])));
        o[i * m + j] = ref::convert<T>(scale ? cumo_ops::wmul(alpha, acc) : acc);
      }
  }
}

} // namespace

void matmulReference(const OpaqueCall &call) {
  MatmulStrides g = matmulStrides(call);
  if (call.operands[0].dtype != call.outDtype || call.operands[1].dtype != call.outDtype)
    throw Error(ErrorKind::Internal, "[matmul] operands differ from the result's class");
  dispatchDType(call.outDtype, [&]<DType T, class C>() {
    if constexpr (T == DType::Bit) {
      throw Error(ErrorKind::Internal, "[matmul] a Bit product");
    } else if constexpr (kIsNarrowFloatC<C>) {
      multiply<C, float>(call, g);
    } else {
      multiply<C, C>(call, g);
    }
  });
}

} // namespace cumo
