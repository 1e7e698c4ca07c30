// bench/kernel_times.cpp: our generated kernels of a GPT-2 decode step, each
// timed alone on the GPU, so that a change to the code generator can be
// judged kernel by kernel in seconds, without the ~4 us of events that
// CUMO_PROFILE=kernels puts around every launch of a whole decode. Cases
// run only when --cases names them time the row ops, the same written out
// of operators (written_*: a row program), quantize_symmetric and x.dup
// (the elementwise copy the row ops are held against) at issue 5's large
// shapes, and argmax of the decode's logits (argmax_1x50257: each of the
// kernels its reductions take), the same way (their "weight" is the rows
// x: weight_gb_s counts its read alone, not the write).
//
// Each case builds the plan the engine builds for one of the step's ops
// (the same fusion: a layer_norm prologue, a bias or residual epilogue),
// compiles its kernels with NVRTC as the CUDA executor does, and times each
// kernel as a CUDA graph of 32 launches whose parameter blocks cycle through
// copies of the largest input (the weight) that together exceed the L2
// four times, as bench/probes/gemv_layouts.cu times its hand-written
// kernels: the numbers compare with that probe's. One JSON line a kernel:
// microseconds a launch (best of 7 replays), the launch shape and the
// weight's bytes over the time. With --early-start the launches are chained
// as the CUDA executor chains a plan's kernels (each may begin once every
// block of the one before has, and load what no kernel writes before it
// waits), so a kernel's start-up overlaps the one before it, as in a
// decode step; without it, plainly (first run on a lent H100, 2026-12-06).
//
//   . .device/on-device.sh && export CUMO_BUILD_DIR=/tmp/b && bin/run -e 0 &&
//     /tmp/b/bench/kernel_times [--cases qkv,lm_head]
//
// (bin/run -e 0 builds; any build with the CUDA executor has it in bench/).
#include "core/array.h"
#include "core/cuda/cuda_device.h"
#include "core/device.h"
#include "core/error.h"
#include "fusion/cuda/nvrtc_compiler.h"
#include "fusion/cuda_codegen.h"
#include "fusion/lower.h"
#include "fusion/plan_print.h"
#include "graph/cuda/early_start_edge.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/index_reduction.h"
#include "ops/layout.h"
#include "ops/matmul.h"
#include "ops/quantize.h"
#include "ops/reduction.h"
#include "ops/row_ops.h"
#include "ops/shape_ops.h"


#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

using namespace cumo;

