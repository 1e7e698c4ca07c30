#include "graph/cuda/cublas_matmul.h"

#include "core/cuda/cuda_check.h"
#include "core/error.h"
#include "core/stats.h"
#include "fusion/cuda_codegen.h"
#include "graph/opaque_call.h"
#include "ops/matmul.h"

#include <cublas_v2.h>
#include <cuComplex.h>

#include <cstring>
#include <string>

namespace cumo {

namespace {

/// cuBLAS's recommended workspace on Hopper; set explicitly so no call
/// allocates one while it is being captured.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

void cublasCheck(cublasStatus_t s, const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return;
  cudaGetLastError();
  opError(s == CUBLAS_STATUS_ALLOC_FAILED ? ErrorKind::OutOfMemory : ErrorKind::Cuda, what,
          std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s));
}

/// The element type cuBLAS is told, the type it computes in, and alpha
/// and beta in the scalar type that compute type wants.
struct BlasTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  alignas(16) unsigned char alpha[16];
  alignas(16) unsigned char beta[16];
};

BlasTypes blasTypes(DType t, const Scalar &alpha, bool tf32) {
  BlasTypes b{};
  auto put = [&](auto a, auto zero) {
    static_assert(sizeof(a) <= sizeof(b.alpha));
    std::memcpy(b.alpha, &a, sizeof(a));
    std::memcpy(b.beta, &zero, sizeof(zero));
  };
  cublasComputeType_t single = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  switch (t) {
  case DType::SFloat:
    b.data = CUDA_R_32F, b.compute = single;
    put(float(alpha.asDouble()), 0.0f);
    break;
  case DType::HFloat: // single-precision accumulator, one rounding at the end
    b.data = CUDA_R_16F, b.compute = CUBLAS_COMPUTE_32F;
    put(float(alpha.asDouble()), 0.0f);
    break;
  case DType::BFloat:
    b.data = CUDA_R_16BF, b.compute = CUBLAS_COMPUTE_32F;
    put(float(alpha.asDouble()), 0.0f);
    break;
  case DType::DFloat:
    b.data = CUDA_R_64F, b.compute = CUBLAS_COMPUTE_64F;
    put(alpha.asDouble(), 0.0);
    break;
  case DType::SComplex:
    b.data = CUDA_C_32F, b.compute = single;
    put(make_cuComplex(float(alpha.asDouble()), float(alpha.isComplex() ? alpha.im : 0)),
        make_cuComplex(0, 0));
    break;
  case DType::DComplex:
    b.data = CUDA_C_64F, b.compute = CUBLAS_COMPUTE_64F;
    put(make_cuDoubleComplex(alpha.asDouble(), alpha.isComplex() ? alpha.im : 0),
        make_cuDoubleComplex(0, 0));
    break;
  default:
    throw Error(ErrorKind::Internal, "[matmul] no cuBLAS type for " + std::string(nameOf(t)));
  }
  return b;
}

cublasOperation_t op(bool transpose) { return transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

} // namespace

bool MatmulWork::operator==(const MatmulWork &o) const {
  return dtype == o.dtype && alpha == o.alpha && tf32 == o.tf32 && calls == o.calls &&
         a == o.a && b == o.b && c == o.c;
}

bool CublasMatmul::computes(const Kernel &k) {
  if (k.kind != Kernel::Kind::Opaque || k.opaqueOp != OpKind::MatMul)
    return false;
  DType t = k.opaqueDtype;
  return (isFloat(t) || isComplex(t)) && !isSmallProduct(k);
}

MatmulWork CublasMatmul::workOf(const Kernel &k, llvm::ArrayRef<void *> pointers) {
  OpaqueCall call = opaqueCallOf(k, pointers);
  MatmulWork w;
  w.dtype = call.outDtype;
  w.alpha = call.scalar;
  w.tf32 = (w.dtype == DType::SFloat || w.dtype == DType::SComplex) && allowTf32();
  w.a = call.operands[0].data;
  w.b = call.operands[1].data;
  w.c = call.out;
  // matmulOp records a product with k = 0 as a fill, so every call here
  // has something to sum.
  w.calls = planBlasGemm(call);
  return w;
}

CublasMatmul::~CublasMatmul() {
  // At exit the runtime may already be gone: nothing here is checked.
  for (const Captured &c : captures_)
    cudaGraphDestroy(c.graph);
  if (handle_)
    cublasDestroy(handle_);
  if (workspace_)
    cudaFree(workspace_);
  if (captureStream_)
    cudaStreamDestroy(captureStream_);
}

void CublasMatmul::open() {
  if (handle_)
    return;
  cublasCheck(cublasCreate(&handle_), "cublasCreate");
  cudaCheck(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc");
  cudaCheck(cudaStreamCreateWithFlags(&captureStream_, cudaStreamNonBlocking),
            "cudaStreamCreate");
}

void CublasMatmul::issue(const MatmulWork &w, cudaStream_t stream) {
  open();
  cublasCheck(cublasSetStream(handle_, stream), "cublasSetStream");
  // cublasSetStream puts the default workspace back: set ours after it.
  cublasCheck(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes), "cublasSetWorkspace");
  BlasTypes t = blasTypes(w.dtype, w.alpha, w.tf32);
  size_t e = sizeOf(w.dtype);
  for (const BlasGemm &g : w.calls) {
    const char *first = static_cast<const char *>(w.b) + g.offFirst * int64_t(e);
    const char *second = static_cast<const char *>(w.a) + g.offSecond * int64_t(e);
    char *c = static_cast<char *>(w.c) + g.offC * int64_t(e);
    if (g.batch == 1) {
      cublasCheck(cublasGemmEx(handle_, op(g.transFirst), op(g.transSecond), int(g.m),
                               int(g.n), int(g.k), t.alpha, first, t.data, int(g.ldFirst),
                               second, t.data, int(g.ldSecond), t.beta, c, t.data,
                               int(g.ldc), t.compute, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
    } else {
      cublasCheck(cublasGemmStridedBatchedEx(
                      handle_, op(g.transFirst), op(g.transSecond), int(g.m), int(g.n),
                      int(g.k), t.alpha, first, t.data, int(g.ldFirst), g.strideFirst,
                      second, t.data, int(g.ldSecond), g.strideSecond, t.beta, c, t.data,
                      int(g.ldc), g.strideC, int(g.batch), t.compute, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmStridedBatchedEx");
    }
  }
}

void CublasMatmul::enqueue(const MatmulWork &w, cudaStream_t stream) { issue(w, stream); }

cudaGraph_t CublasMatmul::capture(const MatmulWork &w) {
  for (const Captured &c : captures_)
    if (c.work == w)
      return c.graph;
  cudaGraph_t g = captureNew(w);
  if (captures_.size() == kCapturesKept) {
    cudaGraphDestroy(captures_.front().graph);
    captures_.erase(captures_.begin());
  }
  captures_.push_back({w, g});
  return g;
}

cudaGraph_t CublasMatmul::captureNew(const MatmulWork &w) {
  open();
  cudaCheck(cudaStreamBeginCapture(captureStream_, cudaStreamCaptureModeRelaxed),
            "cudaStreamBeginCapture");
  cudaGraph_t g = nullptr;
  try {
    issue(w, captureStream_);
  } catch (...) {
    if (cudaStreamEndCapture(captureStream_, &g) == cudaSuccess && g)
      cudaGraphDestroy(g);
    cudaGetLastError();
    throw;
  }
  cudaCheck(cudaStreamEndCapture(captureStream_, &g), "cudaStreamEndCapture");
  ++Stats::get().library_captures;
  return g;
}

} // namespace cumo
