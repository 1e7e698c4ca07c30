#include "graph/cuda/cublas_matmul.h"

#include "core/cuda/cuda_check.h"
#include "core/error.h"
#include "core/stats.h"
#include "fusion/cuda_codegen.h"
#include "graph/opaque_call.h"
#include "ops/matmul.h"

#include <cublas_v2.h>
#include <cuComplex.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

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

/// `beta` is 0 but for a residual cuBLASLt adds as beta * C (1).
BlasTypes blasTypes(DType t, const Scalar &alpha, bool tf32, int beta = 0) {
  BlasTypes b{};
  auto put = [&](auto a, auto zero) {
    static_assert(sizeof(a) <= sizeof(b.alpha));
    std::memcpy(b.alpha, &a, sizeof(a));
    // Only the real classes take a beta other than 0.
    if constexpr (std::is_arithmetic_v<decltype(zero)>)
      zero = decltype(zero)(beta);
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

const char *at(const void *p, int64_t elements, size_t elementBytes) {
  return static_cast<const char *>(p) + elements * int64_t(elementBytes);
}
char *at(void *p, int64_t elements, size_t elementBytes) {
  return static_cast<char *>(p) + elements * int64_t(elementBytes);
}

/// The scale type cuBLASLt wants for a compute type: the real type of
/// alpha and beta as blasTypes packs them.
cudaDataType_t scaleType(cublasComputeType_t c) {
  return c == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F;
}

template <class T> void setAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, T v) {
  cublasCheck(cublasLtMatmulDescSetAttribute(d, a, &v, sizeof(v)),
              "cublasLtMatmulDescSetAttribute");
}

/// One gemm call of a work as a cuBLASLt operation with its epilogue: the
/// descriptors, owned for the call's duration, and the addresses.
class LtOperation {
public:
  LtOperation(const MatmulWork &w, const BlasGemm &g, const BlasTypes &t) {
    try {
      build(w, g, t);
    } catch (...) {
      release(); // a constructor that throws runs no destructor
      throw;
    }
  }
  ~LtOperation() { release(); }
  LtOperation(const LtOperation &) = delete;
  LtOperation &operator=(const LtOperation &) = delete;

  /// The alignment in bytes (a power of two, at most 256) cuBLASLt may
  /// assume of each matrix over every matrix of the call: A, B, C, D.
  std::array<uint32_t, 4> alignments(const BlasGemm &g, size_t elementBytes) const {
    auto of = [&](const void *p, int64_t stride) {
      uint64_t bits = reinterpret_cast<uintptr_t>(p) | 256;
      if (g.batch > 1)
        bits |= uint64_t(stride) * elementBytes;
      return uint32_t(bits & (~bits + 1)); // the lowest set bit
    };
    return {of(first, g.strideFirst), of(second, g.strideSecond), of(c, g.strideC),
            of(d, g.strideC)};
  }

  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t aDesc = nullptr, bDesc = nullptr, cDesc = nullptr, dDesc = nullptr;
  const void *first = nullptr, *second = nullptr, *c = nullptr;
  void *d = nullptr;

private:
  void build(const MatmulWork &w, const BlasGemm &g, const BlasTypes &t) {
    size_t e = sizeOf(w.dtype);
    first = at(w.b, g.offFirst, e);
    second = at(w.a, g.offSecond, e);
    d = at(w.c, g.offC, e);
    bool residual = w.epilogueKind == LibraryEpilogueKind::Residual;
    // A residual lies as the sum does (row-major, same shape): C is the
    // addend at the sum's offsets. Beside a bias, beta is 0 and C unread.
    c = residual ? at(w.addend, g.offC, e) : d;
    cublasCheck(cublasLtMatmulDescCreate(&desc, t.compute, scaleType(t.compute)),
                "cublasLtMatmulDescCreate");
    setAttribute<int32_t>(desc, CUBLASLT_MATMUL_DESC_TRANSA, op(g.transFirst));
    setAttribute<int32_t>(desc, CUBLASLT_MATMUL_DESC_TRANSB, op(g.transSecond));
    if (!residual) {
      setAttribute<uint32_t>(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
      setAttribute<const void *>(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, w.addend);
      setAttribute<int32_t>(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, t.data);
      // Every matrix of a batch adds the same bias.
      setAttribute<int64_t>(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, 0);
    }
    layout(&aDesc, t.data, g.transFirst ? g.k : g.m, g.transFirst ? g.m : g.k, g.ldFirst,
           g.batch, g.strideFirst);
    layout(&bDesc, t.data, g.transSecond ? g.n : g.k, g.transSecond ? g.k : g.n, g.ldSecond,
           g.batch, g.strideSecond);
    layout(&cDesc, t.data, g.m, g.n, g.ldc, g.batch, g.strideC);
    layout(&dDesc, t.data, g.m, g.n, g.ldc, g.batch, g.strideC);
  }
  void release() {
    for (cublasLtMatrixLayout_t *l : {&aDesc, &bDesc, &cDesc, &dDesc})
      if (*l) {
        cublasLtMatrixLayoutDestroy(*l);
        *l = nullptr;
      }
    if (desc) {
      cublasLtMatmulDescDestroy(desc);
      desc = nullptr;
    }
  }
  static void layout(cublasLtMatrixLayout_t *l, cudaDataType_t type, int64_t rows,
                     int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
    cublasCheck(cublasLtMatrixLayoutCreate(l, type, uint64_t(rows), uint64_t(cols), ld),
                "cublasLtMatrixLayoutCreate");
    if (batch == 1)
      return;
    int32_t count = int32_t(batch);
    cublasCheck(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                 &count, sizeof(count)),
                "cublasLtMatrixLayoutSetAttribute");
    cublasCheck(cublasLtMatrixLayoutSetAttribute(
                    *l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
                "cublasLtMatrixLayoutSetAttribute");
  }
};

} // namespace

bool MatmulWork::operator==(const MatmulWork &o) const {
  return dtype == o.dtype && alpha == o.alpha && tf32 == o.tf32 && calls == o.calls &&
         a == o.a && b == o.b && c == o.c && epilogue == o.epilogue &&
         epilogueKind == o.epilogueKind && addend == o.addend && product == o.product &&
         rowLength == o.rowLength && rows == o.rows;
}

bool CublasMatmul::computes(const Kernel &k) { return runsInLibrary(k); }

MatmulWork CublasMatmul::workOf(const Kernel &k, llvm::ArrayRef<void *> pointers) {
  OpaqueCall call = opaqueCallOf(k, pointers);
  MatmulWork w;
  w.dtype = call.outDtype;
  w.alpha = call.scalar;
  w.tf32 = (w.dtype == DType::SFloat || w.dtype == DType::SComplex) && allowTf32();
  w.a = call.operands[0].data;
  w.b = call.operands[1].data;
  w.c = call.out;
  if (k.hasEpilogue()) {
    LibraryEpilogue e = requireLibraryEpilogue(k);
    w.epilogue = true;
    w.epilogueKind = e.kind;
    w.c = pointers[e.out.buffer];
    w.addend = at(pointers[e.addend.buffer], e.addend.index.offset, sizeOf(w.dtype));
    w.product = e.product ? pointers[e.product->buffer] : nullptr;
    w.rowLength = k.domain.back();
    w.rows = k.domainSize() / w.rowLength;
  }
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
  if (lt_)
    cublasLtDestroy(lt_);
  for (void *p : onesAllocations_)
    cudaFree(p);
  if (workspace_)
    cudaFree(workspace_);
  if (captureStream_)
    cudaStreamDestroy(captureStream_);
}

void CublasMatmul::open() {
  // handle_ is set last: a failure part-way leaves nothing half open.
  if (handle_)
    return;
  if (!lt_)
    cublasCheck(cublasLtCreate(&lt_), "cublasLtCreate");
  if (!workspace_)
    cudaCheck(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc");
  if (!captureStream_)
    cudaCheck(cudaStreamCreateWithFlags(&captureStream_, cudaStreamNonBlocking),
              "cudaStreamCreate");
  cublasCheck(cublasCreate(&handle_), "cublasCreate");
}

void CublasMatmul::issueProduct(const MatmulWork &w, void *out, cudaStream_t stream) {
  BlasTypes t = blasTypes(w.dtype, w.alpha, w.tf32);
  size_t e = sizeOf(w.dtype);
  for (const BlasGemm &g : w.calls) {
    const char *first = at(w.b, g.offFirst, e);
    const char *second = at(w.a, g.offSecond, e);
    char *c = at(out, g.offC, e);
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

bool CublasMatmul::findLtAlgos(const MatmulWork &w, Route &r) {
  bool residual = w.epilogueKind == LibraryEpilogueKind::Residual;
  // A bias cuBLASLt would read under 16-byte alignment has faulted
  // elsewhere (its address is not among the alignments it is told).
  if (!residual && reinterpret_cast<uintptr_t>(w.addend) % 16 != 0)
    return false;
  BlasTypes t = blasTypes(w.dtype, w.alpha, w.tf32, residual ? 1 : 0);
  size_t e = sizeOf(w.dtype);
  try {
    for (const BlasGemm &g : w.calls) {
      LtOperation o(w, g, t);
      // The heuristic sees layouts, not addresses: unless told, it assumes
      // 256-byte alignment and may pick a kernel a view's offset breaks.
      std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, cublasStatus_t (*)(
                                                           cublasLtMatmulPreference_t)>
          pref(nullptr, cublasLtMatmulPreferenceDestroy);
      cublasLtMatmulPreference_t raw = nullptr;
      cublasCheck(cublasLtMatmulPreferenceCreate(&raw), "cublasLtMatmulPreferenceCreate");
      pref.reset(raw);
      auto prefer = [&](cublasLtMatmulPreferenceAttributes_t a, auto v) {
        cublasCheck(cublasLtMatmulPreferenceSetAttribute(raw, a, &v, sizeof(v)),
                    "cublasLtMatmulPreferenceSetAttribute");
      };
      prefer(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(kWorkspaceBytes));
      std::array<uint32_t, 4> align = o.alignments(g, e);
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align[0]);
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align[1]);
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align[2]);
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align[3]);
      cublasLtMatmulHeuristicResult_t result{};
      int count = 0;
      // NOT_SUPPORTED (or no result) means no algorithm for this call:
      // the product and a second call compute the sum instead.
      cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_, o.desc, o.aDesc, o.bDesc, o.cDesc,
                                                         o.dDesc, raw, 1, &result, &count);
      if (st != CUBLAS_STATUS_SUCCESS || count == 0 || result.state != CUBLAS_STATUS_SUCCESS)
        return false;
      r.algos.push_back(result.algo);
    }
  } catch (const Error &) {
    // A descriptor cuBLASLt refused: the fallback needs none of them.
    cudaGetLastError();
    return false;
  }
  return true;
}

