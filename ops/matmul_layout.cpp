#include "ops/matmul_layout.h"

#include "core/error.h"

#include <algorithm>
#include <string>

namespace cumo {

namespace {

constexpr const char *kSignature = "(n?,k),(k,m?)->(n?,m?)";

} // namespace

MatmulShape matmulShape(std::string_view op, llvm::ArrayRef<int64_t> a,
                        llvm::ArrayRef<int64_t> b) {
  for (int i = 0; i < 2; ++i)
    if ((i ? b : a).empty())
      opError(ErrorKind::Shape, op,
              "operand " + std::to_string(i) +
                  " does not have enough dimensions (has 0, gufunc core with "
                  "signature " + kSignature + " requires 1)");
  MatmulShape s;
  s.aVector = a.size() == 1;
  s.bVector = b.size() == 1;
  s.k = a.back();
  s.n = s.aVector ? 1 : a[a.size() - 2];
  int64_t bk = s.bVector ? b[0] : b[b.size() - 2];
  s.m = s.bVector ? 1 : b.back();
  if (bk != s.k)
    opError(ErrorKind::Shape, op,
            "operand 1 has a mismatch in its core dimension 0, with gufunc signature " +
                std::string(kSignature) + " (size " + std::to_string(bk) +
                " is different from " + std::to_string(s.k) + "): shapes " +
                shapeToString(a) + " and " + shapeToString(b));
  auto batchOf = [](llvm::ArrayRef<int64_t> x) {
    return x.size() <= 2 ? llvm::ArrayRef<int64_t>() : x.drop_back(2);
  };
  auto batch = broadcastShapes(batchOf(a), batchOf(b));
  if (!batch)
    opError(ErrorKind::Shape, op,
            "batch dimensions of " + shapeToString(a) + " and " + shapeToString(b) +
                " do not broadcast");
  s.batch = *batch;
  s.result = s.batch;
  if (!s.aVector)
    s.result.push_back(s.n);
  if (!s.bVector)
    s.result.push_back(s.m);
  return s;
}

bool CoreLayout::rowMajor() const {
  if (rows == 0 || cols == 0)
    return true; // nothing to read: any stride will do
  return (cols <= 1 || colStride == 1) && (rows <= 1 || rowStride >= std::max<int64_t>(cols, 1));
}

bool CoreLayout::colMajor() const {
  return (rows <= 1 || rowStride == 1) && (cols <= 1 || colStride >= std::max<int64_t>(rows, 1));
}

bool CoreLayout::blasable() const {
  if (rows > kBlasMaxInt || cols > kBlasMaxInt)
    return false;
  return (rowMajor() || colMajor()) && leadingDimension() <= kBlasMaxInt;
}

int64_t CoreLayout::leadingDimension() const {
  if (rowMajor())
    return rows <= 1 || cols == 0 ? std::max<int64_t>(cols, 1) : rowStride;
  return cols <= 1 ? std::max<int64_t>(rows, 1) : colStride;
}

CoreLayout coreOf(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides,
                  bool isB) {
  CoreLayout c;
  size_t r = shape.size();
  if (r == 1) {
    // A vector a is a row (its stride steps along the columns), a vector b
    // a column; the stride of the missing axis is never taken.
    if (isB) {
      c.rows = shape[0];
      c.rowStride = strides[0];
      c.colStride = 1;
    } else {
      c.cols = shape[0];
      c.colStride = strides[0];
      c.rowStride = 1;
    }
    return c;
  }
  c.rows = shape[r - 2];
  c.cols = shape[r - 1];
  c.rowStride = strides[r - 2];
  c.colStride = strides[r - 1];
  return c;
}

bool BlasGemm::operator==(const BlasGemm &o) const {
  return transFirst == o.transFirst && transSecond == o.transSecond && m == o.m &&
         n == o.n && k == o.k && ldFirst == o.ldFirst && ldSecond == o.ldSecond &&
         ldc == o.ldc && strideFirst == o.strideFirst && strideSecond == o.strideSecond &&
         strideC == o.strideC && batch == o.batch && offFirst == o.offFirst &&
         offSecond == o.offSecond && offC == o.offC;
}

MatmulStrides matmulStrides(const OpaqueCall &call) {
  const OpaqueOperand &a = call.operands[0], &b = call.operands[1];
  MatmulStrides s;
  s.shape = matmulShape("matmul", a.shape, b.shape);
  s.a = coreOf(a.shape, a.strides, false);
  s.b = coreOf(b.shape, b.strides, true);
  size_t rank = s.shape.batch.size();
  auto batchStrides = [&](const OpaqueOperand &x) {
    // Right-aligned against the broadcast batch; a missing or length-one
    // axis is broadcast (stride 0).
    Strides out(rank, 0);
    size_t own = x.shape.size() <= 2 ? 0 : x.shape.size() - 2;
    for (size_t i = 0; i < own; ++i) {
      size_t d = rank - own + i;
      out[d] = x.shape[i] == 1 ? 0 : x.strides[i];
    }
    return out;
  };
  s.aBatch = batchStrides(a);
  s.bBatch = batchStrides(b);
  return s;
}

llvm::SmallVector<BlasGemm, 1> planBlasGemm(const OpaqueCall &call) {
  MatmulStrides g = matmulStrides(call);
  if (!g.a.blasable() || !g.b.blasable())
    throw Error(ErrorKind::Internal, "[matmul] an operand's core is not blasable");
  const OpaqueOperand &a = call.operands[0], &b = call.operands[1];
  BlasGemm base;
  base.m = g.shape.m;
  base.n = g.shape.n;
  base.k = g.shape.k;
  base.transFirst = !g.b.rowMajor();
  base.transSecond = !g.a.rowMajor();
  base.ldFirst = g.b.leadingDimension();
  base.ldSecond = g.a.leadingDimension();
  base.ldc = std::max<int64_t>(base.m, 1);
  base.offFirst = b.offset;
  base.offSecond = a.offset;

  // The batch axes that are not of length one, each with its extent and
  // the three operands' strides (the answer is contiguous).
  struct Axis {
    int64_t extent, first, second, c;
  };
  llvm::SmallVector<Axis, 4> axes;
  int64_t cStride = g.shape.n * g.shape.m;
  for (size_t d = g.shape.batch.size(); d-- > 0;) {
    int64_t e = g.shape.batch[d];
    if (e != 1)
      axes.push_back({e, g.bBatch[d], g.aBatch[d], cStride});
    cStride *= e;
  }
  std::reverse(axes.begin(), axes.end());
  // Collapse from the innermost axis outwards while every operand steps
  // evenly across the pair (a broadcast operand's 0 always does).
  Axis inner{1, 0, 0, 0};
  size_t outer = axes.size();
  if (outer) {
    inner = axes[--outer];
    while (outer > 0) {
      const Axis &o = axes[outer - 1];
      if (o.first != inner.first * inner.extent || o.second != inner.second * inner.extent ||
          o.c != inner.c * inner.extent || inner.extent * o.extent > kBlasMaxInt)
        break;
      inner.extent *= o.extent;
      --outer;
    }
  }
  base.batch = inner.extent;
  base.strideFirst = inner.first;
  base.strideSecond = inner.second;
  base.strideC = inner.c;

  llvm::SmallVector<BlasGemm, 1> calls;
  if (inner.extent == 0)
    return calls; // an empty batch: nothing to compute
  // One call per index of the axes left outside the collapsed group.
  llvm::SmallVector<int64_t, 4> idx(outer, 0);
  for (;;) {
    BlasGemm c = base;
    for (size_t i = 0; i < outer; ++i) {
      c.offFirst += idx[i] * axes[i].first;
      c.offSecond += idx[i] * axes[i].second;
      c.offC += idx[i] * axes[i].c;
    }
    calls.push_back(c);
    size_t d = outer;
    while (d > 0 && ++idx[d - 1] == axes[d - 1].extent)
      idx[--d] = 0;
    if (d == 0)
      break;
  }
  return calls;
}

} // namespace cumo
