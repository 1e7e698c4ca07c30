// Matrix products of the float and complex classes through cuBLAS. A plan's
// MatMul kernel becomes the gemm calls ops/matmul_layout.h plans for it;
// inside a CUDA graph they are one child graph, captured from a private
// stream (cuBLAS has no graph-node API of its own), and captured again when
// the pointers or extents they were captured with change.
#pragma once

#include "core/dtype.h"
#include "core/scalar.h"
#include "fusion/plan.h"
#include "ops/matmul_layout.h"

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
  void *c = nullptr;
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

  void open();
  void issue(const MatmulWork &w, cudaStream_t stream);
  cudaGraph_t captureNew(const MatmulWork &w);

  struct Captured {
    MatmulWork work;
    cudaGraph_t graph;
  };
  /// Oldest first.
  std::vector<Captured> captures_;

  cublasContext *handle_ = nullptr;
  void *workspace_ = nullptr;
  cudaStream_t captureStream_ = nullptr;
};

} // namespace cumo