void CublasMatmul::issueLt(const MatmulWork &w, const Route &r, cudaStream_t stream) {
  bool residual = w.epilogueKind == LibraryEpilogueKind::Residual;
  BlasTypes t = blasTypes(w.dtype, w.alpha, w.tf32, residual ? 1 : 0);
  for (size_t i = 0; i < w.calls.size(); ++i) {
    LtOperation o(w, w.calls[i], t);
    cublasCheck(cublasLtMatmul(lt_, o.desc, t.alpha, o.first, o.aDesc, o.second, o.bDesc,
                               t.beta, o.c, o.cDesc, o.d, o.dDesc, &r.algos[i], workspace_,
                               kWorkspaceBytes, stream),
                "cublasLtMatmul");
  }
}

void CublasMatmul::addAddend(const MatmulWork &w, const void *from, cudaStream_t stream) {
  size_t e = sizeOf(w.dtype);
  const bool single = w.dtype == DType::SFloat;
  const float oneF = 1.0f;
  const double oneD = 1.0;
  int len = int(w.rowLength);
  if (w.epilogueKind == LibraryEpilogueKind::Bias && from != w.c)
    cudaCheck(cudaMemcpyAsync(w.c, from, size_t(w.rows * w.rowLength) * e,
                              cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync");
  // The sum as column-major rowLength x rows, in chunks cuBLAS can count.
  for (int64_t row = 0; row < w.rows; row += kBlasMaxInt) {
    int count = int(std::min<int64_t>(kBlasMaxInt, w.rows - row));
    int64_t off = row * w.rowLength;
    char *c = at(w.c, off, e);
    if (w.epilogueKind == LibraryEpilogueKind::Residual) {
      // c = product + residual, in place when the product is the sum.
      const char *p = at(from, off, e), *x = at(w.addend, off, e);
      if (single)
        cublasCheck(cublasSgeam(handle_, CUBLAS_OP_N, CUBLAS_OP_N, len, count, &oneF,
                                reinterpret_cast<const float *>(p), len, &oneF,
                                reinterpret_cast<const float *>(x), len,
                                reinterpret_cast<float *>(c), len),
                    "cublasSgeam");
      else
        cublasCheck(cublasDgeam(handle_, CUBLAS_OP_N, CUBLAS_OP_N, len, count, &oneD,
                                reinterpret_cast<const double *>(p), len, &oneD,
                                reinterpret_cast<const double *>(x), len,
                                reinterpret_cast<double *>(c), len),
                    "cublasDgeam");
    } else {
      // c += bias * ones^T: each element c + bias * 1, one rounding.
      if (single)
        cublasCheck(cublasSger(handle_, len, count, &oneF,
                               reinterpret_cast<const float *>(w.addend), 1,
                               reinterpret_cast<const float *>(ones_[0].data), 1,
                               reinterpret_cast<float *>(c), len),
                    "cublasSger");
      else
        cublasCheck(cublasDger(handle_, len, count, &oneD,
                               reinterpret_cast<const double *>(w.addend), 1,
                               reinterpret_cast<const double *>(ones_[1].data), 1,
                               reinterpret_cast<double *>(c), len),
                    "cublasDger");
    }
  }
}

void CublasMatmul::ensureOnes(DType t, int64_t n) {
  Ones &o = ones_[t == DType::SFloat ? 0 : 1];
  if (o.count >= n)
    return;
  // Geometric, and never freed before the end: a graph captured with the
  // old vector may still be replayed.
  int64_t count = std::max<int64_t>(n, o.count * 2);
  size_t bytes = size_t(count) * sizeOf(t);
  void *p = nullptr;
  cudaCheck(cudaMalloc(&p, bytes), "cudaMalloc");
  onesAllocations_.push_back(p);
  std::vector<char> host(bytes);
  for (int64_t i = 0; i < count; ++i) {
    if (t == DType::SFloat) {
      float one = 1.0f;
      std::memcpy(host.data() + i * 4, &one, 4);
    } else {
      double one = 1.0;
      std::memcpy(host.data() + i * 8, &one, 8);
    }
  }
  cudaCheck(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  // From pageable memory the copy may return before the data lands, and
  // the executor's non-blocking stream is not ordered after it.
  cudaCheck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  o.data = p;
  o.count = count;
}

CublasMatmul::Route CublasMatmul::route(const MatmulWork &w) {
  open();
  Route r;
  if (!w.epilogue || !w.c)
    return r;
  // Ruby still holds the product: it is computed on its own anyway. In
  // DFloat cuBLASLt's kernels were the slower way on an H100 (2026-12-05,
  // bench/matmul.rb's matmul_bias: 256x768x2304 50.6 us fused against 36.2
  // for cublasGemmEx and ger; 256x768x50257 674 against 618): the product
  // and the second call there.
  if (!w.product && w.dtype != DType::DFloat && findLtAlgos(w, r)) {
    r.lt = true;
    return r;
  }
  r.algos.clear();
  if (w.epilogueKind == LibraryEpilogueKind::Bias)
    ensureOnes(w.dtype, std::min<int64_t>(w.rows, kBlasMaxInt));
  return r;
}

void CublasMatmul::issue(const MatmulWork &w, const Route &r, cudaStream_t stream) {
  open();
  cublasCheck(cublasSetStream(handle_, stream), "cublasSetStream");
  // cublasSetStream puts the default workspace back: set ours after it.
  cublasCheck(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes), "cublasSetWorkspace");
  if (!w.epilogue) {
    issueProduct(w, w.c, stream);
    return;
  }
  if (!w.c) {
    // Nothing reads the sum: at most the product, for Ruby.
    if (w.product)
      issueProduct(w, w.product, stream);
    return;
  }
  if (r.lt) {
    issueLt(w, r, stream);
    ++Stats::get().library_epilogues;
    return;
  }
  void *product = w.product ? w.product : w.c;
  issueProduct(w, product, stream);
  addAddend(w, product, stream);
  ++Stats::get().library_epilogue_adds;
}

void CublasMatmul::enqueue(const MatmulWork &w, cudaStream_t stream) {
  issue(w, route(w), stream);
}

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
  Route r = route(w);
  cudaCheck(cudaStreamBeginCapture(captureStream_, cudaStreamCaptureModeRelaxed),
            "cudaStreamBeginCapture");
  cudaGraph_t g = nullptr;
  try {
    issue(w, r, captureStream_);
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