namespace {

using Handle = std::unique_ptr<ArrayHandle>;
Handle wrap(NodeRef n) { return std::make_unique<ArrayHandle>(std::move(n)); }

void ck(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "kernel_times: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

/// An uploaded array of small values with fractions (a layer_norm of
/// them is well defined; sums stay finite).
NodeRef input(DType t, Shape shape, uint64_t seed) {
  int64_t n = numElements(shape);
  std::vector<double> values(static_cast<size_t>(n));
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (double &v : values) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v = double(int64_t((x >> 33) % 2001) - 1000) / 2048;
  }
  std::vector<unsigned char> bytes(size_t(n) * sizeOf(t) + 1);
  dispatchDType(t, [&]<DType D, class T>() {
    T *p = reinterpret_cast<T *>(bytes.data());
    for (int64_t i = 0; i < n; ++i)
      p[i] = T(values[size_t(i)]);
  });
  return uploadNode(t, shape, bytes.data());
}

NodeRef binary(OpKind op, const ArrayHandle &a, const ArrayHandle &b) {
  return binaryOp(op, Operand::of(a), Operand::of(b));
}
NodeRef binary(OpKind op, const ArrayHandle &a, Scalar s) {
  return binaryOp(op, Operand::of(a), Operand::of(s));
}

/// A (k, n) weight, or an (n, k) one used transposed (read along k).
struct Weight {
  Handle stored;
  std::unique_ptr<ArrayHandle> used;
};
Weight weight(DType t, int64_t k, int64_t n, bool alongK, uint64_t seed) {
  Weight w;
  w.stored = wrap(input(t, alongK ? Shape{n, k} : Shape{k, n}, seed));
  if (alongK)
    w.used = std::make_unique<ArrayHandle>(
        w.stored->storageRef(), transposeLayout(w.stored->layout(), {}, "transpose"));
  return w;
}
const ArrayHandle &used(const Weight &w) { return w.used ? *w.used : *w.stored; }

/// layer_norm(x) @ w + bias, then gelu_tanh when `gelu`: the qkv and fc
/// products (and without bias, the LM head read along k); x has `batch`
/// rows (a decode's batch).
Plan normedProduct(DType t, int64_t k, int64_t n, bool alongK, bool biased, bool gelu,
                   int64_t batch = 1) {
  Handle x = wrap(input(t, {batch, k}, 1));
  Handle g = wrap(input(t, {k}, 2));
  Handle b = wrap(input(t, {k}, 3));
  Weight w = weight(t, k, n, alongK, 4);
  Handle rows = wrap(layerNormOp(*x, *g, *b, 1e-5));
  NodeRef product = matmulOp("matmul", *rows, used(w));
  rows.reset();
  if (!biased)
    return planForRoots({product});
  Handle p = wrap(product);
  Handle bias = wrap(input(t, {n}, 5));
  NodeRef out = binary(OpKind::Add, *p, *bias);
  p.reset();
  if (!gelu)
    return planForRoots({out});
  Handle o = wrap(out);
  NodeRef act = unaryOp(OpKind::GeluTanh, *o);
  o.reset();
  return planForRoots({act});
}

/// x @ w (+ bias, + residual): the projections, or the plain product; x
/// has `batch` rows (a decode's batch).
Plan plainProduct(DType t, int64_t k, int64_t n, bool alongK, bool residual, int64_t batch = 1) {
  Handle x = wrap(input(t, {batch, k}, 6));
  Weight w = weight(t, k, n, alongK, 7);
  NodeRef product = matmulOp("matmul", *x, used(w));
  if (!residual)
    return planForRoots({product});
  Handle p = wrap(product);
  Handle bias = wrap(input(t, {n}, 8));
  Handle r = wrap(input(t, {batch, n}, 9));
  Handle biased = wrap(binary(OpKind::Add, *p, *bias));
  p.reset();
  NodeRef out = binary(OpKind::Add, *r, *biased);
  biased.reset();
  return planForRoots({out});
}

/// Each head's query times its keys (stored (context, 64), read along k),
/// scaled and masked: the scores.
Plan scores(DType t, int64_t heads, int64_t context, int64_t dim) {
  Handle q = wrap(input(t, {1, heads, 1, dim}, 10));
  Handle keys = wrap(input(t, {1, heads, context, dim}, 11));
  ArrayHandle kt(keys->storageRef(), swapaxesLayout(keys->layout(), 2, 3));
  Handle p = wrap(matmulOp("matmul", *q, kt));
  Handle mask = wrap(input(t, {context}, 12));
  Handle s = wrap(binary(OpKind::Mul, *p, Scalar::ofFloat(0.125)));
  p.reset();
  NodeRef out = binary(OpKind::Add, *s, *mask);
  s.reset();
  return planForRoots({out});
}

/// Each head's softmax of its scores times its values (softmax in the
/// product's prologue).
Plan attention(DType t, int64_t heads, int64_t context, int64_t dim) {
  Handle s = wrap(input(t, {1, heads, 1, context}, 13));
  Handle values = wrap(input(t, {1, heads, context, dim}, 14));
  Handle probs = wrap(softmaxOp(*s));
  NodeRef out = matmulOp("matmul", *probs, *values);
  probs.reset();
  return planForRoots({out});
}

/// A row op alone over rows x cols (issue 5's bench/fused_ops.rb shapes):
/// its kernel is timed over copies of x, as the products over their weight.
Plan rowOp(DType t, OpKind op, int64_t rows, int64_t cols) {
  Handle x = wrap(input(t, {rows, cols}, 15));
  Handle g = wrap(input(t, {cols}, 16));
  Handle b = wrap(input(t, {cols}, 17));
  switch (op) {
  case OpKind::LayerNorm:
    return planForRoots({layerNormOp(*x, *g, *b, 1e-5)});
  case OpKind::RmsNorm:
    return planForRoots({rmsNormOp(*x, *g, 1e-5)});
  default:
    return planForRoots({softmaxOp(*x)});
  }
}

/// A row op written out of operators as bench/fused_ops.rb's WRITTEN
/// spells it (the fusion pass makes it one row program, not the row op's
/// kernel): timed beside rowOp's to see where the written-out form loses.
Plan writtenRowOp(DType t, OpKind op, int64_t rows, int64_t cols) {
  Handle x = wrap(input(t, {rows, cols}, 15));
  Handle g = wrap(input(t, {cols}, 16));
  Handle b = wrap(input(t, {cols}, 17));
  const int64_t last[] = {-1};
  // Each intermediate is a temporary, released after its use as the
  // bench's lambdas drop theirs: one still held would be stored too.
  auto fold = [&](OpKind f, const Handle &a) { return wrap(reduceOp(f, *a, last, true)); };
  auto un = [](OpKind f, const Handle &a) { return wrap(unaryOp(f, *a)); };
  auto bin = [](OpKind f, const Handle &a, const Handle &c) { return wrap(binary(f, *a, *c)); };
  auto plusEps = [](const Handle &a) { return wrap(binary(OpKind::Add, *a, Scalar::ofFloat(1e-5))); };
  switch (op) {
  case OpKind::LayerNorm: {
    Handle d = bin(OpKind::Sub, x, fold(OpKind::Mean, x));
    Handle n = bin(OpKind::Div, d, un(OpKind::Sqrt, plusEps(fold(OpKind::Mean, bin(OpKind::Mul, d, d)))));
    d.reset();
    Handle ng = bin(OpKind::Mul, n, g);
    n.reset();
    NodeRef out = binary(OpKind::Add, *ng, *b);
    ng.reset();
    return planForRoots({out});
  }
  case OpKind::RmsNorm: {
    Handle n = bin(OpKind::Div, x, un(OpKind::Sqrt, plusEps(fold(OpKind::Mean, bin(OpKind::Mul, x, x)))));
    NodeRef out = binary(OpKind::Mul, *n, *g);
    n.reset();
    return planForRoots({out});
  }
  default: {
    Handle e = un(OpKind::Exp, bin(OpKind::Sub, x, fold(OpKind::Max, x)));
    NodeRef out = binary(OpKind::Div, *e, *fold(OpKind::Sum, e));
    e.reset();
    return planForRoots({out});
  }
  }
}

/// quantize_symmetric over rows x cols: the Int8 rows and the scales.
Plan quantize(DType t, int64_t rows, int64_t cols) {
  Handle x = wrap(input(t, {rows, cols}, 18));
  auto [q, scale] = quantizeSymmetricOp(*x);
  return planForRoots({q, scale});
}

/// argmax of one row of n (the decode's `logits.argmax`, [1, 50257]): as
/// many kernels as the index reduction takes (ops/index_reduction.h).
Plan argmax(DType t, int64_t n) {
  Handle x = wrap(input(t, {1, n}, 20));
  return planForRoots({indexReductionOp(IndexReduction::ArgMax, *x, {}, false, false)});
}

/// x.dup over rows x cols: the plain elementwise kernel, the fused bench's
/// "copy" row, whose bandwidth the row ops are held against.
Plan copy(DType t, int64_t rows, int64_t cols) {
  Handle x = wrap(input(t, {rows, cols}, 19));
  return planForRoots({copyOf(*x)});
}

struct Case {
  const char *name;
  std::function<Plan(DType)> plan;
  /// Run only when --cases names it (not a decode step's kernel).
  bool onlyNamed = false;
};

const Case kCases[] = {
    {"qkv", [](DType t) { return normedProduct(t, 768, 2304, false, true, false); }},
    {"fc", [](DType t) { return normedProduct(t, 768, 3072, false, true, true); }},
    {"attn_proj", [](DType t) { return plainProduct(t, 768, 768, false, true); }},
    {"mlp_proj", [](DType t) { return plainProduct(t, 3072, 768, false, true); }},
    {"scores", [](DType t) { return scores(t, 12, 1024, 64); }},
    {"softmax_v", [](DType t) { return attention(t, 12, 1024, 64); }},
    {"lm_head", [](DType t) { return normedProduct(t, 768, 50257, true, false, false); }},
    // Without the row op or the consumers: bench/probes/gemv_layouts.cu's.
    {"plain_768x2304", [](DType t) { return plainProduct(t, 768, 2304, false, false); }},
    {"plain_3072x768", [](DType t) { return plainProduct(t, 3072, 768, false, false); }},
    {"plain_lm_head", [](DType t) { return plainProduct(t, 768, 50257, true, false); }},
    // A batch of 8 sequences (the decode's batch 8), whose LM head lost to
    // PyTorch's (bench/probes/gemv_lm_head.cu: 2-3x its best layout).
    {"lm_head_b8", [](DType t) { return normedProduct(t, 768, 50257, true, false, false, 8); }},
    {"plain_lm_head_b8", [](DType t) { return plainProduct(t, 768, 50257, true, false, 8); }},
    // The row ops at issue 5's large shapes (not a decode's: --cases only).
    {"layer_norm_32768x1024", [](DType t) { return rowOp(t, OpKind::LayerNorm, 32768, 1024); }, true},
    {"rms_norm_32768x1024", [](DType t) { return rowOp(t, OpKind::RmsNorm, 32768, 1024); }, true},
    {"softmax_32768x1024", [](DType t) { return rowOp(t, OpKind::Softmax, 32768, 1024); }, true},
    {"layer_norm_4096x4096", [](DType t) { return rowOp(t, OpKind::LayerNorm, 4096, 4096); }, true},
    {"rms_norm_4096x4096", [](DType t) { return rowOp(t, OpKind::RmsNorm, 4096, 4096); }, true},
    {"softmax_4096x4096", [](DType t) { return rowOp(t, OpKind::Softmax, 4096, 4096); }, true},
    {"layer_norm_4096x768", [](DType t) { return rowOp(t, OpKind::LayerNorm, 4096, 768); }, true},
    {"rms_norm_4096x768", [](DType t) { return rowOp(t, OpKind::RmsNorm, 4096, 768); }, true},
    {"softmax_4096x768", [](DType t) { return rowOp(t, OpKind::Softmax, 4096, 768); }, true},
    // The same written out of operators (bench/fused_ops.rb's WRITTEN).
    {"written_layer_norm_32768x1024", [](DType t) { return writtenRowOp(t, OpKind::LayerNorm, 32768, 1024); }, true},
    {"written_rms_norm_32768x1024", [](DType t) { return writtenRowOp(t, OpKind::RmsNorm, 32768, 1024); }, true},
    {"written_softmax_32768x1024", [](DType t) { return writtenRowOp(t, OpKind::Softmax, 32768, 1024); }, true},
    {"written_layer_norm_4096x4096", [](DType t) { return writtenRowOp(t, OpKind::LayerNorm, 4096, 4096); }, true},
    {"written_rms_norm_4096x4096", [](DType t) { return writtenRowOp(t, OpKind::RmsNorm, 4096, 4096); }, true},
    {"written_softmax_4096x4096", [](DType t) { return writtenRowOp(t, OpKind::Softmax, 4096, 4096); }, true},
    {"written_layer_norm_4096x768", [](DType t) { return writtenRowOp(t, OpKind::LayerNorm, 4096, 768); }, true},
    {"written_rms_norm_4096x768", [](DType t) { return writtenRowOp(t, OpKind::RmsNorm, 4096, 768); }, true},
    {"written_softmax_4096x768", [](DType t) { return writtenRowOp(t, OpKind::Softmax, 4096, 768); }, true},
    {"quantize_32768x1024", [](DType t) { return quantize(t, 32768, 1024); }, true},
    {"quantize_4096x4096", [](DType t) { return quantize(t, 4096, 4096); }, true},
    {"argmax_1x50257", [](DType t) { return argmax(t, 50257); }, true},
    {"copy_32768x1024", [](DType t) { return copy(t, 32768, 1024); }, true},
    {"copy_4096x4096", [](DType t) { return copy(t, 4096, 4096); }, true},
};

DeviceModel deviceModel() {
  cudaDeviceProp prop;
  ck(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  return deviceModelOf(prop); // what the engine plans against there
}

void *deviceAlloc(size_t bytes) {
  void *p = nullptr;
  ck(cudaMalloc(&p, std::max<size_t>(bytes, 16)), "cudaMalloc");
  ck(cudaMemset(p, 0, std::max<size_t>(bytes, 16)), "cudaMemset");
  return p;
}

/// The kernel's ops as Cumo.explain lists them ("layer_norm, matmul, add").
std::string opsOf(const Kernel &k) {
  std::string ops;
  for (const std::string &name : kernelOpNames(k))
    ops += (ops.empty() ? "" : ", ") + name;
  return ops;
}

/// --early-start: the 32 launches chained by early-start edges, as the CUDA
/// executor chains a plan's kernels, rather than plain ones.
bool gEarlyStart = false;

/// Times kernel `ki` of `plan` as described at the top, from `src` (the
/// generated source, or a hand-edited variant of it named `variant`) at
/// `launch`; prints its line.
void timeKernel(const char *name, DType t, const Plan &plan, size_t ki,
                const DeviceModel &model, const KernelSource &src, const LaunchConfig &launch,
                const std::string &variant) {
  const Kernel &k = plan.kernels[ki];
  std::string cubin = NvrtcCompiler::get().compileToCubin(src, model.ccMajor, model.ccMinor);
  cudaLibrary_t lib;
  cudaKernel_t kernel;
  ck(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
     "cudaLibraryLoadData");
  ck(cudaLibraryGetKernel(&kernel, lib, src.entry.c_str()), "cudaLibraryGetKernel");

  // Every buffer on the device; the largest input (the weight) in as many
  // copies as exceed the L2 four times.
  size_t nb = plan.buffers.size(), weightBuffer = nb;
  size_t weightBytes = 0;
  std::vector<size_t> bytes(nb);
  for (size_t b = 0; b < nb; ++b) {
    const PlanBuffer &pb = plan.buffers[b];
    bytes[b] = pb.role == PlanBuffer::Role::Input ? pb.node->buffer()->bytes()
                                                  : size_t(pb.elements) * sizeOf(pb.dtype);
    if (pb.role == PlanBuffer::Role::Input && bytes[b] > weightBytes) {
      weightBytes = bytes[b];
      weightBuffer = b;
    }
  }
  int copies = weightBytes ? int(std::clamp<int64_t>(
                                 (4 * model.l2Bytes + int64_t(weightBytes) - 1) /
                                     int64_t(weightBytes),
                                 1, 64))
                           : 1;
  std::vector<void *> pointers(nb);
  std::vector<void *> weightCopies;
  for (size_t b = 0; b < nb; ++b) {
    pointers[b] = deviceAlloc(bytes[b]);
    if (plan.buffers[b].role == PlanBuffer::Role::Input)
      ck(cudaMemcpy(pointers[b], plan.buffers[b].node->buffer()->data(), bytes[b],
                    cudaMemcpyHostToDevice),
         "upload");
  }
  if (weightBuffer < nb) {
    weightCopies.push_back(pointers[weightBuffer]);
    for (int c = 1; c < copies; ++c) {
      void *p = deviceAlloc(weightBytes);
      ck(cudaMemcpy(p, pointers[weightBuffer], weightBytes, cudaMemcpyDeviceToDevice), "copy");
      weightCopies.push_back(p);
    }
  }
  size_t sb = scratchBytes(k, launch);
  void *scratch = sb ? deviceAlloc(sb) : nullptr;
  void *errorWord = deviceAlloc(8);
  ck(cudaMemset(static_cast<unsigned *>(errorWord) + 1, 0xff, 4), "cudaMemset");
  std::vector<void *> blocks;
  for (int c = 0; c < copies; ++c) {
    if (!weightCopies.empty())
      pointers[weightBuffer] = weightCopies[size_t(c)];
    llvm::SmallVector<char, 512> block;
    packParams(k, launch, pointers, scratch, errorWord, block);
    void *dev = deviceAlloc(block.size());
    ck(cudaMemcpy(dev, block.data(), block.size(), cudaMemcpyHostToDevice), "params");
    blocks.push_back(dev);
  }

  cudaStream_t s;
  ck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  constexpr int kLaunches = 32;
  cudaGraph_t graph;
  // A chain of kernel nodes, each after the one before: with --early-start
  // along the executor's early-start edges (each launch may begin once
  // every block of the one before has, its loads before
  // wait_for_prior_grids() under that one's tail, as in a decode step),
  // else along plain ones.
  ck(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
  cudaGraphNode_t before = nullptr;
  for (int i = 0; i < kLaunches; ++i) {
    void *arg = blocks[size_t(i % copies)];
    void *args[] = {&arg};
    cudaKernelNodeParams p = {};
    p.func = reinterpret_cast<void *>(kernel);
    p.gridDim = dim3(launch.grid);
    p.blockDim = dim3(launch.block);
    p.sharedMemBytes = launch.sharedBytes;
    p.kernelParams = args;
    cudaGraphNode_t node;
    ck(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &p), src.entry.c_str());
    if (before) {
      cudaGraphEdgeData edge = earlyStartEdge();
      ck(cudaGraphAddDependencies(graph, &before, &node, gEarlyStart ? &edge : nullptr, 1),
         "a graph edge");
    }
    before = node;
  }
  cudaGraphExec_t exec;
  ck(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  cudaEvent_t a, z;
  ck(cudaEventCreate(&a), "cudaEventCreate");
  ck(cudaEventCreate(&z), "cudaEventCreate");
  ck(cudaGraphLaunch(exec, s), "cudaGraphLaunch"); // warm: caches, clocks
  double best = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    ck(cudaEventRecord(a, s), "cudaEventRecord");
    ck(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
    ck(cudaEventRecord(z, s), "cudaEventRecord");
    ck(cudaEventSynchronize(z), "a replay");
    float ms = 0;
    ck(cudaEventElapsedTime(&ms, a, z), "cudaEventElapsedTime");
    best = std::min(best, double(ms) * 1000.0 / kLaunches);
  }
  unsigned word[2];
  ck(cudaMemcpy(word, errorWord, 8, cudaMemcpyDeviceToHost), "error word");

  std::string ops = opsOf(k);
  std::printf("{\"bench\":\"kernel_times\",\"device\":\"%s\",\"case\":\"%s\",\"dtype\":\"%s\","
              "\"variant\":\"%s\",\"kernel\":%zu,\"kernels\":%zu,\"ops\":\"%s\",\"grid\":%u,\"block\":%u,"
              "\"lanes\":%u,\"columns\":%u,\"shared_bytes\":%u,\"weight_bytes\":%zu,"
              "\"weight_copies\":%d,\"early_start\":%s,\"us\":%.2f,\"weight_gb_s\":%.0f,"
              "\"error_word\":%u}\n",
              model.name.c_str(), name, std::string(nameOf(t)).c_str(), variant.c_str(), ki,
              plan.kernels.size(), ops.c_str(),
              launch.grid, launch.block, launch.tileLanes, launch.tileColumns, launch.sharedBytes, weightBytes,
              copies, gEarlyStart ? "true" : "false", best, double(weightBytes) / (best * 1e3),
              word[0]);
  std::fflush(stdout);

  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaEventDestroy(a);
  cudaEventDestroy(z);
  cudaStreamDestroy(s);
  for (void *p : blocks)
    cudaFree(p);
  for (size_t c = 1; c < weightCopies.size(); ++c)
    cudaFree(weightCopies[c]);
  if (!weightCopies.empty())
    pointers[weightBuffer] = weightCopies[0];
  for (void *p : pointers)
    cudaFree(p);
  cudaFree(scratch);
  cudaFree(errorWord);
  cudaLibraryUnload(lib);
}

/// The name --sources writes kernel `ki` of a case under, and --variants
/// finds its variants by: <case>_<dtype>_<kernel>.
std::string kernelStem(const char *name, DType t, size_t ki) {
  return std::string(name) + "_" + std::string(nameOf(t)) + "_" + std::to_string(ki);
}

/// Writes `bytes` to `path` (a dry run's source or cubin).
void writeFile(const std::string &path, const std::string &bytes) {
  if (FILE *f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
}

/// --dry-run: each case's kernels as the H200 model plans them, compiled,
/// not run (no GPU needed); with --sources DIR, each one's CUDA source
/// written to DIR/<case>_<dtype>_<kernel>.cu (to read what was generated,
/// or to compile it by hand with nvcc -Xptxas -v for its registers); with
/// --cubins DIR, its sm_90 cubin to DIR/<case>_<dtype>_<kernel>.cubin
/// (bench/probes/sass_counts.rb counts their instructions).
void describe(const char *name, DType t, const Plan &plan, const DeviceModel &model,
              const std::string &sources, const std::string &cubins) {
  for (size_t ki = 0; ki < plan.kernels.size(); ++ki) {
    const Kernel &k = plan.kernels[ki];
    LaunchConfig launch = launchConfig(k, model);
    KernelSource src = generateCuda(k, model);
    // Written before it is compiled, so that a source NVRTC refuses can be read.
    if (!sources.empty())
      writeFile(sources + "/" + kernelStem(name, t, ki) + ".cu", src.source);
    std::string cubin = NvrtcCompiler::get().compileToCubin(src, model.ccMajor, model.ccMinor);
    if (!cubins.empty())
      writeFile(cubins + "/" + kernelStem(name, t, ki) + ".cubin", cubin);
    std::string ops = opsOf(k);
    std::printf("{\"bench\":\"kernel_times\",\"dry_run\":true,\"device\":\"%s\",\"case\":\"%s\","
                "\"dtype\":\"%s\",\"kernel\":%zu,\"kernels\":%zu,\"ops\":\"%s\",\"grid\":%u,"
                "\"block\":%u,\"lanes\":%u,\"columns\":%u,\"shared_bytes\":%u}\n",
                model.name.c_str(), name, std::string(nameOf(t)).c_str(), ki, plan.kernels.size(),
                ops.c_str(), launch.grid, launch.block, launch.tileLanes, launch.tileColumns,
                launch.sharedBytes);
  }
}

/// A hand-edited variant of a generated kernel (--variants DIR): the file
/// DIR/<case>_<dtype>_<kernel>.<label>.cu, edited from what --sources
/// writes (bench/probes/*_variants.rb write some), so that a change
/// to the generator can be timed on the GPU before it is made. Its entry
/// is the name its source declares __global__ (after any attributes:
/// __launch_bounds__, __cluster_dims__); a line
/// `// kernel_times grid: N` launches it with N blocks and
/// `// kernel_times block: N` with N threads a block (0: the plan's), so a
/// variant the generator wrote with another layout runs as it would.
struct Variant {
  std::string label;
  KernelSource src;
  uint32_t grid = 0;
  uint32_t block = 0;
};

std::vector<Variant> variantsOf(const char *name, DType t, size_t ki, const std::string &dir) {
  std::vector<Variant> out;
  if (dir.empty())
    return out;
  std::string stem = kernelStem(name, t, ki) + ".";
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(dir)) {
    std::string f = e.path().filename().string();
    if (f.rfind(stem, 0) == 0 && f.size() > stem.size() + 3 && f.ends_with(".cu"))
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  static const std::regex entryRe(R"(__global__\s+void\s+(?:__\w+__\([^)]*\)\s+)*(\w+)\s*\()");
  static const std::regex gridRe(R"(//\s*kernel_times grid:\s*(\d+))");
  static const std::regex blockRe(R"(//\s*kernel_times block:\s*(\d+))");
  for (const auto &path : files) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    Variant v;
    v.src.source = text.str();
    std::smatch m;
    if (!std::regex_search(v.src.source, m, entryRe))
      throw std::runtime_error(path.string() + " declares no __global__ kernel");
    v.src.entry = m[1];
    if (std::regex_search(v.src.source, m, gridRe))
      v.grid = uint32_t(std::stoul(m[1]));
    if (std::regex_search(v.src.source, m, blockRe))
      v.block = uint32_t(std::stoul(m[1]));
    std::string f = path.filename().string();
    v.label = f.substr(stem.size(), f.size() - stem.size() - 3);
    out.push_back(std::move(v));
  }
  return out;
}

/// Kernel `ki` of `plan` timed as generated (variant "generated"), then
/// each of its variants in `variantsDir`.
void timeKernelAndVariants(const char *name, DType t, const Plan &plan, size_t ki,
                           const DeviceModel &model, const std::string &variantsDir) {
  const Kernel &k = plan.kernels[ki];
  LaunchConfig launch = launchConfig(k, model);
  timeKernel(name, t, plan, ki, model, generateCuda(k, model), launch, "generated");
  for (const Variant &v : variantsOf(name, t, ki, variantsDir)) {
    LaunchConfig l = launch;
    if (v.grid)
      l.grid = v.grid;
    if (v.block)
      l.block = v.block;
    timeKernel(name, t, plan, ki, model, v.src, l, v.label);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> wanted;
  bool dryRun = false;
  std::string sources, cubins, variants;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--dry-run") {
      dryRun = true;
    } else if (arg == "--sources" && i + 1 < argc) {
      sources = argv[++i];
    } else if (arg == "--cubins" && i + 1 < argc) {
      cubins = argv[++i];
    } else if (arg == "--early-start") {
      gEarlyStart = true;
    } else if (arg == "--variants" && i + 1 < argc) {
      variants = argv[++i];
    } else if (arg == "--cases" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        size_t comma = std::min(list.find(',', at), list.size());
        wanted.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: kernel_times [--cases NAME,NAME...] [--variants DIR] "
                           "[--early-start] [--dry-run [--sources DIR] [--cubins DIR]]\n");
      return 2;
    }
  }
  int count = 0;
  if (!dryRun && (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)) {
    std::fprintf(stderr, "kernel_times: no GPU (--dry-run plans and compiles without one)\n");
    return 1;
  }
  for (const std::string &dir : {sources, cubins})
    if (!dir.empty())
      std::filesystem::create_directories(dir);
  // The plans' inputs live on the host: the tool uploads them itself.
  setCurrentDevice(hostDevice());
  DeviceModel model = dryRun ? DeviceModel() : deviceModel();
  try {
    for (const Case &c : kCases) {
      bool named = std::find(wanted.begin(), wanted.end(), c.name) != wanted.end();
      if (wanted.empty() ? c.onlyNamed : !named)
        continue;
      for (DType t : {DType::SFloat, DType::BFloat}) {
        Plan plan = c.plan(t);
        if (dryRun) {
          describe(c.name, t, plan, model, sources, cubins);
          for (size_t ki = 0; ki < plan.kernels.size(); ++ki)
            for (const Variant &v : variantsOf(c.name, t, ki, variants)) {
              std::string cubin =
                  NvrtcCompiler::get().compileToCubin(v.src, model.ccMajor, model.ccMinor);
              if (!cubins.empty())
                writeFile(cubins + "/" + kernelStem(c.name, t, ki) + "." + v.label + ".cubin",
                          cubin);
              std::printf("{\"bench\":\"kernel_times\",\"dry_run\":true,\"case\":\"%s\","
                          "\"dtype\":\"%s\",\"kernel\":%zu,\"variant\":\"%s\",\"compiled\":true}\n",
                          c.name, std::string(nameOf(t)).c_str(), ki, v.label.c_str());
            }
        }
        else
          for (size_t ki = 0; ki < plan.kernels.size(); ++ki)
            timeKernelAndVariants(c.name, t, plan, ki, model, variants);
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kernel_times: %s\n", e.what());
    return 1;
  }
  return 0;
}
