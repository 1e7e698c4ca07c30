// The geometry of a matrix product: numpy's matmul as a gufunc with the
// signature (n?,k),(k,m?)->(n?,m?) (../shared/seeds/002), and how each
// operand is handed to a column-major BLAS where it lies. Plain C++, so the
// lowering to cuBLAS calls is tested on machines without a GPU.
//
// An operand is a stack of matrices: its last two axes are the core (one
// axis for a vector, which numpy promotes to a matrix and removes from the
// answer), the axes before them the batch, broadcast against the other
// operand's. A core is blasable when one of its axes has unit stride and
// the other steps at least a row (or column) at a time, the check of
// numpy's is_corder_blasable_2d; it then goes to BLAS as it is, a
// transposed view with the transpose flag set. Any other core is copied
// once at the call (ops/matmul.cpp).
#pragma once

#include "core/shape.h"
#include "ops/opaque.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string_view>

namespace cumo {

/// The shapes of a product, checked: ShapeError naming `op` for a 0-dim
/// operand, a core-dimension mismatch or batches that do not broadcast.
struct MatmulShape {
  Shape batch;              ///< the broadcast batch shape
  int64_t n = 1, k = 0, m = 1;
  bool aVector = false;     ///< a was 1-D: n is 1 and leaves the answer
  bool bVector = false;     ///< b was 1-D: m is 1 and leaves the answer
  Shape result;             ///< batch, then n and m where not removed
};
MatmulShape matmulShape(std::string_view op, llvm::ArrayRef<int64_t> a,
                        llvm::ArrayRef<int64_t> b);

/// The largest extent, stride and count a BLAS int holds (one less than
/// INT_MAX, in case an implementation loops to an inclusive bound).
constexpr int64_t kBlasMaxInt = 2147483646;

/// A core of `rows` x `cols` whose elements step `rowStride` and
/// `colStride` apart.
struct CoreLayout {
  int64_t rows = 1, cols = 1, rowStride = 0, colStride = 0;
  /// Row-major: the columns adjacent, the rows at least a row apart.
  bool rowMajor() const;
  /// Column-major: a transposed row-major core.
  bool colMajor() const;
  bool blasable() const;
  /// The leading dimension BLAS is given for it (rowMajor or colMajor).
  int64_t leadingDimension() const;
};

/// The core of an operand with `shape` and `strides`, as the matrix the
/// product reads: a vector `a` is one row, a vector `b` one column.
CoreLayout coreOf(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides,
                  bool isB);

/// One column-major gemm call. Row-major C = A B is computed as
/// C^T = B^T A^T: cuBLAS's first operand is our B, its second our A, and a
/// row-major core is exactly the transpose cuBLAS wants, so it goes in with
/// the flag off; a column-major (transposed) one goes in with it on.
struct BlasGemm {
  bool transFirst = false, transSecond = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t ldFirst = 1, ldSecond = 1, ldc = 1;
  /// Batch strides (elements) of a strided-batched call, and the count.
  int64_t strideFirst = 0, strideSecond = 0, strideC = 0;
  int64_t batch = 1;
  /// Element offsets of the call's first matrices.
  int64_t offFirst = 0, offSecond = 0, offC = 0;
  bool operator==(const BlasGemm &o) const;
};

/// The calls that compute `call` (an op MatMul whose operand cores are
/// blasable): batch axes that collapse into one stride become one
/// strided-batched call, the rest are enumerated, one call each.
llvm::SmallVector<BlasGemm, 1> planBlasGemm(const OpaqueCall &call);

/// Per output batch index: each operand's batch strides over the broadcast
/// batch shape (0 along broadcast axes), for the reference and the
/// generated integer kernel.
struct MatmulStrides {
  MatmulShape shape;
  CoreLayout a, b;
  Strides aBatch, bBatch;
};
MatmulStrides matmulStrides(const OpaqueCall &call);

} // namespace cumo
