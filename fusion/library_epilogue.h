// Library epilogues: the one consumer of a cuBLAS product that cuBLASLt
// adds where it writes the product, so the sum makes no pass over memory
// of its own. A prefill or a batch of GPT-2 (more than 16 rows, so cuBLAS
// computes the products) writes `h.dot(w) + b` after each product, and
// `gemm(b, c: c)` is `a @ b + c`; cublasLtMatmul computes either as
// alpha * acc + bias (its BIAS epilogue, the bias broadcast along the
// result's rows) or alpha * acc + beta * C with C the addend and beta 1.
//
// Fusion never changes an answer but by the order of a reduction (the
// product's own sum: cuBLASLt and cublasGemmEx may pick kernels that split
// k differently), so a consumer joins only where cuBLASLt adds exactly what
// was written (fusion/epilogue.h has the generated kernel's wider rule for
// small products):
// - an add of the product and an addend of its class: a bias along the
//   last axis (the same vector for every row) or an array of its shape;
// - SFloat and DFloat only: cuBLASLt adds in the compute type, which for
//   these is the class itself, so acc + b rounds once, as the product
//   rounded (exactly acc) plus b does. A sixteen-bit product would add
//   before its one rounding where the written form rounds twice;
// - alpha 1: otherwise alpha * acc rounds before the add in the written
//   form and may not inside cuBLASLt;
// - never gelu or relu: cuBLASLt's activations are its own formulas, not
//   the bits of our gelu_tanh;
// - a product nothing else reads. Ruby may still hold it (a temporary the
//   GC has not reached): the kernel then stores it too, and when its
//   wrapper is still alive as the plan runs, the executor computes the
//   product alone and adds the addend in a second call, as the two
//   kernels would have (graph/cuda/cublas_matmul.h);
// - an addend cuBLASLt can read where it lies (a bias with unit stride, a
//   residual row-major like the result) that needs no pass to be stored:
//   a materialized array, or a value the plan stores anyway.
#pragma once

#include "fusion/plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace cumo {

class Node;
struct Schedule;

enum class LibraryEpilogueKind : uint8_t {
  Bias,     ///< cuBLASLt's BIAS epilogue: a vector along the last axis
  Residual, ///< beta * C, beta 1: an array of the result's layout
};

/// Whether `n` is a product cuBLAS computes whose consumer cuBLASLt could
/// add exactly: a MatMul of SFloat or DFloat that is not small
/// (ops/matmul.h, isSmallProduct) and has alpha 1.
bool takesLibraryEpilogue(const Node *n);

/// The addend, when `consumer` is `product + o` or `o + product` that
/// cuBLASLt can compute as `product`'s epilogue: o of the product's class,
/// a bias (its last extent the product's, every other 1; the product's
/// second operand a matrix, so that axis is the rows cuBLASLt broadcasts
/// along) or a residual of the product's shape; when materialized, laid
/// out so cuBLASLt reads it where it lies. Null otherwise.
const Node *libraryAddend(const Node *product, const Node *consumer);

/// The kind of addend cuBLASLt reads at `strides` (elements) over the
/// product's `domain`, axes of extent 1 aside: a residual is row-major (so
/// a bias of a product with one row is one too); a bias steps 1 along the
/// last axis and 0 along the others. None: it cannot be read where it
/// lies.
std::optional<LibraryEpilogueKind> addendKind(llvm::ArrayRef<int64_t> domain,
                                              llvm::ArrayRef<int64_t> strides);

/// The member of `product`'s library epilogue (one index into `s.nodes`)
/// given the facts as they stand and `readers[i]`, the nodes that read
/// node i; empty when none joins. The addend of a member precedes the
/// product in recording order or is materialized, so the product's
/// analysis sees where it is stored.
llvm::SmallVector<uint32_t, 4>
findLibraryEpilogue(const Schedule &s, uint32_t product,
                    llvm::ArrayRef<llvm::SmallVector<uint32_t, 2>> readers);

/// What cuBLASLt computes for a plan's kernel: the addend's load, the
/// sum's store, and the product's own store when Ruby holds it (both
/// row-major).
struct LibraryEpilogue {
  LibraryEpilogueKind kind = LibraryEpilogueKind::Bias;
  Load addend;
  Store out;
  std::optional<Store> product;
};

/// The library epilogue of kernel `k` (a product with an epilogue of the
/// form findLibraryEpilogue picks, as lowering writes it); nullopt for any
/// other kernel.
std::optional<LibraryEpilogue> libraryEpilogueOf(const Kernel &k);

/// The kernel's library epilogue, or an Internal error: a cuBLAS product
/// whose lowered epilogue cuBLASLt cannot compute means schedule and
/// lowering disagree.
LibraryEpilogue requireLibraryEpilogue(const Kernel &k);

} // namespace cumo
