// Matrix products of the float and complex classes through cuBLAS. A plan's
// MatMul kernel becomes the gemm calls ops/matmul_layout.h plans for it;
// inside a CUDA graph they are one child graph, captured from a private
// stream (cuBLAS has no graph-node API of its own), and captured again when
// the pointers or extents they were captured with change.
//
// A kernel with a library epilogue (fusion/library_epilogue.h) adds a bias
// or a residual to the product. When Ruby no longer holds the product, one
// cublasLtMatmul writes the sum (its BIAS epilogue, or beta * C with beta
// 1), in SFloat (in DFloat it measured slower than the two calls below). When the product must be stored too, or cuBLASLt has no algorithm
// for the call, the product is computed alone and the addend added by a
// second call, exactly as the separate kernel would: cublas<t>geam for a
// residual, cublas<t>ger of the bias and a vector of ones for a bias.
#pragma once

#include "core/dtype.h"
#include "core/scalar.h"
#include "fusion/library_epilogue.h"
#include "fusion/plan.h"
#include "ops/matmul_layout.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

struct cublasContext;

namespace cumo {

/// Everything one MatMul kernel's calls depend on: a captured graph of
/// equal work is still right.
struct MatmulWork {
  DType dtype = DType::SFloat;
  Scalar alpha;
  bool tf32 = false;
  llvm::SmallVector<BlasGemm, 1> calls;
  const void *a = nullptr, *b = nullptr;
  /// The result: the product, or with an epilogue the sum (null when
  /// nothing wants it).
  void *c = nullptr;
  /// A library epilogue: what it adds, where the addend lies, and where
  /// the product itself goes when Ruby still holds it (else null).
  bool epilogue = false;
  LibraryEpilogueKind epilogueKind = LibraryEpilogueKind::Bias;
  const void *addend = nullptr;
  void *product = nullptr;
  /// The sum's last extent, and how many such rows it has.
  int64_t rowLength = 0, rows = 0;
  bool operator==(const MatmulWork &o) const;
};

class CublasMatmul {
public:
  CublasMatmul() = default;
  ~CublasMatmul();
  CublasMatmul(const CublasMatmul &) = delete;
  CublasMatmul &operator=(const CublasMatmul &) = delete;

  /// Whether cuBLAS computes this kernel (a MatMul of a float or complex
  /// class); the generated kernel computes the others.
  static bool computes(const Kernel &k);
  /// The work of kernel `k` with plan buffers at `pointers`.
  static MatmulWork workOf(const Kernel &k, llvm::ArrayRef<void *> pointers);

  /// Issues `w` on `stream`.
  void enqueue(const MatmulWork &w, cudaStream_t stream);
  /// A graph of `w`'s calls, for a child graph node. The graph stays
  /// owned here: a replayed plan's buffers cycle through the pool's few
  /// addresses, so the last kCapturesKept captures are kept and one of
  /// equal work is answered without capturing again.
  cudaGraph_t capture(const MatmulWork &w);

private:
  static constexpr size_t kCapturesKept = 32;

  /// How `w` is issued, decided before any capture begins (the decision
  /// may allocate, which a capture forbids).
  struct Route {
    bool lt = false; ///< one cublasLtMatmul per call writes the sum
    /// Its algorithm per call, when `lt`.
    llvm::SmallVector<cublasLtMatmulAlgo_t, 1> algos;
  };

  void open();
  Route route(const MatmulWork &w);
  void issue(const MatmulWork &w, const Route &r, cudaStream_t stream);
  /// The product alone: the gemm calls into `out`.
  void issueProduct(const MatmulWork &w, void *out, cudaStream_t stream);
  /// The sum by cuBLASLt: false when it has no algorithm for a call.
  bool findLtAlgos(const MatmulWork &w, Route &r);
  void issueLt(const MatmulWork &w, const Route &r, cudaStream_t stream);
  /// The addend added to the product at `from` into the sum (w.c), by a
  /// second cuBLAS call.
  void addAddend(const MatmulWork &w, const void *from, cudaStream_t stream);
  /// At least `n` ones of class `t` (SFloat or DFloat) in device memory;
  /// called before a capture, as it may allocate.
  void ensureOnes(DType t, int64_t n);
  cudaGraph_t captureNew(const MatmulWork &w);

  struct Captured {
    MatmulWork work;
    cudaGraph_t graph;
  };
  /// Oldest first.
  std::vector<Captured> captures_;

  cublasContext *handle_ = nullptr;
  cublasLtContext *lt_ = nullptr;
  void *workspace_ = nullptr;
  cudaStream_t captureStream_ = nullptr;
  /// Ones for a bias added by cublas<t>ger: SFloat's, DFloat's.
  struct Ones {
    void *data = nullptr;
    int64_t count = 0;
  };
  Ones ones_[2];
  std::vector<void *> onesAllocations_;
};

} // namespace cumo
