// CUDA code generation: every kind of kernel fusion produces is generated
// and compiled by NVRTC for sm_90 (no GPU needed); keys and sources depend
// on structure only; parameter blocks match the structs the sources
// declare; the disk cache is used and never trusts a damaged entry. Where a
// GPU is present, the kernels also run and are compared with the CPU
// executor on the same inputs (TEST_SUITE "gpu"; skipped without one).
#include "core/array.h"
#include "core/device.h"
#include "core/error.h"
#include "core/stats.h"
#include "fusion/cuda/nvrtc_compiler.h"
#include "fusion/cuda_codegen.h"
#include "fusion/cuda_kernel_shape.h"
#include "fusion/cuda_row_codegen.h"
#include "fusion/lower.h"
#include "fusion/prologue.h"
#include "fusion/row_groups.h"
#include "fusion/row_program.h"
#include "fusion/schedule.h"
#include "graph/executor.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/element_fn.h"
#include "ops/fancy_index.h"
#include "ops/index_reduction.h"
#include "ops/indexing.h"
#include "ops/math.h"
#include "ops/layout.h"
#include "ops/matmul.h"
#include "ops/quantize.h"
#include "ops/reduction.h"
#include "ops/row_layout.h"
#include "ops/row_ops.h"
#include "ops/scan.h"
#include "ops/shape_ops.h"
#include "ops/sort.h"
#include "tests/cuda_emulator.h"


#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <optional>
#include <memory>
#include <regex>
#include <sys/stat.h>
#include <vector>

using namespace cumo;

namespace {

using Handle = std::unique_ptr<ArrayHandle>;

Handle wrap(NodeRef n) { return std::make_unique<ArrayHandle>(std::move(n)); }

const DeviceModel &h200() {
  static DeviceModel m;
  return m;
}

/// Deterministic input data: small floats with fractions, integers over
/// their whole range (so wrapping is exercised), Bits of both values.
/// Random values of class t (multiples of 1/64 for floats); `edit` may
/// change the host bytes before they are uploaded.
NodeRef input(DType t, Shape shape, uint64_t seed,
              llvm::function_ref<void(void *)> edit = nullptr) {
  if (!haveCurrentDevice())
    setCurrentDevice(hostDevice());
  int64_t n = numElements(shape);
  std::vector<unsigned char> bytes(size_t(n) * sizeOf(t) + 1);
  dispatchDType(t, [&]<DType D, class T>() {
    T *p = reinterpret_cast<T *>(bytes.data());
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int64_t i = 0; i < n; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      if constexpr (D == DType::Bit)
        p[i] = T((x >> 40) & 1);
      else if constexpr (std::is_floating_point_v<T> || kIsNarrowFloatC<T>)
        p[i] = T(double(int64_t((x >> 33) % 2001) - 1000) / 64);
      else if constexpr (kIsComplexC<T>)
        p[i] = T(double(int64_t((x >> 33) % 2001) - 1000) / 64,
                 double(int64_t((x >> 13) % 2001) - 1000) / 64);
      else
        p[i] = T(x >> 17);
    }
  });
  if (edit)
    edit(bytes.data());
  return uploadNode(t, shape, bytes.data());
}

NodeRef binary(OpKind op, const ArrayHandle &a, const ArrayHandle &b) {
  return binaryOp(op, Operand::of(a), Operand::of(b));
}
NodeRef binary(OpKind op, const ArrayHandle &a, Scalar s) {
  return binaryOp(op, Operand::of(a), Operand::of(s));
}

IndexItem range(int64_t begin, int64_t end) {
  IndexItem it;
  it.kind = IndexItem::Kind::Range;
  it.begin = begin;
  it.end = end;
  it.hasBegin = it.hasEnd = true;
  return it;
}

std::string compileOrFail(const Kernel &k, int major = 9, int minor = 0,
                          const DeviceModel &model = h200()) {
  KernelSource src = generateCuda(k, model);
  // CUMO_TEST_DUMP_DIR=dir: keep every generated source, for review.
  if (const char *dump = std::getenv("CUMO_TEST_DUMP_DIR"))
    std::ofstream(std::string(dump) + "/" + src.entry + ".cu") << src.source;
  try {
    return NvrtcCompiler::get().compileToCubin(src, major, minor);
  } catch (const Error &e) {
    FAIL(e.message() << "\n" << src.source);
  }
  return "";
}

std::map<std::string, size_t> declaredOffsets(const std::string &source) {
  std::map<std::string, size_t> out;
  std::regex field(R"( (\w+)(\[\d+\])?; // offset (\d+))");
  for (std::sregex_iterator it(source.begin(), source.end(), field), end;
       it != end; ++it)
    out[(*it)[1]] = std::stoul((*it)[3]);
  std::smatch m;
  if (std::regex_search(source, m, std::regex(R"(sizeof\(CumoParams\) == (\d+))")))
    out["<size>"] = std::stoul(m[1]);
  return out;
}

template <class T> T readAt(llvm::ArrayRef<char> block, size_t offset) {
  T v;
  std::memcpy(&v, block.data() + offset, sizeof(T));
  return v;
}

/// packParams writes what the generated struct declares, where it declares
/// it: sizes, the domain, pointers and offsets of loads and stores.
void checkParams(const Plan &plan, const Kernel &k) {
  KernelSource src = generateCuda(k, h200());
  auto offsets = declaredOffsets(src.source);
  REQUIRE(offsets.count("<size>"));
  llvm::SmallVector<void *, 8> buffers;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    buffers.push_back(reinterpret_cast<void *>(uintptr_t(0x100000 * (i + 1))));
  void *scratch = reinterpret_cast<void *>(uintptr_t(0x7770000));
  LaunchConfig launch = launchConfig(k, h200());
  llvm::SmallVector<char, 256> block(3, 'x'); // the block starts aligned
  void *errorWord = reinterpret_cast<void *>(uintptr_t(0x7780000));
  packParams(k, launch, buffers, scratch, errorWord, block);
  size_t base = kParamAlignment;
  CHECK(block.size() == base + offsets["<size>"]);
  llvm::ArrayRef<char> b(block);
  CHECK(readAt<int64_t>(b, base + offsets.at("n")) == k.domainSize());
  // (An opaque block carries its operands' extents instead.)
  if (k.kind != Kernel::Kind::Opaque)
    for (size_t d = 0; d < k.domain.size(); ++d)
      CHECK(readAt<int64_t>(b, base + offsets.at("ext") + 8 * d) == k.domain[d]);
  for (size_t i = 0; i < k.loads.size(); ++i) {
    std::string ld = "ld" + std::to_string(i);
    CHECK(readAt<void *>(b, base + offsets.at(ld)) == buffers[k.loads[i].buffer]);
    CHECK(readAt<int64_t>(b, base + offsets.at(ld + "_off")) ==
          k.loads[i].index.offset);
  }
  for (size_t i = 0; i < k.stores.size(); ++i) {
    std::string st = "st" + std::to_string(i);
    CHECK(readAt<void *>(b, base + offsets.at(st)) == buffers[k.stores[i].buffer]);
    CHECK(readAt<int64_t>(b, base + offsets.at(st + "_off")) ==
          k.stores[i].index.offset);
  }
  if (offsets.count("counter")) {
    CHECK(readAt<void *>(b, base + offsets.at("counter")) == scratch);
    CHECK(readAt<char *>(b, base + offsets.at("partials")) ==
          static_cast<char *>(scratch) + 16);
  }
}

void compilePlan(const Plan &plan) {
  for (const Kernel &k : plan.kernels) {
    CHECK(!compileOrFail(k).empty());
    // An opaque block lists its operands; an epilogue's loads and stores
    // are an elementwise kernel's.
    if (k.kind != Kernel::Kind::Opaque || k.hasEpilogue())
      checkParams(plan, k);
  }
}

/// Both plans have one kernel each, with equal keys and sources.
void checkSameKernel(const Plan &a, const Plan &b) {
  REQUIRE(a.kernels.size() == b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    CHECK(kernelKey(a.kernels[i], h200()) == kernelKey(b.kernels[i], h200()));
    CHECK(generateCuda(a.kernels[i], h200()).source ==
          generateCuda(b.kernels[i], h200()).source);
  }
}

uint64_t onlyKey(const Plan &p) {
  REQUIRE(p.kernels.size() == 1);
  return kernelKey(p.kernels[0], h200());
}

// Plan builders, shared by the compile tests and the GPU comparisons.

Plan chainPlan(int64_t rows, int64_t cols, double s, OpKind op) {
  Handle a = wrap(input(DType::DFloat, {rows, cols}, 1));
  Handle b = wrap(input(DType::DFloat, {cols}, 2));
  Handle x = wrap(binary(op, *a, *b));
  Handle y = wrap(binary(OpKind::Mul, *x, Scalar::ofFloat(s)));
  Handle z = wrap(binary(OpKind::Sub, *y, *a));
  NodeRef root = binaryOp(OpKind::Lt, Operand::of(*z), Operand::of(*b));
  Handle c = wrap(castTo(*z, DType::Int32));
  NodeRef cast = c->value();
  x.reset();
  y.reset();
  return planForRoots({root, cast, z->value()});
}

/// (a * s + a) of class t, stored, and cast to Int32 and to SFloat: every
/// access contiguous over the domain (the vector loop), and, read through
/// an offset view (a[1..-1]), one that starts off a vector boundary.
Plan linearPlan(DType t, int64_t rows, int64_t cols, bool offset = false) {
  Handle a = wrap(input(t, {rows + 1, cols}, 7));
  Handle v;
  if (offset)
    v = std::make_unique<ArrayHandle>(a->storageRef(),
                                      indexLayout(a->layout(), {range(1, -1), IndexItem::all()}, "[]"));
  const ArrayHandle &x = offset ? *v : *a;
  Handle y = wrap(binary(OpKind::Mul, x, Scalar::ofFloat(1.5)));
  Handle z = wrap(binary(OpKind::Add, *y, x));
  y.reset();
  if (isComplex(t))
    return planForRoots({z->value()}); // no cast to a real class
  Handle c = wrap(castTo(*z, DType::Int32));
  Handle f = wrap(castTo(*z, DType::SFloat));
  return planForRoots({z->value(), c->value(), f->value()});
}

/// An array of `shape` from `seed`: settled, or a pending copy of one (a
/// gather from a settled array is read inline by the kernel that uses it,
/// from a pending one by an index kernel).
NodeRef fancyArray(DType t, Shape shape, uint64_t seed, bool settled) {
  NodeRef a = input(t, std::move(shape), seed);
  return settled ? a : copyOf(ArrayHandle(a));
}

/// a[[4, -1, 0, 4], true] read, and written back with its squares (Bit:
/// itself), through
/// a transposed view (the operands lie where they lie).
Plan fancyPlan(DType t, bool settled = true) {
  Handle a = wrap(fancyArray(t, {7, 5}, 40, settled));
  ArrayHandle view(a->storageRef(), transposeLayout(a->layout(), {}, "transpose"));
  std::vector<FancyItem> items(2);
  items[0].isList = true;
  items[0].positions = {4, -1, 0, 4};
  items[0].listShape = {4};
  Selection sel = fancySelection(view.shape(), items, "[]");
  NodeRef g = gatherOp(view, sel);
  ArrayHandle gh(g);
  NodeRef values = t == DType::Bit ? g : binary(OpKind::Mul, gh, gh); // Bit has no *
  NodeRef w = indexWriteOp(view, sel, values);
  return planForRoots({g, w});
}

/// The selections of fancyPlan at positions index arrays hold on the
/// device: a[rows, true] read and written back (rows repeats a position: the
/// write resolves it on the device), a[tok, 1..3] with a 0-dim index, and a
/// single index of two axes into every element. The tables are elementwise
/// kernels; the gathers and the write check them.
Plan deviceFancyPlan(DType t, int32_t shift = 0, bool settled = true) {
  Handle a = wrap(fancyArray(t, {7, 5}, 42, settled));
  ArrayHandle view(a->storageRef(), transposeLayout(a->layout(), {}, "transpose"));
  std::vector<int32_t> rows = {3 + shift, -1, 0, 3 + shift};
  Handle r = wrap(uploadNode(DType::Int32, {4}, rows.data()));
  int64_t tok = -2 - shift;
  Handle k = wrap(uploadNode(DType::Int64, {}, &tok));
  std::vector<uint16_t> flat = {0, 34, 7, 12, 3, uint16_t(20 + shift)};
  Handle f = wrap(uploadNode(DType::UInt16, {2, 3}, flat.data()));
  auto device = [](const ArrayHandle &h) {
    FancyItem it;
    it.isList = true;
    it.device = &h;
    it.listShape = toShape(h.shape());
    return it;
  };
  std::vector<FancyItem> items(2);
  items[0] = device(*r);
  Selection sel = fancySelection(view.shape(), items, "[]");
  NodeRef g = gatherOp(view, sel);
  ArrayHandle gh(g);
  NodeRef values = t == DType::Bit ? g : binary(OpKind::Mul, gh, gh);
  NodeRef w = indexWriteOp(view, sel, values);
  std::vector<FancyItem> row(2);
  row[0] = device(*k);
  row[1].item = range(1, 3);
  NodeRef g2 = gatherOp(view, fancySelection(view.shape(), row, "[]"));
  NodeRef g3 = gatherOp(view, fancySelection(view.shape(), {device(*f)}, "[]"));
  // One 0-dim index among every element: a 0-dim table, with no extents.
  NodeRef g4 = gatherOp(view, fancySelection(view.shape(), {device(*k)}, "[]"));
  return planForRoots({g, w, g2, g3, g4});
}

/// Two caches written at one device position (decode's key and value
/// writes: one table, sibling writes, one kernel), `repeat` the position
/// index's length (more than one: positions may repeat, so each thread
/// looks for a later write of its own).
Plan siblingWritesPlan(DType t, int64_t repeat = 1) {
  Handle kc = wrap(input(t, {2, 3, 8, 4}, 60));
  Handle vc = wrap(input(t, {2, 3, 8, 4}, 61));
  std::vector<int32_t> at(size_t(repeat), 5);
  Handle pos = wrap(uploadNode(DType::Int32, {repeat}, at.data()));
  Handle kv = wrap(input(t, {2, 3, repeat, 4}, 62));
  Handle vv = wrap(input(t, {2, 3, repeat, 4}, 63));
  std::vector<FancyItem> items(4);
  items[0].item = IndexItem::all();
  items[1].item = IndexItem::all();
  items[2].isList = true;
  items[2].device = pos.get();
  items[2].listShape = toShape(pos->shape());
  items[3].item = IndexItem::all();
  NodeRef wk = indexWriteOp(*kc, fancySelection(kc->shape(), items, "[]="), kv->value());
  NodeRef wv = indexWriteOp(*vc, fancySelection(vc->shape(), items, "[]="), vv->value());
  return planForRoots({wk, wv});
}

/// sort along an axis, sort_index of every element, median with nan: true.
Plan sortPlan(DType t) {
  Handle a = wrap(input(t, {6, 9}, 41));
  NodeRef s = sortOp(*a, int64_t(1));
  NodeRef i = sortIndexOp(*a, std::nullopt);
  NodeRef m = medianOp(*a, int64_t(0), false, true);
  return planForRoots({s, i, m});
}

/// layer_norm, rms_norm and softmax of a rows x cols array of class t (of
/// its transpose when `transposed`, a view read where it lies).
Plan rowPlan(DType t, int64_t rows, int64_t cols, bool transposed = false) {
  Handle a = wrap(input(t, transposed ? Shape{cols, rows} : Shape{rows, cols}, 42));
  ArrayHandle view(a->storageRef(), transposeLayout(a->layout(), {}, "transpose"));
  const ArrayHandle &x = transposed ? view : *a;
  Handle g = wrap(input(t, {cols}, 43));
  Handle b = wrap(input(t, {cols}, 44));
  return planForRoots({layerNormOp(x, *g, *b, 1e-5), rmsNormOp(x, *g, 1e-3), softmaxOp(x)});
}

NodeRef unary(OpKind op, const ArrayHandle &a) { return unaryOp(op, a); }

NodeRef rowFold(OpKind op, const ArrayHandle &a) {
  return reduceOp(op, a, {a.ndim() - 1}, /*keepdims=*/true);
}

/// softmax, layer_norm (centred squares, and the mean of squares less the
/// squared mean), rms_norm and a mean absolute deviation, written out of
/// operators over a rows x cols array of class t (its transpose when
/// `transposed`): each a row group, so one Rowwise kernel each where the
/// rows are long enough (fusion/row_groups.h).
/// gamma and beta are views of every `gammaStep`-th element from
/// `gammaOffset` (contiguous and whole by default): the vector reads of the
/// store pass test both at run time.
Plan writtenRowPlan(DType t, int64_t rows, int64_t cols, bool transposed = false,
                    int64_t gammaStep = 1, int64_t gammaOffset = 0) {
  Handle a = wrap(input(t, transposed ? Shape{cols, rows} : Shape{rows, cols}, 47));
  ArrayHandle view(a->storageRef(), transposeLayout(a->layout(), {}, "transpose"));
  const ArrayHandle &x = transposed ? view : *a;
  Handle gs = wrap(input(t, {gammaOffset + gammaStep * cols}, 48));
  Handle bs = wrap(input(t, {gammaOffset + gammaStep * cols}, 49));
  Layout along;
  along.shape = {cols};
  along.strides = {gammaStep};
  along.offset = gammaOffset;
  Handle g = std::make_unique<ArrayHandle>(gs->storageRef(), along);
  Handle b = std::make_unique<ArrayHandle>(bs->storageRef(), along);
  Scalar eps = Scalar::ofFloat(1e-3);
  // softmax: exp(x - max) / sum
  Handle m = wrap(rowFold(OpKind::Max, x));
  Handle e = wrap(unary(OpKind::Exp, ArrayHandle(binary(OpKind::Sub, x, *m))));
  NodeRef softmax = binary(OpKind::Div, *e, ArrayHandle(rowFold(OpKind::Sum, *e)));
  // layer_norm: (x - mean) / sqrt(mean((x - mean)^2) + eps) * g + b
  Handle mu = wrap(rowFold(OpKind::Mean, x));
  Handle d = wrap(binary(OpKind::Sub, x, *mu));
  Handle var = wrap(rowFold(OpKind::Mean, ArrayHandle(binary(OpKind::Mul, *d, *d))));
  Handle sd = wrap(unary(OpKind::Sqrt, ArrayHandle(binary(OpKind::Add, *var, eps))));
  Handle y = wrap(binary(OpKind::Div, *d, *sd));
  NodeRef layerNorm = binary(OpKind::Add, ArrayHandle(binary(OpKind::Mul, *y, *g)), *b);
  // layer_norm's variance as mean(x^2) - mean^2, its mean as sum / n
  Handle mu2 = wrap(binary(OpKind::Div, ArrayHandle(rowFold(OpKind::Sum, x)),
                           Scalar::ofFloat(double(cols))));
  Handle sq = wrap(rowFold(OpKind::Mean, ArrayHandle(binary(OpKind::Mul, x, x))));
  Handle var2 = wrap(binary(OpKind::Sub, *sq, ArrayHandle(binary(OpKind::Mul, *mu2, *mu2))));
  NodeRef layerNorm2 =
      binary(OpKind::Div, ArrayHandle(binary(OpKind::Sub, x, *mu2)),
             ArrayHandle(unary(OpKind::Sqrt, ArrayHandle(binary(OpKind::Add, *var2, eps)))));
  // rms_norm: x / sqrt(mean(x^2) + eps) * g
  Handle ms = wrap(rowFold(OpKind::Mean, ArrayHandle(binary(OpKind::Mul, x, x))));
  NodeRef rmsNorm = binary(
      OpKind::Mul,
      ArrayHandle(binary(OpKind::Div, x,
                         ArrayHandle(unary(OpKind::Sqrt, ArrayHandle(binary(OpKind::Add, *ms,
                                                                              eps)))))),
      *g);
  // mean |x - mean|: two folds, no broadcast back at the end
  NodeRef mad = reduceOp(OpKind::Mean, ArrayHandle(unary(OpKind::Abs, *d)), {1}, false);
  m.reset(), e.reset(), mu.reset(), d.reset(), var.reset(), sd.reset(), y.reset();
  mu2.reset(), sq.reset(), var2.reset(), ms.reset();
  return planForRoots({softmax, layerNorm, layerNorm2, rmsNorm, mad});
}

/// Full reductions of one row of `cols` elements of class t (a decode
/// step's logits, [1, cols]), each read back along the row: argmax (its
/// max, its candidates' min and the answer), min_index, and x / x.sum.
/// Each is one Rowwise kernel (fusion/row_groups.h, kMaxOneRowLength).
Plan oneRowPlan(DType t, int64_t cols) {
  Handle x = wrap(input(t, {1, cols}, 51));
  NodeRef argmax = indexReductionOp(IndexReduction::ArgMax, *x, {}, false, false);
  NodeRef minIndex = indexReductionOp(IndexReduction::MinIndex, *x, {}, false, false);
  NodeRef share = binary(OpKind::Div, *x, ArrayHandle(reduceOp(OpKind::Sum, *x, {0, 1}, false)));
  return planForRoots({argmax, minIndex, share});
}

/// quantize_symmetric of `shape` in class t, with an infinity in row 1, a
/// NaN in row 2 and row 3 all zeros (where there are that many), and of a
/// 1-D array (its scale a full reduction).
Plan quantizePlan(DType t, Shape shape) {
  int64_t n = shape.back(), rows = numElements(shape) / n;
  NodeRef x = input(t, shape, 45, [&](void *bytes) {
    dispatchDType(t, [&]<DType D, class T>() {
      if constexpr (std::is_floating_point_v<T> || kIsNarrowFloatC<T>) {
        T *p = static_cast<T *>(bytes);
        if (rows > 1)
          p[n + n / 2] = T(INFINITY);
        if (rows > 2)
          p[2 * n] = T(NAN);
        for (int64_t j = 0; rows > 3 && j < n; ++j)
          p[3 * n + j] = T(0.0);
      }
    });
  });
  ArrayHandle hx(x);
  auto [xq, scale] = quantizeSymmetricOp(hx);
  Handle flat = wrap(input(t, {n}, 46));
  auto [fq, fs] = quantizeSymmetricOp(*flat);
  return planForRoots({xq, scale, fq, fs});
}

/// alpha * (a @ b) for operands of these shapes, a read through its
/// transpose when `transposeA` (a view: the generated kernel reads any
/// layout, as cuBLAS reads a transposed one).
Plan matmulPlan(DType t, Shape aShape, Shape bShape, bool transposeA = false,
                int64_t alpha = 1) {
  Shape stored = aShape;
  if (transposeA)
    std::reverse(stored.begin(), stored.end());
  Handle a = wrap(input(t, stored, 47));
  ArrayHandle view(a->storageRef(), transposeLayout(a->layout(), {}, "transpose"));
  Handle b = wrap(input(t, bShape, 48));
  return planForRoots({matmulOp("matmul", transposeA ? view : *a, *b, Scalar::ofInt(alpha))});
}

/// The product shapes the seed's cases cover: matrix by matrix, the 1-D
/// promotions, broadcast batches, an empty core and a length-one axis.
struct MatmulCase {
  Shape a, b;
  bool transposeA = false;
};
const MatmulCase kMatmulCases[] = {
    {{5, 7}, {7, 3}},          {{7}, {7, 3}},          {{5, 7}, {7}},
    {{7}, {7}},                {{2, 1, 5, 7}, {3, 7, 4}}, {{4, 5, 7}, {7, 4}},
    {{7, 5}, {5, 6}, true},    {{3, 0}, {0, 4}},        {{1, 7}, {7, 1}},
    {{2, 3, 4}, {4}},          {{4}, {2, 4, 3}},
};

/// x @ w for a small x of `rows` rows (1-D when 0) and a matrix w of
/// k x n, stored (n, k) and read transposed when `transposedW` (a weight
/// used as x @ w.transpose: unit-strided along k), else stored (k, n).
Plan smallProductPlan(DType t, int64_t rows, int64_t k, int64_t n, bool transposedW,
                      int64_t alpha = 1) {
  Handle x = wrap(input(t, rows ? Shape{rows, k} : Shape{k}, 50));
  Handle w = wrap(input(t, transposedW ? Shape{n, k} : Shape{k, n}, 51));
  ArrayHandle wt(w->storageRef(), transposeLayout(w->layout(), {}, "transpose"));
  return planForRoots({matmulOp("matmul", *x, transposedW ? wt : *w, Scalar::ofInt(alpha))});
}

/// x @ w[true, 0..n-1] for a (k, stored) matrix w: its rows start on
/// vector boundaries, but the last vector of a row runs past column n
/// (the thread-per-column layout's partial vector).
Plan slicedSmallPlan(DType t, int64_t rows, int64_t k, int64_t n, int64_t stored) {
  Handle x = wrap(input(t, {rows, k}, 55));
  Handle w = wrap(input(t, {k, stored}, 56));
  ArrayHandle ws(w->storageRef(), indexLayout(w->layout(), {IndexItem::all(), range(0, n - 1)}, "[]"));
  return planForRoots({matmulOp("matmul", *x, ws, Scalar::ofInt(1))});
}
struct SlicedSmallCase {
  int64_t rows, k, n, stored;
};
const SlicedSmallCase kSlicedSmall[] = {{1, 50, 39, 48}, {4, 70, 13, 16}, {2, 300, 100, 128}};

/// A batch of small products a @ b, b stored with its last two axes
/// swapped and read through swapaxes when `swappedB` (decode's
/// `q.matmul(k_cache.swapaxes(2, 3))`: unit-strided along k); with
/// `scaled`, scaled and masked as decode's scores are (an epilogue that
/// reads the batch coordinates: the mask broadcasts along the last axis).
Plan batchedSmallPlan(DType t, Shape aShape, Shape bShape, bool swappedB, bool scaled = false) {
  Handle x = wrap(input(t, aShape, 52));
  Shape stored = bShape;
  size_t r = stored.size();
  if (swappedB)
    std::swap(stored[r - 1], stored[r - 2]);
  Handle w = wrap(input(t, stored, 53));
  ArrayHandle ws(w->storageRef(), swapaxesLayout(w->layout(), int64_t(r) - 1, int64_t(r) - 2));
  NodeRef product = matmulOp("matmul", *x, swappedB ? ws : *w, Scalar::ofInt(1));
  if (!scaled)
    return planForRoots({product});
  Handle p = wrap(product);
  Handle mask = wrap(input(t, {bShape.back()}, 54));
  Handle s = wrap(binary(OpKind::Mul, *p, Scalar::ofFloat(0.125)));
  NodeRef out = binary(OpKind::Add, *s, *mask);
  p.reset();
  s.reset();
  return planForRoots({out});
}

struct BatchedSmallCase {
  Shape a, b;
  bool swappedB;
};
const BatchedSmallCase kBatchedSmall[] = {
    {{1, 12, 1, 64}, {1, 12, 64, 1024}, true},  // decode: scores against the keys
    {{1, 12, 1, 1024}, {1, 12, 1024, 64}, false}, // decode: the values
    {{2, 1, 5, 7}, {3, 7, 4}, false},             // broadcast batch axes
    {{3, 8, 2, 33}, {8, 33, 70}, true},
    {{4, 3, 200}, {4, 200, 40}, false},
    {{2, 1, 2048}, {2, 2048, 24}, false},         // k split over blocks, a batch
};

/// Small products: one row and a vector, rows up to the limit, both
/// layouts of the matrix, k not a multiple of the warp.
struct SmallProductCase {
  int64_t rows, k, n;
  bool transposedW;
};
/// How far a small product may be from the reference's: it sums k terms in
/// another order, so by as much as k sums of rounding allow.
double smallProductTolerance(DType t, int64_t k) {
  double sums = std::max(1.0, double(k) / 100);
  return t == DType::DFloat ? 1e-12 * sums : t == DType::SFloat ? 1e-5 * sums : 1e-2;
}

const SmallProductCase kSmallProducts[] = {
    {0, 77, 45, false}, {1, 77, 45, true}, {3, 100, 33, false}, {8, 64, 130, true},
    {16, 33, 70, false}, {5, 300, 1, true}, {2, 1, 40, false},
    // decode's shapes: narrowed column tiles
    {1, 3072, 768, false}, {8, 768, 2304, false},
    // the narrowest tiles still too few: k split over blocks, folded by
    // the last
    {1, 4096, 40, false},
    // along a short k: 4 lanes a column, 8 columns a warp, and a tail
    {2, 20, 33, true},
    // along k, several columns a lane group at once: four, with a group
    // past the last column; two for four rows
    {1, 256, 1001, true}, {4, 96, 700, true},
};

/// A small product with a decode step's consumers in its epilogue:
/// gelu_tanh(x @ w + bias) * 0.5 + residual, the product held by Ruby
/// (then stored too) or collected.
Plan epiloguePlan(DType t, const SmallProductCase &c, bool holdProduct) {
  Shape rows = c.rows ? Shape{c.rows, c.n} : Shape{c.n};
  Handle x = wrap(input(t, c.rows ? Shape{c.rows, c.k} : Shape{c.k}, 60));
  Handle w = wrap(input(t, c.transposedW ? Shape{c.n, c.k} : Shape{c.k, c.n}, 61));
  Handle bias = wrap(input(t, {c.n}, 62));
  Handle residual = wrap(input(t, rows, 63));
  ArrayHandle wt(w->storageRef(), transposeLayout(w->layout(), {}, "transpose"));
  Handle product = wrap(matmulOp("matmul", *x, c.transposedW ? wt : *w));
  Handle biased = wrap(binary(OpKind::Add, *product, *bias));
  Handle act = wrap(unaryOp(OpKind::GeluTanh, *biased));
  Handle half = wrap(binary(OpKind::Mul, *act, Scalar::ofFloat(0.5)));
  NodeRef out = binary(OpKind::Add, *half, *residual);
  biased.reset();
  act.reset();
  half.reset();
  if (!holdProduct)
    product.reset();
  return planForRoots({out});
}

/// A decode step's cache writes in its qkv product's epilogue
/// (fusion/epilogue_writes.h): the product of a row computed in the same
/// flush (so the table's kernel runs before the product's), its bias add
/// reshaped to (1, 3, heads, 1, 8), its second and third parts written
/// into settled caches at a position `at` given on the device or as a
/// host list, in place. A device position outside the caches flags the
/// error word and writes nothing. The weight is stored (k, n), or (n, k)
/// and read transposed when `transposedW` (the along-k layout). With
/// `everyOther`, each head writes its even elements only (caches of 4 a
/// row): a view of stride two, so each element's coordinate takes a
/// division.
Plan cacheWritePlan(DType t, bool onDevice, int32_t at = 4, bool transposedW = false,
                    bool everyOther = false) {
  Handle x0 = wrap(input(t, {1, 40}, 70));
  Handle x = wrap(binary(OpKind::Mul, *x0, Scalar::ofFloat(0.5)));
  Handle w = wrap(input(t, transposedW ? Shape{48, 40} : Shape{40, 48}, 71));
  ArrayHandle wt(w->storageRef(), transposeLayout(w->layout(), {}, "transpose"));
  Handle bias = wrap(input(t, {48}, 72));
  Handle product = wrap(matmulOp("matmul", *x, transposedW ? wt : *w));
  Handle biased = wrap(binary(OpKind::Add, *product, *bias));
  Handle qkv = wrap(reshapeNode(*biased, {1, 3, 2, 1, 8}));
  Handle pos = wrap(uploadNode(DType::Int32, {1}, &at));
  std::vector<FancyItem> items(4);
  items[0].item = items[1].item = items[3].item = IndexItem::all();
  items[2].isList = true;
  items[2].listShape = {1};
  if (onDevice)
    items[2].device = pos.get();
  else
    items[2].positions = {at};
  llvm::SmallVector<NodeRef, 2> writes;
  IndexItem within = IndexItem::all();
  if (everyOther) {
    within = range(0, 7);
    within.step = 2;
  }
  for (int64_t part : {1, 2}) {
    Handle cache = wrap(input(t, {1, 2, 6, everyOther ? 4 : 8}, 72 + part));
    ArrayHandle values(qkv->storageRef(),
                       indexLayout(qkv->layout(),
                                   {IndexItem::all(), IndexItem::integer(part), IndexItem::all(),
                                    IndexItem::all(), within},
                                   "[]"));
    writes.push_back(indexWriteOp(*cache, fancySelection(cache->shape(), items, "[]="),
                                  values.value()));
  }
  x.reset();
  product.reset();
  biased.reset();
  return planForRoots(writes, [](const Node *n) { return n->op() == OpKind::IndexWrite; });
}

/// A small product whose operand is `rowOp` (layer_norm, rms_norm or
/// softmax) of a small x: the row op in the product's kernel
/// (fusion/prologue.h) where it fits, with a bias in the epilogue when
/// `biased`; the normalized rows held by Ruby (then stored by the
/// product's kernel too) or collected.
Plan prologuePlan(DType t, const SmallProductCase &c, OpKind rowOp, bool holdRows,
                  bool biased) {
  Handle x = wrap(input(t, c.rows ? Shape{c.rows, c.k} : Shape{c.k}, 64));
  Handle gamma = wrap(input(t, {c.k}, 65));
  Handle beta = wrap(input(t, {c.k}, 66));
  Handle w = wrap(input(t, c.transposedW ? Shape{c.n, c.k} : Shape{c.k, c.n}, 67));
  Handle bias = wrap(input(t, {c.n}, 68));
  ArrayHandle wt(w->storageRef(), transposeLayout(w->layout(), {}, "transpose"));
  Handle rows = wrap(rowOp == OpKind::LayerNorm ? layerNormOp(*x, *gamma, *beta, 1e-5)
                    : rowOp == OpKind::RmsNorm  ? rmsNormOp(*x, *gamma, 1e-3)
                                                : softmaxOp(*x));
  NodeRef product = matmulOp("matmul", *rows, c.transposedW ? wt : *w);
  if (!holdRows)
    rows.reset();
  if (!biased)
    return planForRoots({product});
  Handle p = wrap(product);
  return planForRoots({binary(OpKind::Add, *p, *bias)});
}

/// Attention as decode writes it: each head's softmax of its scores (a
/// batch of `rows`-row products of k), then times its values (k x n,
/// stored with rows along k), the probabilities held by Ruby or not.
Plan attentionPlan(DType t, Shape batch, int64_t rows, int64_t k, int64_t n, bool holdRows) {
  Shape a = batch, b = batch;
  a.append({rows, k});
  b.append({k, n});
  Handle scores = wrap(input(t, a, 73));
  Handle values = wrap(input(t, b, 74));
  Handle probs = wrap(softmaxOp(*scores));
  NodeRef out = matmulOp("matmul", *probs, *values);
  if (!holdRows)
    probs.reset();
  return planForRoots({out});
}

/// How far a product of normalized rows may be from the reference's: as a
/// small product's, but the rows, scaled by gamma (inputs reach 15), make
/// terms of a few hundred that cancel to results of a few units.
double prologueTolerance(DType t, int64_t k) {
  double sums = std::max(1.0, double(k) / 100);
  return t == DType::DFloat ? 1e-10 * sums : t == DType::SFloat ? 1e-3 * sums : 3e-2;
}

/// Whether the product of `c` takes its row op as a prologue: the rows fit
/// a warp each, held in registers, and kPrologueBytes of shared memory.
bool expectsPrologue(DType t, const SmallProductCase &c) {
  RowLayout l = rowLayout(c.k, t, rowAccumulator(t));
  return l.warpPerRow() && l.cachedGroups > 0 &&
         std::max<int64_t>(c.rows, 1) * c.k * int64_t(sizeOf(t)) <= kPrologueBytes;
}

/// A scan of `shape`, read through a reversed view when `reversed`, fed
/// by an elementwise producer (stored first: an opaque op reads buffers).
Plan scanPlan(DType t, Shape shape, OpKind op, std::optional<int64_t> axis,
              bool reversed = false) {
  Handle a = wrap(input(t, shape, 9));
  Handle twice = wrap(binary(OpKind::Add, *a, *a));
  std::unique_ptr<ArrayHandle> view;
  if (reversed) {
    std::vector<IndexItem> items(shape.size(), IndexItem::all());
    IndexItem rev;
    rev.kind = IndexItem::Kind::Range;
    rev.step = -1;
    items.back() = rev;
    view = std::make_unique<ArrayHandle>(
        twice->storageRef(), indexLayout(twice->layout(), items, "[]"));
  }
  NodeRef n = scanOp(op, view ? *view : *twice, axis);
  return planForRoots({n});
}

Plan dotPlan(int64_t n, DType t) {
  Handle p = wrap(input(t, {n}, 3));
  Handle ap = wrap(input(t, {n}, 4));
  Handle prod = wrap(binary(OpKind::Mul, *p, *ap));
  NodeRef s = reduceOp(OpKind::Sum, *prod, {}, false);
  prod.reset();
  return planForRoots({s});
}

/// sum, prod and mean of a complex class (which has no max or min).
Plan complexReductionsPlan(int64_t n, DType t) {
  Handle p = wrap(input(t, {n}, 5));
  // Factors near one, so that a long product stays finite.
  Handle q = wrap(binary(OpKind::Div, *p, Scalar::ofFloat(40000)));
  Handle f = wrap(binary(OpKind::Add, *q, Scalar::ofInt(1)));
  NodeRef sum = reduceOp(OpKind::Sum, *p, {}, false);
  NodeRef prod = reduceOp(OpKind::Prod, *f, {}, false);
  NodeRef mean = reduceOp(OpKind::Mean, *p, {}, false);
  q.reset();
  return planForRoots({sum, prod, mean});
}

Plan fullReductionsPlan(int64_t n, DType t) {
  if (isComplex(t))
    return complexReductionsPlan(n, t);
  Handle p = wrap(input(t, {n}, 5));
  NodeRef sum = reduceOp(OpKind::Sum, *p, {}, false);
  NodeRef max = reduceOp(OpKind::Max, *p, {}, false);
  NodeRef min = reduceOp(OpKind::Min, *p, {}, false);
  NodeRef mean = reduceOp(OpKind::Mean, *p, {}, false);
  return planForRoots({sum, max, min, mean});
}

/// Full reductions folded by the kernels that read them (Fold): a sum, a
/// mean and a max of p, the first two read by the next kernel (y = p * sum
/// - mean, and its own sum z), z read by a third (w = p * z), the max by
/// nobody; and a sum read first by an elementwise kernel over nothing,
/// whose one block still stores it.
Plan foldedReductionsPlan(int64_t n, DType t) {
  Handle p = wrap(input(t, {n}, 5));
  Handle sum = wrap(reduceOp(OpKind::Sum, *p, {}, false));
  Handle mean = wrap(reduceOp(OpKind::Mean, *p, {}, false));
  Handle scaled = wrap(binary(OpKind::Mul, *p, *sum));
  Handle y = wrap(binary(OpKind::Sub, *scaled, *mean));
  scaled.reset();
  Handle z = wrap(reduceOp(OpKind::Sum, *y, {}, false));
  Handle w = wrap(binary(OpKind::Mul, *p, *z));
  llvm::SmallVector<NodeRef, 8> roots = {sum->value(), mean->value(), y->value(),
                                         z->value(), w->value()};
  if (!isComplex(t))
    roots.push_back(reduceOp(OpKind::Max, *p, {}, false));
  Handle empty = wrap(input(t, {0}, 6));
  Handle q = wrap(input(t, {n}, 7));
  Handle qs = wrap(reduceOp(OpKind::Sum, *q, {}, false));
  roots.push_back(qs->value());
  roots.push_back(binary(OpKind::Add, *empty, *qs));
  return planForRoots(roots);
}

Plan axisPlan(DType t, Shape shape, OpKind op, int64_t axis, bool keepdims) {
  Handle a = wrap(input(t, shape, 6));
  return planForRoots({reduceOp(op, *a, {axis}, keepdims)});
}

/// A float class's values at the edges of every integer class (NaN, the
/// infinities, the powers of two that bound int32, int64 and uint64, and
/// their neighbours), each cast to every integer class: the device's
/// conversions against the host's (cumo_ops::float_to_int, float_to_uint).
Plan floatToIntegerPlan(DType t) {
  static const double kEdges[] = {
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
      0.0, 0.5, 0.999, 127.9, 128.0, 255.5, 256.0, 32767.5, 65535.9, 2147483520.0,
      2147483648.0, 2147483904.0, 3.0e9, 4294967296.0, 1.0e18, 9.2233720368547758e18,
      9.3e18, 1.8446744073709552e19, 3.0e19, 1.0e30, 3.4e38, 1.0e300};
  size_t n = 2 * std::size(kEdges);
  Handle x = wrap(input(t, {int64_t(n)}, 41, [&](void *bytes) {
    dispatchDType(t, [&]<DType D, class T>() {
      if constexpr (std::is_floating_point_v<T> || kIsNarrowFloatC<T>) {
        T *p = static_cast<T *>(bytes);
        for (size_t i = 0; i < std::size(kEdges); ++i) {
          p[2 * i] = T(kEdges[i]);
          p[2 * i + 1] = T(-kEdges[i]);
        }
      }
    });
  }));
  std::vector<NodeRef> roots;
  for (DType to : {DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8,
                   DType::UInt16, DType::UInt32, DType::UInt64})
    roots.push_back(castTo(*x, to));
  return planForRoots(roots);
}

/// Every op a dtype admits, with casts to every dtype, in one kernel.
Plan dtypePlan(DType t, int64_t rows = 4, int64_t cols = 6) {
  Handle a = wrap(input(t, {rows, cols}, 7));
  Handle b = wrap(input(t, {cols}, 8));
  llvm::SmallVector<NodeRef, 32> roots;
  bool complex = isComplex(t);
  if (t != DType::Bit) {
    for (OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                      OpKind::Mod, OpKind::Pow, OpKind::Maximum, OpKind::Minimum})
      if (!complex || elementDomain(op) == ElementDomain::Number)
        roots.push_back(binary(op, *a, *b));
    roots.push_back(unaryOp(OpKind::Neg, *a));
    roots.push_back(unaryOp(OpKind::Abs, *a));
  }
  if (isFloat(t) || complex)
    for (OpKind op : {OpKind::Sqrt, OpKind::Exp, OpKind::Log})
      roots.push_back(unaryOp(op, *a));
  for (OpKind op : {OpKind::Eq, OpKind::Ne, OpKind::Lt, OpKind::Ge})
    if (!complex || op == OpKind::Eq || op == OpKind::Ne)
      roots.push_back(binary(op, *a, *b));
  for (int u = 0; u < kNumDTypes; ++u)
    if (!complex || isComplex(DType(u))) // complex to real: CastError
      roots.push_back(castTo(*a, DType(u)));
  return planForRoots(roots);
}

/// Every op of ops/math.h a dtype admits: the math functions, rounding,
/// sign, predicates, clip, maximum and minimum for float classes; bitwise
/// operators, shifts, clip and sign for integer classes; Bit's & | ^ ~.
Plan mathPlan(DType t, int64_t rows = 4, int64_t cols = 6) {
  Handle a = wrap(input(t, {rows, cols}, 11));
  Handle b = wrap(input(t, {cols}, 12));
  Operand x = Operand::of(*a), y = Operand::of(*b);
  llvm::SmallVector<NodeRef, 64> roots;
  auto add = [&](std::pair<NodeRef, NodeRef> p) {
    roots.push_back(p.first);
    roots.push_back(p.second);
  };
  if (isComplex(t)) {
    // Every function of the complex classes' Math, their predicates and
    // parts, sign, square and copysign.
    for (int op = 0; op < int(OpKind::Update); ++op) {
      OpKind k = OpKind(op);
      auto d = elementDomain(k);
      if (!d || (*d != ElementDomain::Inexact && *d != ElementDomain::Complex))
        continue;
      if (opCategory(k) == OpCategory::Compare)
        roots.push_back(predicateOp(k, *a));
      else if (k == OpKind::MakeComplex) {
        roots.push_back(imOp(*a)->value());
        roots.push_back(setPartOp(OpKind::Real, *a, Operand::of(Scalar::ofFloat(2))));
      } else if (*d == ElementDomain::Complex)
        roots.push_back(k == OpKind::Conj ? conjOp(*a)->value()
                                          : complexPartOp(k, *a));
      else if (opArity(k) == 1)
        roots.push_back(mathOp(k, t, {x}));
      else
        roots.push_back(mathOp(k, t, {x, y}));
    }
    roots.push_back(signOp(*a));
    roots.push_back(squareOp(*a));
    roots.push_back(reciprocalOp(*a));
    return planForRoots(roots);
  }
  if (isFloat(t)) {
    for (int op = 0; op < int(OpKind::Update); ++op) {
      OpKind k = OpKind(op);
      auto d = elementDomain(k);
      if ((d != ElementDomain::Float && d != ElementDomain::Inexact) ||
          k == OpKind::Frexp || k == OpKind::FrexpExp || k == OpKind::Modf)
        continue;
      if (opCategory(k) == OpCategory::Compare)
        roots.push_back(predicateOp(k, *a));
      else if (opArity(k) == 1)
        roots.push_back(mathOp(k, t, {x}));
      else
        roots.push_back(mathOp(k, t, {x, y}));
    }
    add(frexpOp(t, x));
    add(modfOp(*a));
    roots.push_back(copysignOp(x, Operand::of(Scalar::ofFloat(-1))));
  }
  if (isInteger(t)) {
    for (OpKind op : {OpKind::BitAnd, OpKind::BitOr, OpKind::BitXor,
                      OpKind::LeftShift, OpKind::RightShift})
      roots.push_back(bitwiseOp(op, x, y));
    roots.push_back(bitNotOp(*a));
  }
  if (t == DType::Bit) {
    for (OpKind op : {OpKind::BitAnd, OpKind::BitOr, OpKind::BitXor})
      roots.push_back(bitwiseOp(op, x, y));
    roots.push_back(bitNotOp(*a));
    return planForRoots(roots);
  }
  roots.push_back(signOp(*a));
  roots.push_back(squareOp(*a));
  Operand lo = Operand::of(Scalar::ofInt(1)), hi = Operand::of(Scalar::ofInt(9));
  roots.push_back(clipOp(*a, &lo, &hi));
  roots.push_back(clipOp(*a, &y, nullptr));
  for (OpKind op : {OpKind::Fmax, OpKind::Fmin, OpKind::Maximum, OpKind::Minimum})
    roots.push_back(extremumOp(op, t, x, y));
  add(divmodOp(x, Operand::of(Scalar::ofInt(7))));
  return planForRoots(roots);
}

Plan seqPlan(DType t, Shape shape, Scalar start, Scalar step) {
  return planForRoots({seqNode(t, shape, start, step)});
}

Plan randPlan(DType t, Shape shape, Scalar low, Scalar high) {
  seedRandom(42);
  return planForRoots({randNode(t, shape, low, high)});
}

/// The CG example's operator: ap = v * 4 with each neighbour subtracted
/// through a slice update.
Plan stencilPlan(int64_t n, double four, DType t = DType::SFloat) {
  Handle v = wrap(input(t, {n, n}, 9));
  Handle ap = wrap(binary(OpKind::Mul, *v, Scalar::ofFloat(four)));
  auto subtract = [&](IndexItem r0, IndexItem c0, IndexItem r1, IndexItem c1) {
    ArrayHandle lhs(ap->storageRef(), indexLayout(ap->layout(), {r0, c0}, "[]="));
    ArrayHandle rhs(v->storageRef(), indexLayout(v->layout(), {r1, c1}, "[]"));
    assignValue(lhs, binary(OpKind::Sub, lhs, rhs), "[]=");
  };
  IndexItem all = IndexItem::all();
  subtract(range(1, -1), all, range(0, -2), all);
  subtract(range(0, -2), all, range(1, -1), all);
  subtract(all, range(1, -1), all, range(0, -2));
  subtract(all, range(0, -2), all, range(1, -1));
  return planForRoots({ap->storage().currentRef()});
}

/// Other slice boxes: a 1-D box with a step reading a strided view, a box
/// that an integer index fixes an axis of, a 3-D box, and a box nested in
/// another (an updated temporary written into a slice).
Plan boxesPlan(int64_t n, double s) {
  llvm::SmallVector<NodeRef, 4> roots;
  Handle a = wrap(input(DType::DFloat, {n}, 13));
  Handle r = wrap(binary(OpKind::Mul, *a, Scalar::ofFloat(s)));
  IndexItem stepped = range(1, -2);
  stepped.step = 3;
  ArrayHandle lhs(r->storageRef(), indexLayout(r->layout(), {stepped}, "[]="));
  IndexItem every2 = range(0, 2 * lhs.shape()[0] - 2);
  every2.step = 2;
  ArrayHandle rhs(a->storageRef(), indexLayout(a->layout(), {every2}, "[]"));
  assignValue(lhs, binary(OpKind::Sub, lhs, rhs), "[]=");
  roots.push_back(r->storage().currentRef());

  Handle x = wrap(input(DType::SFloat, {5, n}, 14));
  Handle row = wrap(input(DType::SFloat, {n}, 15));
  Handle m = wrap(binary(OpKind::Add, *x, Scalar::ofFloat(s)));
  ArrayHandle fixed(m->storageRef(),
                    indexLayout(m->layout(), {IndexItem::integer(2), IndexItem::all()}, "[]="));
  assignValue(fixed, binary(OpKind::Mul, fixed, *row), "[]=");
  ArrayHandle point(m->storageRef(), indexLayout(m->layout(), {IndexItem::integer(3),
                                                              IndexItem::integer(1)}, "[]="));
  assignValue(point, binary(OpKind::Add, point, Scalar::ofFloat(100)), "[]=");
  roots.push_back(m->storage().currentRef());

  Handle t = wrap(input(DType::Int32, {4, 5, n}, 16));
  Handle u = wrap(binary(OpKind::Add, *t, Scalar::ofInt(1)));
  IndexItem odd = range(1, -1);
  odd.step = 2;
  ArrayHandle cube(u->storageRef(),
                   indexLayout(u->layout(), {range(1, 2), IndexItem::all(), odd}, "[]="));
  // Ruby still holds the value written: it is stored from the box.
  Handle written = wrap(binary(OpKind::Mul, cube, Scalar::ofInt(-3)));
  assignValue(cube, written->value(), "[]=");
  roots.push_back(u->storage().currentRef());
  roots.push_back(written->value());

  Handle seq = wrap(seqNode(DType::DFloat, {n + 3}, Scalar::ofInt(0), Scalar::ofInt(1)));
  Handle big = wrap(binary(OpKind::Mul, *seq, Scalar::ofFloat(2)));
  Handle part = wrap(binary(OpKind::Add, *row, Scalar::ofFloat(0.5)));
  Handle small = wrap(castTo(*part, DType::DFloat));
  part.reset();
  {
    ArrayHandle inner(small->storageRef(), indexLayout(small->layout(), {range(1, 2)}, "[]="));
    assignValue(inner, binary(OpKind::Sub, inner, Scalar::ofFloat(9)), "[]=");
  }
  NodeRef updated = small->storage().currentRef();
  small.reset();
  ArrayHandle outer(big->storageRef(), indexLayout(big->layout(), {range(1, n)}, "[]="));
  assignValue(outer, updated, "[]=");
  roots.push_back(big->storage().currentRef());
  return planForRoots(roots);
}

/// a[1..k] = v on a 2-D a: a flat range no box fits.
Plan scatterPlan(int64_t rows, int64_t cols, int64_t k) {
  Handle a = wrap(input(DType::DFloat, {rows, cols}, 10));
  Handle v = wrap(input(DType::DFloat, {k}, 11));
  ArrayHandle view(a->storageRef(), indexLayout(a->layout(), {range(1, k)}, "[]="));
  assignValue(view, v->value(), "[]=");
  return planForRoots({a->storage().currentRef()});
}

} // namespace

TEST_CASE("an elementwise chain with broadcasting is one kernel") {
  Plan p = chainPlan(3, 4, 2.5, OpKind::Add);
  REQUIRE(p.kernels.size() == 1);
  CHECK(p.kernels[0].stores.size() == 3);
  compilePlan(p);
  // Sizes and scalars are parameters; the op is structure.
  checkSameKernel(p, chainPlan(7, 9, -1.25, OpKind::Add));
  CHECK(onlyKey(p) != onlyKey(chainPlan(3, 4, 2.5, OpKind::Sub)));
}

TEST_CASE("contiguous elementwise kernels have a vector loop; strided and reducing ones do not") {
  Plan linear = linearPlan(DType::DFloat, 37, 129);
  REQUIRE(linear.kernels.size() == 1);
  std::string src = generateCuda(linear.kernels[0], h200()).source;
  CHECK(src.find("cumo_vloop(P)") != std::string::npos);
  CHECK(src.find("cumo_vec<double, 2>") != std::string::npos); // DFloat: 16 bytes
  // A broadcast operand addresses by coordinates.
  CHECK(generateCuda(chainPlan(37, 129, 2.5, OpKind::Add).kernels[0], h200())
            .source.find("cumo_vloop") == std::string::npos);
  for (int t = 0; t < kNumDTypes; ++t) {
    CAPTURE(nameOf(DType(t)));
    compilePlan(linearPlan(DType(t), 33, 65));
  }
  // The stencil's slice boxes address by coordinates; a dot reduces.
  for (const Kernel &k : stencilPlan(16, 4.0).kernels)
    CHECK(generateCuda(k, h200()).source.find("cumo_vloop") == std::string::npos);
  CHECK(generateCuda(dotPlan(1000, DType::SFloat).kernels[0], h200()).source.find("cumo_vloop") ==
        std::string::npos);
}

TEST_CASE("(p * ap).sum is one kernel with its prologue") {
  Plan p = dotPlan(1000, DType::SFloat);
  REQUIRE(p.kernels.size() == 1);
  const Kernel &k = p.kernels[0];
  CHECK(k.kind == Kernel::Kind::Elementwise);
  CHECK(k.reduces.size() == 1);
  compilePlan(p);
  checkSameKernel(p, dotPlan(1 << 20, DType::SFloat));
  CHECK(onlyKey(p) != onlyKey(dotPlan(1000, DType::DFloat)));

  // Two elements a thread, 256 threads a block: 1000 elements take 2
  // blocks; a big domain takes the blocks every kernel fits at once.
  LaunchConfig small = launchConfig(k, h200());
  CHECK(small.grid == 2);
  CHECK(scratchBytes(k, small) == 16 + 2 * 8);
  LaunchConfig big = launchConfig(dotPlan(1 << 24, DType::SFloat).kernels[0], h200());
  CHECK(big.grid == uint32_t(h200().smCount) * 4);
  // With 32-bit indices the loop computes both elements before it writes.
  std::string src = generateCuda(k, h200()).source;
  CHECK(src.find("const I idx_1 = has_1 ? idx + stride : idx;") != std::string::npos);
  CHECK(src.find("if constexpr (sizeof(I) == 4)") != std::string::npos);

  // Several full reductions of one domain share the kernel.
  Plan many = fullReductionsPlan(777, DType::DFloat);
  REQUIRE(many.kernels.size() == 1);
  CHECK(many.kernels[0].reduces.size() == 4);
  compilePlan(many);
  compilePlan(fullReductionsPlan(100, DType::Int8));
  compilePlan(fullReductionsPlan(100, DType::UInt64));
}

TEST_CASE("axis reductions") {
  Plan rows = axisPlan(DType::DFloat, {5, 7}, OpKind::Sum, 0, true);
  Plan cols = axisPlan(DType::DFloat, {5, 7}, OpKind::Sum, 1, true);
  for (const Plan *p : {&rows, &cols}) {
    REQUIRE(p->kernels.size() == 1);
    CHECK(p->kernels[0].kind == Kernel::Kind::AxisReduce);
    compilePlan(*p);
  }
  CHECK(onlyKey(rows) != onlyKey(cols));
  checkSameKernel(rows, axisPlan(DType::DFloat, {6, 11}, OpKind::Sum, 0, false));
  CHECK(onlyKey(rows) != onlyKey(axisPlan(DType::DFloat, {5, 7}, OpKind::Max, 0, true)));

  // One thread, one warp or one block per output, by length.
  Plan thread = axisPlan(DType::SFloat, {3, 20}, OpKind::Sum, 1, false);
  Plan warp = axisPlan(DType::SFloat, {3, 200}, OpKind::Sum, 1, false);
  Plan block = axisPlan(DType::SFloat, {3, 20000}, OpKind::Sum, 1, false);
  Plan columns = axisPlan(DType::SFloat, {100, 5000}, OpKind::Sum, 0, false);
  CHECK(onlyKey(thread) != onlyKey(warp));
  CHECK(onlyKey(warp) != onlyKey(block));
  CHECK(onlyKey(block) != onlyKey(axisPlan(DType::SFloat, {3, 20}, OpKind::Sum, 0, false)));
  CHECK(launchConfig(thread.kernels[0], h200()).grid == 1);
  CHECK(launchConfig(warp.kernels[0], h200()).grid == 1);
  CHECK(launchConfig(block.kernels[0], h200()).grid == 3);
  CHECK(launchConfig(columns.kernels[0], h200()).grid == 20);
  for (const Plan *p : {&thread, &warp, &block, &columns})
    compilePlan(*p);
  CHECK(scratchBytes(block.kernels[0], launchConfig(block.kernels[0], h200())) == 0);

  // Accumulators of every width travel through the shuffles.
  compilePlan(axisPlan(DType::Int8, {4, 300}, OpKind::Max, 1, false));
  compilePlan(axisPlan(DType::UInt16, {2, 9000}, OpKind::Min, 1, false));
  compilePlan(axisPlan(DType::Int16, {4, 300}, OpKind::Prod, 1, false));
  compilePlan(axisPlan(DType::Bit, {4, 300}, OpKind::Sum, 1, false));
  compilePlan(axisPlan(DType::Bit, {4, 300}, OpKind::Max, 1, false));
  compilePlan(axisPlan(DType::Int32, {6, 5, 4}, OpKind::Mean, 1, true));
  compilePlan(axisPlan(DType::SFloat, {6, 5, 40}, OpKind::Sum, 2, true));
}

TEST_CASE("every dtype: arithmetic, comparisons and casts") {
  for (int t = 0; t < kNumDTypes; ++t) {
    CAPTURE(nameOf(DType(t)));
    Plan p = dtypePlan(DType(t));
    CHECK(p.kernels.size() == 1);
    compilePlan(p);
    checkSameKernel(p, dtypePlan(DType(t), 9, 2));
  }
}

TEST_CASE("every dtype: math, rounding, predicates, bitwise, clip") {
  for (int t = 0; t < kNumDTypes; ++t) {
    CAPTURE(nameOf(DType(t)));
    Plan p = mathPlan(DType(t));
    REQUIRE(!p.kernels.empty());
    compilePlan(p);
    checkSameKernel(p, mathPlan(DType(t), 9, 2));
  }
}

TEST_CASE("seq and rand generators") {
  Plan seqF = seqPlan(DType::DFloat, {10}, Scalar::ofFloat(1.5), Scalar::ofFloat(0.5));
  Plan seqI = seqPlan(DType::Int32, {3, 4}, Scalar::ofInt(2), Scalar::ofInt(3));
  Plan seqIF = seqPlan(DType::Int32, {3, 4}, Scalar::ofInt(2), Scalar::ofFloat(0.5));
  Plan seqB = seqPlan(DType::UInt8, {300}, Scalar::ofInt(0), Scalar::ofInt(1));
  Plan randS = randPlan(DType::SFloat, {100}, Scalar::ofInt(0), Scalar::ofInt(1));
  Plan randD = randPlan(DType::DFloat, {10, 10}, Scalar::ofFloat(-1), Scalar::ofFloat(1));
  Plan randI = randPlan(DType::Int64, {100}, Scalar::ofInt(-5), Scalar::ofInt(100));
  Plan randU = randPlan(DType::UInt8, {100}, Scalar::ofInt(0), Scalar::ofInt(200));
  for (const Plan *p : {&seqF, &seqI, &seqIF, &seqB, &randS, &randD, &randI, &randU}) {
    REQUIRE(p->kernels.size() == 1);
    REQUIRE(p->kernels[0].generators.size() == 1);
    compilePlan(*p);
  }
  checkSameKernel(seqF, seqPlan(DType::DFloat, {99}, Scalar::ofFloat(-3), Scalar::ofFloat(2)));
  checkSameKernel(randS, randPlan(DType::SFloat, {7}, Scalar::ofFloat(2), Scalar::ofInt(9)));
  // Whether seq of an integer class steps in floats is structure.
  CHECK(onlyKey(seqI) != onlyKey(seqIF));
}

TEST_CASE("the new dtypes: reductions, generators, boxes") {
  const DType kNew[] = {DType::HFloat, DType::BFloat, DType::SComplex, DType::DComplex};
  for (DType t : kNew) {
    CAPTURE(nameOf(t));
    Plan full = fullReductionsPlan(777, t);
    REQUIRE(full.kernels.size() == 1);
    compilePlan(full);
    compilePlan(dotPlan(1000, t));
    // Sums and means of the half types accumulate in single precision;
    // products, maxima and minima in the class.
    for (const Reduce &r : full.kernels[0].reduces) {
      CAPTURE(opName(r.op));
      bool widens = isNarrowFloat(t) && (r.op == OpKind::Sum || r.op == OpKind::Mean);
      CHECK(r.accumulator == (widens ? DType::SFloat : t));
      CHECK(r.dtype == t);
    }
    for (OpKind op : {OpKind::Sum, OpKind::Prod, OpKind::Mean, OpKind::Max}) {
      if (op == OpKind::Max && isComplex(t))
        continue;
      compilePlan(axisPlan(t, {37, 29}, op, 0, true));   // a thread per output
      compilePlan(axisPlan(t, {4, 300}, op, 1, false));  // a warp
      compilePlan(axisPlan(t, {3, 20000}, op, 1, false)); // a block
    }
    compilePlan(seqPlan(t, {10, 3}, Scalar::ofFloat(1.5), Scalar::ofFloat(0.25)));
    compilePlan(randPlan(t, {100}, Scalar::ofInt(-1), Scalar::ofInt(3)));
    compilePlan(stencilPlan(8, 4.0, t));
  }
  compilePlan(seqPlan(DType::DComplex, {5}, Scalar::ofComplex(1, 1), Scalar::ofComplex(0, 1)));
  compilePlan(randPlan(DType::SComplex, {5}, Scalar::ofInt(0), Scalar::ofComplex(1, 2)));
  // A DComplex partial takes 16 bytes; the others keep 8.
  Plan dc = fullReductionsPlan(1000, DType::DComplex);
  LaunchConfig launch = launchConfig(dc.kernels[0], h200());
  CHECK(scratchBytes(dc.kernels[0], launch) == 16 + 3 * launch.grid * 16);
  Plan sc = fullReductionsPlan(1000, DType::SComplex);
  CHECK(scratchBytes(sc.kernels[0], launch) == 16 + 3 * launch.grid * 8);
  // Complex generators carry both parts of a and b.
  std::string src = generateCuda(seqPlan(DType::SComplex, {5}, Scalar::ofInt(0),
                                         Scalar::ofComplex(0, 1)).kernels[0], h200()).source;
  CHECK(src.find("_ai") != std::string::npos);
  CHECK(src.find("cumo_ops::seq_scomplex") != std::string::npos);
  // The half types spell their values as the structs, never as __half.
  std::string h = generateCuda(dtypePlan(DType::HFloat).kernels[0], h200()).source;
  CHECK(h.find("cumo_ops::half") != std::string::npos);
  CHECK(h.find("__half") == std::string::npos);
}

TEST_CASE("the 5-point stencil is one kernel of slice boxes") {
  Plan p = stencilPlan(8, 4.0);
  REQUIRE(p.kernels.size() == 1);
  const Kernel &k = p.kernels[0];
  CHECK(k.kind == Kernel::Kind::Elementwise);
  CHECK(k.bases.size() >= 2);
  CHECK(llvm::count_if(k.values, [](const Value &v) {
          return v.kind == Value::Kind::Select;
        }) == 4);
  compilePlan(p);
  checkSameKernel(p, stencilPlan(33, 5.0));
}

TEST_CASE("boxes with steps, fixed axes, three axes and nesting") {
  Plan p = boxesPlan(12, 1.5);
  CHECK(p.kernels.size() == 2); // domains [n + 3] and [4, 5, n]
  bool nested = false;
  for (const Kernel &k : p.kernels)
    for (size_t b = 1; b < k.bases.size(); ++b)
      nested |= k.bases[b].parent > 0;
  CHECK(nested);
  CHECK(llvm::any_of(p.kernels, [](const Kernel &k) {
    return llvm::any_of(k.stores, [](const Store &s) { return s.index.basis > 0; });
  }));
  compilePlan(p);
  checkSameKernel(p, boxesPlan(31, -2.0));
}

TEST_CASE("a small product computes its indices in 32 bits where every index fits") {
  auto sourceOf = [](int64_t k, int64_t n) {
    Handle x = wrap(input(DType::SFloat, {1, k}, 90));
    // Generated, so that planning it allocates nothing.
    Handle w = wrap(seqNode(DType::SFloat, {k, n}, Scalar::ofInt(0), Scalar::ofInt(1)));
    Plan p = planForRoots({matmulOp("matmul", *x, *w)});
    const Kernel &product = p.kernels.back();
    REQUIRE(isSmallProduct(product));
    return generateCuda(product, h200()).source;
  };
  CHECK(sourceOf(768, 50257).find("using IX = int;") != std::string::npos);
  // 2^15 x 2^15 + 2^15: the matrix's last element lies past 2^30.
  std::string wide = sourceOf(32768, 32769);
  CHECK(wide.find("using IX = long long;") != std::string::npos);
  CHECK(wide.find("using IX = int;") == std::string::npos);
}

TEST_CASE("a small product narrows its tiles to its extents: (k, n) tiles before k splits, lanes along a short k") {
  // The launch's lanes across a tile: as many as leave every SM two tiles,
  // down to one (a thread's 16-byte vector of a row); splits of k only
  // past that.
  auto launchOf = [](DType t, int64_t rows, int64_t k, int64_t n, int sms) {
    DeviceModel model = h200();
    model.smCount = sms;
    Plan p = smallProductPlan(t, rows, k, n, false);
    REQUIRE(p.kernels.size() == 1);
    return launchConfig(p.kernels[0], model);
  };
  // Wide enough with every lane across: 32 lanes, no split.
  LaunchConfig wide = launchOf(DType::SFloat, 1, 768, 3072, 8);
  CHECK(wide.tileLanes == 32);
  CHECK(wide.grid == 3072 / 128);
  // A decode's 768 columns on 132 SMs: the narrowest tiles (a lane of 4
  // floats), 192 of them; 2304 columns stop at 2 lanes (288 tiles).
  LaunchConfig narrow = launchOf(DType::SFloat, 1, 768, 768, 132);
  CHECK(narrow.tileLanes == 1);
  CHECK(narrow.grid == 192);
  CHECK(launchOf(DType::SFloat, 1, 768, 2304, 132).tileLanes == 2);
  // Half floats: 8 to a vector.
  CHECK(launchOf(DType::BFloat, 1, 768, 768, 132).tileLanes == 1);
  // One column a thread (unaligned columns): 2 lanes of 4 bytes at the least.
  CHECK(launchOf(DType::SFloat, 1, 77, 45, 132).tileLanes == 2);
  // The narrowest tiles too few and k long: k split over blocks, each run
  // at least 4 loads of every thread (1024 rows).
  LaunchConfig split = launchOf(DType::SFloat, 1, 4096, 40, 16);
  CHECK(split.tileLanes == 1);
  CHECK(split.grid == 10 * 4);
  // A batch's tiles count for every product: two products of 6 tiles on
  // 16 SMs split k in two (the emulated comparisons' batched case).
  {
    DeviceModel model = h200();
    model.smCount = 16;
    Plan p = batchedSmallPlan(DType::SFloat, {2, 1, 2048}, {2, 2048, 24}, false);
    REQUIRE(p.kernels.size() == 1);
    LaunchConfig batched = launchConfig(p.kernels[0], model);
    CHECK(batched.tileLanes == 1);
    CHECK(batched.grid == 6 * 2 * 2);
  }
  // With a prologue, the plain product's tiling: the tiles and splits fix
  // the order of the fold over k, and the fused kernel must give the two
  // kernels' numbers.
  for (DType t : {DType::SFloat, DType::BFloat})
    for (SmallProductCase c : {SmallProductCase{1, 768, 768, false},
                               SmallProductCase{1, 768, 2304, false},
                               SmallProductCase{4, 1024, 40, false}}) {
      CAPTURE(c.k);
      CAPTURE(c.n);
      Plan p = prologuePlan(t, c, OpKind::LayerNorm, false, false);
      REQUIRE(p.kernels.back().hasPrologue());
      LaunchConfig normed = launchConfig(p.kernels.back(), h200());
      LaunchConfig plain = launchOf(t, c.rows, c.k, c.n, h200().smCount);
      CHECK(normed.tileLanes == plain.tileLanes);
      CHECK(normed.grid == plain.grid);
    }
  // Along k, as many lanes a column as k has 16-byte vectors, up to 32:
  // an attention head's 64 floats take 16, its 64 halves 8.
  auto alongOf = [](DType t, int64_t k) {
    Plan p = smallProductPlan(t, 1, k, 1000, true);
    REQUIRE(p.kernels.size() == 1);
    return launchConfig(p.kernels[0], h200());
  };
  CHECK(alongOf(DType::SFloat, 768).tileLanes == 32);
  CHECK(alongOf(DType::SFloat, 64).tileLanes == 16);
  CHECK(alongOf(DType::BFloat, 64).tileLanes == 8);
  CHECK(alongOf(DType::BFloat, 64).grid == (1000 + 31) / 32);
  // The columns a lane group folds at once: up to 4 for one or two rows,
  // 2 for up to eight (of 16 lanes from five rows on), 1 for more, and
  // fewer where the blocks would not give every SM one; the grid at most
  // one wave of 3 blocks an SM, two rows or more widened into shared
  // memory, a single one read where it lies.
  auto alongN = [](DType t, int64_t rows, int64_t n) {
    Plan p = smallProductPlan(t, rows, 768, n, true);
    REQUIRE(p.kernels.size() == 1);
    return launchConfig(p.kernels[0], h200());
  };
  int64_t sms = h200().smCount;
  LaunchConfig lmHead = alongN(DType::BFloat, 1, 50257);
  CHECK(lmHead.tileLanes == 32);
  CHECK(lmHead.tileColumns == 4);
  CHECK(lmHead.grid == sms * 3);
  CHECK(lmHead.sharedBytes == 0);
  CHECK(alongN(DType::DFloat, 2, 50257).sharedBytes == 2 * 768 * 8);
  CHECK(alongN(DType::BFloat, 4, 50257).tileColumns == 2);
  CHECK(alongN(DType::BFloat, 4, 50257).tileLanes == 32);
  CHECK(alongN(DType::BFloat, 8, 50257).tileColumns == 2);
  CHECK(alongN(DType::BFloat, 8, 50257).tileLanes == 16);
  CHECK(alongN(DType::BFloat, 16, 50257).tileColumns == 1);
  CHECK(alongN(DType::BFloat, 16, 50257).tileLanes == 32);
  // The usual launch (these lanes and columns) as the kernel's constants;
  // any other reads them from the parameters.
  {
    std::string src = generateCuda(smallProductPlan(DType::BFloat, 8, 768, 50257, true).kernels[0],
                                   h200())
                          .source;
    CHECK(src.find("if (P.lanes == 16 && P.cols == CG)") != std::string::npos);
    CHECK(src.find("along_k(cumo_k::fixed_int<0>(), cumo_k::fixed_int<0>())") !=
          std::string::npos);
  }
  // 2304 columns: 72 blocks at 4 columns, 144 at 2.
  CHECK(alongN(DType::BFloat, 1, 2304).tileColumns == 2);
  CHECK(alongN(DType::BFloat, 1, 2304).grid == 144);
  CHECK(alongN(DType::BFloat, 1, 768).tileColumns == 1);
  // Early loads along k for up to two rows, or four with a prologue: more
  // rows' sums beside the early vectors spilled (ptxas, sm_90; eight rows
  // of two columns and a layer_norm prologue, 136 bytes).
  auto loadsEarly = [](const Plan &p) {
    return generateCuda(p.kernels.back(), h200()).source.find("early[") != std::string::npos;
  };
  CHECK(loadsEarly(smallProductPlan(DType::BFloat, 2, 768, 1000, true)));
  CHECK(!loadsEarly(smallProductPlan(DType::BFloat, 3, 768, 1000, true)));
  CHECK(!loadsEarly(smallProductPlan(DType::SFloat, 8, 768, 1000, true)));
  CHECK(loadsEarly(prologuePlan(DType::BFloat, {4, 256, 700, true}, OpKind::LayerNorm, false, false)));
  CHECK(!loadsEarly(prologuePlan(DType::BFloat, {8, 256, 700, true}, OpKind::LayerNorm, false, false)));
  CHECK(!loadsEarly(prologuePlan(DType::BFloat, {16, 256, 700, true}, OpKind::LayerNorm, false, false)));
  // A batch (an attention's keys) one column at a time, read in place.
  {
    Plan p = batchedSmallPlan(DType::SFloat, {12, 1, 64}, {12, 64, 100}, true);
    REQUIRE(p.kernels.size() == 1);
    LaunchConfig batched = launchConfig(p.kernels[0], h200());
    CHECK(batched.tileColumns == 1);
    CHECK(batched.sharedBytes == 0);
  }
  CHECK(onlyKey(smallProductPlan(DType::BFloat, 1, 768, 50257, true)) ==
        onlyKey(smallProductPlan(DType::BFloat, 1, 768, 768, true)));
  // The extents are the launch's: the kernel is one.
  CHECK(onlyKey(smallProductPlan(DType::SFloat, 1, 768, 768, false)) ==
        onlyKey(smallProductPlan(DType::SFloat, 1, 4096, 40, false)));
}

TEST_CASE("a write no box fits is a scatter kernel") {
  Plan p = scatterPlan(3, 4, 5);
  CHECK(llvm::any_of(p.kernels, [](const Kernel &k) {
    return k.kind == Kernel::Kind::Scatter;
  }));
  compilePlan(p);
  checkSameKernel(p, scatterPlan(5, 6, 9));
}

TEST_CASE("an empty domain launches nothing") {
  Handle a = wrap(fillNode(DType::SFloat, {0, 3}, Scalar::ofFloat(2)));
  Plan p = planForRoots({binary(OpKind::Add, *a, Scalar::ofFloat(1))});
  REQUIRE(p.kernels.size() == 1);
  CHECK(launchConfig(p.kernels[0], h200()).grid == 0);
  compilePlan(p);
  // A small product of an empty batch, the empty axis broadcast against a
  // matrix without one (the seed's [0, 2, 3] @ [3, 2]): its operand's
  // buffer is empty, so a launch read a null pointer on the H200.
  for (bool swapped : {false, true}) {
    Plan e = batchedSmallPlan(DType::DFloat, {0, 2, 3}, {3, 2}, swapped);
    REQUIRE(e.kernels.size() == 1);
    REQUIRE(isSmallProduct(e.kernels[0]));
    CHECK(launchConfig(e.kernels[0], h200()).grid == 0);
  }
}

TEST_CASE("a prepared kernel patches its last block as packing would write it") {
  // A repeated flush of a cached plan packs its kernels by patching the
  // changing fields (pointers, scalars, seq and rand parameters) into the
  // last block; the result must be byte for byte what a full pack writes.
  std::vector<Plan> plans;
  plans.push_back(stencilPlan(9, 4.0));
  plans.push_back(seqPlan(DType::DFloat, {3, 5}, Scalar::ofFloat(1.5), Scalar::ofFloat(0.25)));
  plans.push_back(randPlan(DType::SFloat, {17}, Scalar::ofFloat(-1), Scalar::ofFloat(2)));
  plans.push_back(randPlan(DType::Int32, {17}, Scalar::ofInt(-5), Scalar::ofInt(9)));
  plans.push_back(dotPlan(100, DType::SFloat));
  plans.push_back(chainPlan(4, 6, 2.5, OpKind::Mul));
  // An epilogue's loads, stores and scalars, after the product's operands.
  plans.push_back(epiloguePlan(DType::SFloat, {3, 77, 45, false}, true));
  for (Plan &plan : plans) {
    for (Kernel &k : plan.kernels) {
      PreparedKernel prepared(k, h200());
      LaunchConfig launch = prepared.launch(k, h200());
      auto pointers = [&](uintptr_t base) {
        std::vector<void *> b;
        for (size_t i = 0; i < plan.buffers.size(); ++i)
          b.push_back(reinterpret_cast<void *>(base + 0x1000 * i));
        return b;
      };
      llvm::SmallVector<char, 512> first;
      prepared.pack(k, launch, pointers(0x100000), (void *)0x5000, (void *)0x6000, first);
      // The next flush: other buffers, scratch, scalars and generator values.
      for (Param &p : k.params)
        p.value = Scalar::ofFloat(p.value.asDouble() * 3 + 1);
      for (Generator &g : k.generators) {
        g.a = Scalar::ofFloat(g.a.asDouble() + 0.5);
        g.b = g.b.isFloat() ? Scalar::ofFloat(g.b.asDouble() * 2) : Scalar::ofInt(g.b.i * 2);
        g.seed += 7;
        g.counter += 1000;
      }
      llvm::SmallVector<char, 512> patched(5, 'x'), full(5, 'x');
      prepared.pack(k, launch, pointers(0x900000), (void *)0x7000, (void *)0x8000, patched);
      packParams(k, launch, pointers(0x900000), (void *)0x7000, (void *)0x8000, full);
      CHECK(patched.size() == full.size());
      CHECK(std::memcmp(patched.data(), full.data(), full.size()) == 0);
    }
  }
}

TEST_CASE("scans are opaque kernels NVRTC compiles for every dtype") {
  for (DType t : {DType::Int32, DType::Int64, DType::UInt8, DType::SFloat, DType::DFloat,
                  DType::HFloat, DType::BFloat, DType::SComplex, DType::DComplex}) {
    CAPTURE(nameOf(t));
    for (OpKind op : {OpKind::CumSum, OpKind::CumProd}) {
      Plan flat = scanPlan(t, {3, 4}, op, std::nullopt);
      Plan along = scanPlan(t, {3, 4, 5}, op, int64_t(1), /*reversed=*/true);
      for (const Plan *plan : {&flat, &along}) {
        const Kernel &scan = plan->kernels.back();
        CHECK(scan.kind == Kernel::Kind::Opaque);
        CHECK(!compileOrFail(scan).empty());
      }
    }
  }
  // Sizes and strides are parameters: one source for every extent.
  Plan small = scanPlan(DType::SFloat, {3, 4}, OpKind::CumSum, int64_t(0));
  Plan large = scanPlan(DType::SFloat, {30, 41}, OpKind::CumSum, int64_t(0));
  CHECK(kernelKey(small.kernels.back(), h200()) == kernelKey(large.kernels.back(), h200()));
}

TEST_CASE("index arrays and sorts are opaque kernels NVRTC compiles for every dtype") {
  auto opaque = [](const Plan &p) {
    return llvm::count_if(p.kernels, [](const Kernel &k) { return k.kind == Kernel::Kind::Opaque; });
  };
  auto gathers = [](const Plan &p) {
    size_t n = 0;
    for (const Kernel &k : p.kernels)
      n += size_t(llvm::count_if(k.values, [](const Value &v) { return v.kind == Value::Kind::Gather; }));
    return n;
  };
  for (int k = 0; k < kNumDTypes; ++k) {
    DType t = DType(k);
    CAPTURE(nameOf(t));
    // From a pending array, each gather is an index kernel; from a settled
    // one, the kernel that reads it reads its elements (the write stays).
    Plan fancy = fancyPlan(t, false);
    CHECK(opaque(fancy) == 2);
    compilePlan(fancy);
    Plan inlined = fancyPlan(t);
    CHECK(opaque(inlined) == 1);
    CHECK(gathers(inlined) == 1);
    compilePlan(inlined);
    Plan device = deviceFancyPlan(t, 0, false);
    CHECK(opaque(device) == 5);
    compilePlan(device);
    Plan deviceInlined = deviceFancyPlan(t);
    CHECK(opaque(deviceInlined) == 1);
    CHECK(gathers(deviceInlined) == 4);
    compilePlan(deviceInlined);
    if (t != DType::Bit && !isComplex(t))
      compilePlan(sortPlan(t));
  }
}

TEST_CASE("sibling writes at one table's positions are one kernel, compiled for every class") {
  for (int k = 0; k < kNumDTypes; ++k) {
    DType t = DType(k);
    CAPTURE(nameOf(t));
    for (int64_t repeat : {1, 2}) {
      Plan p = siblingWritesPlan(t, repeat);
      size_t writes = 0;
      for (const Kernel &kk : p.kernels)
        if (kk.kind == Kernel::Kind::Opaque) {
          ++writes;
          CHECK(kk.stores.size() == 2);
          std::string src = generateCuda(kk, h200()).source;
          CHECK(src.find("P.out1[P.out1_off + p] = P.in2[at2(j)]") != std::string::npos);
          CHECK((src.find("bool later") != std::string::npos) == (repeat > 1));
        }
      CHECK(writes == 1);
      compilePlan(p);
    }
  }
}

TEST_CASE("gathers and writes at device positions check them, in sources no index value changes") {
  for (bool settled : {false, true}) {
    CAPTURE(settled);
    Plan a = deviceFancyPlan(DType::SFloat, 0, settled);
    Plan b = deviceFancyPlan(DType::SFloat, 1, settled);
    REQUIRE(a.kernels.size() == b.kernels.size());
    for (size_t i = 0; i < a.kernels.size(); ++i) {
      CAPTURE(i);
      CHECK(kernelKey(a.kernels[i], h200()) == kernelKey(b.kernels[i], h200()));
      std::string src = generateCuda(a.kernels[i], h200()).source;
      CHECK(src == generateCuda(b.kernels[i], h200()).source);
      if (a.kernels[i].kind == Kernel::Kind::Opaque || !a.kernels[i].gathers.empty())
        CHECK(src.find("atomicMin(P.err + 1, (unsigned int)P.tag)") != std::string::npos);
    }
    // Positions known on the host were checked at the call: no flag.
    for (const Kernel &k : fancyPlan(DType::SFloat, settled).kernels)
      CHECK(generateCuda(k, h200()).source.find("P.err") == std::string::npos);
  }
}

/// The row layouts of ops/row_layout.h: a warp per row with vector loads
/// and without, a block per row, a row too long for the registers.
const std::pair<int64_t, int64_t> kRowShapes[] = {{3, 5}, {9, 64}, {4, 3000}, {2, 40000}};

TEST_CASE("quantize_symmetric is a reduction and an elementwise kernel, compiled for every float class") {
  for (DType t : {DType::HFloat, DType::BFloat, DType::SFloat, DType::DFloat})
    for (auto [rows, cols] : kRowShapes) {
      CAPTURE(nameOf(t));
      CAPTURE(cols);
      compilePlan(quantizePlan(t, {rows, cols}));
    }
}

// Each element of a float row takes the row's divisor (one reciprocal a
// row, the division's bits) and converts to Int8 by the float's bits: no
// division, round() or 64-bit conversion an element (fusion/
// cuda_rowwise_codegen.cpp, ops/portable_ops.h).
TEST_CASE("quantize_symmetric's row kernel divides by the row's divisor and converts by bits") {
  for (DType t : {DType::HFloat, DType::BFloat, DType::SFloat})
    for (auto [rows, cols] : kRowShapes) {
      CAPTURE(nameOf(t));
      CAPTURE(cols);
      Plan p = quantizePlan(t, {rows, cols});
      int quantizing = 0;
      for (const Kernel &k : p.kernels) {
        std::string src = generateCuda(k, h200()).source;
        if (k.kind != Kernel::Kind::Rowwise || src.find("quantize") == std::string::npos)
          continue;
        ++quantizing;
        CHECK(src.find("const cumo_ops::divisor<float> ") != std::string::npos);
        CHECK(src.find("cumo_ops::quantize_symmetric_by(") != std::string::npos);
        CHECK(src.find("cumo_ops::quantize_symmetric_element(") == std::string::npos);
        CHECK(src.find("(signed char)cumo_ops::quantized_to_int(") != std::string::npos);
        CHECK(src.find("float_to_int") == std::string::npos);
      }
      // Three rows of 5 take a reduction kernel and an elementwise one.
      CHECK((quantizing > 0 || cols < 64));
    }
}

TEST_CASE("row programs of sixteen-bit rows a block holds read each next row ahead, by one wave of blocks") {
  // 32768 rows of 1024: a block of 64 lanes a row, two groups a lane held
  // (fusion/row_program.cpp); sixteen bits a block reads ahead and
  // launches 768 threads an SM, bounds to match, SFloat keeps a block a
  // row up to 32 an SM.
  for (DType t : {DType::BFloat, DType::HFloat, DType::SFloat}) {
    CAPTURE(nameOf(t));
    bool narrow = t != DType::SFloat;
    for (const Plan &p : {quantizePlan(t, {32768, 1024}), writtenRowPlan(t, 32768, 1024)}) {
      int rowKernels = 0;
      for (const Kernel &k : p.kernels) {
        if (k.kind != Kernel::Kind::Rowwise || rowProgram(k).layout.warpPerRow())
          continue;
        ++rowKernels;
        LaunchConfig c = launchConfig(k, h200());
        CHECK(c.block == 64u);
        CHECK(c.grid == uint32_t(h200().smCount) * (narrow ? 12 : 32));
        std::string src = generateCuda(k, h200()).source;
        CHECK((src.find("__launch_bounds__(64, 12)") != std::string::npos) == narrow);
        CHECK((src.find("if (row + stride < rows) fetch(row + stride);") != std::string::npos) ==
              narrow);
      }
      CHECK(rowKernels > 0);
    }
  }
  // Fewer rows than the wave: a block a row.
  for (const Kernel &k : quantizePlan(DType::BFloat, {100, 1024}).kernels)
    if (k.kind == Kernel::Kind::Rowwise && !rowProgram(k).layout.warpPerRow())
      CHECK(launchConfig(k, h200()).grid == 100u);
  // Rows too long to hold in registers are read again from memory: no
  // reading ahead.
  for (const Kernel &k : quantizePlan(DType::BFloat, {4096, 4096}).kernels)
    CHECK(generateCuda(k, h200()).source.find("fetch(") == std::string::npos);
}

TEST_CASE("full reductions of one row are one Rowwise kernel each, compiled for every float class") {
  for (DType t : {DType::HFloat, DType::BFloat, DType::SFloat, DType::DFloat}) {
    CAPTURE(nameOf(t));
    for (int64_t cols : {int64_t(40), kMaxOneRowLength}) {
      Plan p = oneRowPlan(t, cols);
      REQUIRE(p.kernels.size() == 3);
      for (const Kernel &k : p.kernels)
        CHECK(k.kind == Kernel::Kind::Rowwise);
    }
    compilePlan(oneRowPlan(t, 1000));
    // Past kMaxOneRowLength the reductions run over many blocks.
    Plan longRow = oneRowPlan(t, kMaxOneRowLength + 1);
    CHECK(llvm::none_of(longRow.kernels,
                        [](const Kernel &k) { return k.kind == Kernel::Kind::Rowwise; }));
  }
}

TEST_CASE("written-out row operations are one Rowwise kernel each, compiled for every float class") {
  for (DType t : {DType::HFloat, DType::BFloat, DType::SFloat, DType::DFloat}) {
    CAPTURE(nameOf(t));
    for (auto [rows, cols] : kRowShapes) {
      CAPTURE(cols);
      Plan p = writtenRowPlan(t, rows, cols);
      if (cols >= kMinRowLength) {
        // Four groups read x, and one mean is shared by layer_norm and
        // the mean absolute deviation: four kernels.
        CHECK(p.kernels.size() == 4);
        for (const Kernel &k : p.kernels)
          CHECK(k.kind == Kernel::Kind::Rowwise);
      }
      compilePlan(p);
    }
    compilePlan(writtenRowPlan(t, 5, 64, true));
  }
}

/// Occurrences of `what` in `text`.
size_t countOf(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST_CASE("a row program keeps in registers what a later pass would compute again") {
  for (DType t : {DType::BFloat, DType::SFloat}) {
    CAPTURE(nameOf(t));
    // Rows held in registers (64 long): softmax's exp(x - max) is computed
    // by the sum's pass and read back by the stores' two paths (a group at
    // a time, an element at a time) where a sixteen-bit class makes it
    // costly to compute again. SFloat computes it again, as do rows too
    // long to hold (40000).
    for (auto [cols, held] : {std::pair<int64_t, bool>{64, t == DType::BFloat}, {40000, false}}) {
      CAPTURE(cols);
      Plan p = writtenRowPlan(t, 9, cols);
      int softmaxes = 0;
      for (const Kernel &k : p.kernels) {
        std::string src = generateCuda(k, h200()).source;
        if (src.find("m_exp(") == std::string::npos)
          continue;
        ++softmaxes;
        CHECK(countOf(src, "m_exp(") == (held ? 1u : 3u));
        CHECK((src.find(" kv") != std::string::npos) == held);
      }
      CHECK(softmaxes == 1);
    }
  }
}

TEST_CASE("a row program's store pass reads gamma and beta a vector a group where it stores by vectors") {
  for (DType t : {DType::BFloat, DType::SFloat}) {
    CAPTURE(nameOf(t));
    Plan p = writtenRowPlan(t, 9, 64);
    // layer_norm's kernel reads gamma and beta so, rms_norm's gamma: each
    // declared once ("cumo_vec<T, G> al<load>"), behind its own test.
    std::vector<size_t> read;
    for (const Kernel &k : p.kernels) {
      std::string src = generateCuda(k, h200()).source;
      size_t vectors = countOf(src, ", G> al");
      CHECK(countOf(src, "_s[1] == 1 && (") == vectors);
      if (vectors)
        read.push_back(vectors);
    }
    std::sort(read.begin(), read.end());
    CHECK(read == std::vector<size_t>{1, 2});
  }
}

TEST_CASE("matmul compiles a thread-per-output kernel for the integers (and any class)") {
  for (DType t : {DType::Int8, DType::Int32, DType::UInt64, DType::SFloat, DType::HFloat}) {
    CAPTURE(nameOf(t));
    for (const MatmulCase &c : kMatmulCases) {
      Plan p = matmulPlan(t, c.a, c.b, c.transposeA);
      REQUIRE(p.kernels.size() == 1);
      // Nothing to sum (k = 0) is a fill of zeros.
      bool empty = c.a.back() == 0;
      CHECK(p.kernels[0].kind ==
            (empty ? Kernel::Kind::Elementwise : Kernel::Kind::Opaque));
      compilePlan(p);
    }
  }
  // The extents are parameters: a longer k keeps the kernel.
  CHECK(onlyKey(matmulPlan(DType::Int32, {5, 7}, {7, 3})) ==
        onlyKey(matmulPlan(DType::Int32, {6, 9}, {9, 2})));
}

TEST_CASE("small products are the generated matrix-vector kernel in either layout, compiled for every real float class") {
  for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
    for (const SmallProductCase &c : kSmallProducts) {
      CAPTURE(nameOf(t));
      CAPTURE(c.rows);
      CAPTURE(c.transposedW);
      Plan p = smallProductPlan(t, c.rows, c.k, c.n, c.transposedW);
      REQUIRE(p.kernels.size() == 1);
      CHECK(isSmallProduct(p.kernels[0]));
      std::string src = generateCuda(p.kernels[0], h200()).source;
      CHECK(src.find("constexpr int MR") != std::string::npos);
      // The along-k layout reads 16 bytes a lane where the columns allow.
      CHECK((src.find("P.bvec") != std::string::npos) == c.transposedW);
      compilePlan(p);
    }
  // Columns a thread reads as one vector, the last partly past the end.
  for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
    for (const SlicedSmallCase &c : kSlicedSmall) {
      CAPTURE(nameOf(t));
      CAPTURE(c.n);
      Plan p = slicedSmallPlan(t, c.rows, c.k, c.n, c.stored);
      REQUIRE(p.kernels.size() == 1);
      CHECK(cudagen::gemvColumnVector(p.kernels[0]) > 1);
      compilePlan(p);
    }
  CHECK(cudagen::gemvColumnVector(smallProductPlan(DType::SFloat, 1, 77, 45, false).kernels[0]) == 1);
  CHECK(cudagen::gemvColumnVector(smallProductPlan(DType::BFloat, 16, 64, 64, false).kernels[0]) == 2);
  // A batch of small products is one kernel too, in either layout.
  for (DType t : {DType::SFloat, DType::BFloat})
    for (const BatchedSmallCase &c : kBatchedSmall) {
      CAPTURE(nameOf(t));
      CAPTURE(c.a.size());
      for (bool scaled : {false, true}) {
        Plan p = batchedSmallPlan(t, c.a, c.b, c.swappedB, scaled);
        REQUIRE(p.kernels.size() == 1);
        CHECK(isSmallProduct(p.kernels[0]));
        CHECK(p.kernels[0].hasEpilogue() == scaled);
        compilePlan(p);
      }
    }
  // Seventeen rows, a batch of matrices by vectors, or a complex class go
  // to cuBLAS.
  CHECK(!isSmallProduct(smallProductPlan(DType::SFloat, 17, 8, 8, false).kernels[0]));
  CHECK(!isSmallProduct(matmulPlan(DType::SFloat, {2, 3, 4}, {4}).kernels[0]));
  CHECK(!isSmallProduct(matmulPlan(DType::SFloat, {2, 17, 5}, {2, 5, 3}).kernels[0]));
  CHECK(!isSmallProduct(smallProductPlan(DType::SComplex, 1, 8, 8, false).kernels[0]));
  CHECK(!isSmallProduct(smallProductPlan(DType::Int32, 1, 8, 8, false).kernels[0]));
  // A longer k or n keeps the kernel; the other layout does not.
  CHECK(onlyKey(smallProductPlan(DType::SFloat, 1, 77, 45, true)) ==
        onlyKey(smallProductPlan(DType::SFloat, 1, 700, 450, true)));
  CHECK(onlyKey(smallProductPlan(DType::SFloat, 1, 77, 45, true)) !=
        onlyKey(smallProductPlan(DType::SFloat, 1, 77, 45, false)));
}

/// The prologue cases: each small product with one of the row ops, its
/// rows held or not, in turn (every pairing over the cases and classes,
/// without compiling all of them for each).
struct PrologueCase {
  const SmallProductCase &product;
  OpKind op;
  bool held;
};
std::vector<PrologueCase> prologueCases() {
  const OpKind ops[] = {OpKind::LayerNorm, OpKind::RmsNorm, OpKind::Softmax};
  std::vector<PrologueCase> out;
  size_t i = 0;
  for (const SmallProductCase &c : kSmallProducts)
    for (bool held : {false, true})
      out.push_back({c, ops[i++ % 3], held});
  return out;
}

TEST_CASE("a small product computes its operand's layer_norm, rms_norm or softmax in its kernel, compiled for every real float class") {
  for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
    for (const PrologueCase &pc : prologueCases()) {
      const SmallProductCase &c = pc.product;
      CAPTURE(nameOf(t));
      CAPTURE(c.rows);
      CAPTURE(c.k);
      CAPTURE(c.transposedW);
      CAPTURE(opName(pc.op));
      CAPTURE(pc.held);
      Plan p = prologuePlan(t, c, pc.op, pc.held, /*biased=*/c.rows == 8);
      bool fused = expectsPrologue(t, c);
      REQUIRE(p.kernels.size() == (fused ? 1u : 2u));
      const Kernel &k = p.kernels.back();
      CHECK(isSmallProduct(k));
      CHECK(k.hasPrologue() == fused);
      if (fused) {
        CHECK(k.prologue.op == pc.op);
        CHECK(k.prologue.stored == pc.held);
        CHECK(k.operands.size() ==
              (pc.op == OpKind::LayerNorm ? 4u : pc.op == OpKind::RmsNorm ? 3u : 2u));
        std::string src = generateCuda(k, h200()).source;
        CHECK(src.find("P.pro_eps") != std::string::npos);
        CHECK((src.find("P.pro_out") != std::string::npos) == pc.held);
        // The rows live in shared memory the launch asks for, and
        // softmax's exponentials after them (computed by every thread)
        // where both fit kPrologueBytes; else one warp a row computes them.
        int64_t elements = std::max<int64_t>(c.rows, 1) * c.k;
        int64_t rowBytes = elements * int64_t(sizeOf(t));
        int64_t termBytes = elements * int64_t(sizeOf(rowAccumulator(t)));
        bool terms = pc.op == OpKind::Softmax && rowBytes + termBytes + 16 <= kPrologueBytes;
        CHECK(cudagen::gemvPrologueTerms(k) == terms);
        CHECK((src.find("pro_terms") != std::string::npos) == terms);
        CHECK(launchConfig(k, h200()).sharedBytes ==
              uint32_t(terms ? (rowBytes + 15) / 16 * 16 + termBytes : rowBytes));
      }
      compilePlan(p);
    }
  // Decode's attention: a batch of one-row products, one a head, each
  // block taking one head's softmax (short rows, and a context of 1024).
  for (DType t : {DType::SFloat, DType::BFloat})
    for (int64_t k : {int64_t(37), int64_t(1024)})
      for (bool held : {false, true}) {
        CAPTURE(nameOf(t));
        CAPTURE(k);
        Plan p = attentionPlan(t, {1, 12}, 1, k, 64, held);
        REQUIRE(p.kernels.size() == 1);
        CHECK(p.kernels[0].prologue.op == OpKind::Softmax);
        compilePlan(p);
      }
  compilePlan(attentionPlan(DType::SFloat, {2, 3}, 2, 100, 16, true));
  // A row op something else reads too keeps its kernel.
  Handle x = wrap(input(DType::SFloat, {1, 64}, 70));
  Handle g = wrap(input(DType::SFloat, {64}, 71));
  Handle w = wrap(input(DType::SFloat, {64, 32}, 72));
  Handle rows = wrap(rmsNormOp(*x, *g, 1e-5));
  Plan p = planForRoots({matmulOp("matmul", *rows, *w), binary(OpKind::Mul, *rows, *rows)});
  CHECK(p.kernels.size() == 3);
  for (const Kernel &k : p.kernels)
    CHECK(!k.hasPrologue());
}

TEST_CASE("a small product computes its consumers in its kernel, compiled for every real float class") {
  for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
    for (const SmallProductCase &c : kSmallProducts)
      for (bool held : {false, true}) {
        CAPTURE(nameOf(t));
        CAPTURE(c.rows);
        CAPTURE(c.transposedW);
        CAPTURE(held);
        Plan p = epiloguePlan(t, c, held);
        REQUIRE(p.kernels.size() == 1);
        const Kernel &k = p.kernels[0];
        CHECK(isSmallProduct(k));
        REQUIRE(k.hasEpilogue());
        // The answer, and the raw product only when Ruby holds it.
        CHECK(k.stores.size() == (held ? 2u : 1u));
        CHECK((k.stores[0].value == 0) == held);
        std::string src = generateCuda(k, h200()).source;
        CHECK(src.find("cumo_ops::m_gelu_tanh(") != std::string::npos);
        compilePlan(p);
      }
  // Extents stay parameters; holding the product is structure.
  SmallProductCase a{3, 77, 45, false}, b{3, 700, 450, false};
  CHECK(onlyKey(epiloguePlan(DType::SFloat, a, false)) ==
        onlyKey(epiloguePlan(DType::SFloat, b, false)));
  CHECK(onlyKey(epiloguePlan(DType::SFloat, a, false)) !=
        onlyKey(epiloguePlan(DType::SFloat, a, true)));
}

TEST_CASE("a small product writes the cache writes of its consumers' views, compiled for every real float class") {
  for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
    for (bool onDevice : {false, true}) {
      CAPTURE(nameOf(t));
      CAPTURE(onDevice);
      Plan p = cacheWritePlan(t, onDevice, 4, /*transposedW=*/t == DType::HFloat);
      const Kernel &k = p.kernels.back();
      REQUIRE(isSmallProduct(k));
      REQUIRE(k.hasEpilogue());
      CHECK(llvm::none_of(p.kernels, [](const Kernel &kk) {
        return kk.kind == Kernel::Kind::Opaque && kk.opaqueOp == OpKind::IndexWrite;
      }));
      // Both writes, as one merged axis of the 8 x 2 values a part.
      REQUIRE(llvm::count_if(k.stores, [](const Store &s) { return s.through.has_value(); }) == 2);
      for (const Store &s : k.stores)
        if (s.through) {
          CHECK(s.through->extents == Shape{16});
          CHECK(s.through->viewStrides == Strides{1});
          CHECK(s.through->size == 96);
          CHECK(s.through->checked == onDevice);
        }
      std::string src = generateCuda(k, h200()).source;
      CHECK(src.find("(long long)idx - P.st") != std::string::npos);
      CHECK((src.find("atomicMin(P.err + 1, (unsigned int)P.tag)") != std::string::npos) ==
            onDevice);
      compilePlan(p);
    }
  // Every other element: the heads' axis (stride 8) continues the
  // elements' (4 of stride 2) as one axis of stride 2, divided by it.
  Plan strided = cacheWritePlan(DType::SFloat, true, 4, false, /*everyOther=*/true);
  for (const Store &st : strided.kernels.back().stores)
    if (st.through) {
      CHECK(st.through->extents == Shape{8});
      CHECK(st.through->viewStrides == Strides{2});
    }
  CHECK(generateCuda(strided.kernels.back(), h200()).source.find("rest / P.st") !=
        std::string::npos);
  CHECK(generateCuda(cacheWritePlan(DType::SFloat, true).kernels.back(), h200())
            .source.find("rest / P.st") == std::string::npos);
  compilePlan(strided);
  // The position is a parameter: another one is the same kernel.
  auto productKey = [](const Plan &p) { return kernelKey(p.kernels.back(), h200()); };
  CHECK(productKey(cacheWritePlan(DType::SFloat, true, 4)) ==
        productKey(cacheWritePlan(DType::SFloat, true, 2)));
}

TEST_CASE("a block-a-row kernel takes 32-bit indices where they fit, a warp-a-row one 64") {
  // 64 rows of 4096: a block a row; of 768: a warp a row (ops/row_layout.h).
  for (auto [cols, narrow] : {std::pair{int64_t(4096), true}, std::pair{int64_t(768), false}}) {
    CAPTURE(cols);
    Plan p = rowPlan(DType::BFloat, 64, cols);
    REQUIRE(!p.kernels.empty());
    for (const Kernel &k : p.kernels) {
      std::string src = generateCuda(k, h200()).source;
      CHECK(src.find(narrow ? "using IX = int;" : "using IX = long long;") != std::string::npos);
    }
  }
}

TEST_CASE("a sixteen-bit warp-a-row launch is one wave of four blocks an SM, a wider one a block per eight rows; a BFloat softmax reads ahead") {
  // 8192 rows of 1024: 1024 blocks of eight rows, more than the wave.
  for (DType t : {DType::BFloat, DType::SFloat}) {
    CAPTURE(nameOf(t));
    Plan p = rowPlan(t, 8192, 1024);
    REQUIRE(p.kernels.size() == 3);
    for (const Kernel &k : p.kernels) {
      CAPTURE(opName(k.opaqueOp));
      CHECK(launchConfig(k, h200()).grid ==
            (t == DType::BFloat ? uint32_t(h200().smCount) * 4 : 8192u / 8));
      bool ahead = t == DType::BFloat && k.opaqueOp == OpKind::Softmax;
      std::string src = generateCuda(k, h200()).source;
      CHECK((src.find("fetch(row + stride);") != std::string::npos) == ahead);
      CHECK(src.find(ahead ? "__launch_bounds__(256, 2)" : "__launch_bounds__(256, 4)") !=
            std::string::npos);
    }
  }
}

TEST_CASE("a BFloat row a block takes is two groups a lane, held, and read ahead by one wave of blocks") {
  // ops/row_layout.cpp: 4096 BFloat elements are 512 groups of 8, two a
  // lane of 256; SFloat keeps four groups of 4 a lane (and its cache of 8).
  RowLayout bf = rowLayout(4096, DType::BFloat, DType::SFloat);
  CHECK(bf.lanes == 256);
  CHECK(bf.cachedGroups == 2);
  RowLayout sf = rowLayout(4096, DType::SFloat, DType::SFloat);
  CHECK(sf.lanes == 256);
  CHECK(sf.cachedGroups == 8);
  // Past 1024 lanes a BFloat lane holds more than two groups again.
  RowLayout longRow = rowLayout(32768, DType::BFloat, DType::SFloat);
  CHECK(longRow.lanes == 1024);
  CHECK(longRow.cachedGroups == 4);
  // A warp a row is unchanged: four groups a lane.
  CHECK(rowLayout(1024, DType::BFloat, DType::SFloat).cachedGroups == 4);
  for (DType t : {DType::BFloat, DType::SFloat}) {
    CAPTURE(nameOf(t));
    Plan p = rowPlan(t, 4096, 4096);
    REQUIRE(p.kernels.size() == 3);
    for (const Kernel &k : p.kernels) {
      CAPTURE(opName(k.opaqueOp));
      LaunchConfig c = launchConfig(k, h200());
      CHECK(c.block == 256u);
      // BFloat: 1024 threads an SM, four blocks of 256, each looping.
      CHECK(c.grid == (t == DType::BFloat ? uint32_t(h200().smCount) * 4 : 4096u));
      std::string src = generateCuda(k, h200()).source;
      CHECK((src.find("fetch(row + stride);") != std::string::npos) == (t == DType::BFloat));
    }
  }
  // Fewer rows than the wave: a block a row.
  for (const Kernel &k : rowPlan(DType::BFloat, 100, 4096).kernels)
    CHECK(launchConfig(k, h200()).grid == 100u);
}

TEST_CASE("many BFloat layer_norm and rms_norm rows of up to 1024 take a block of 64 lanes, few keep their warp") {
  // ops/row_layout.cpp, rowOpLayout: 1024 BFloat elements are 128 groups,
  // two a lane of 64, from 16384 rows; softmax, fewer rows, shorter rows
  // (768: three groups a lane of a warp) and SFloat keep rowLayout's.
  for (OpKind op : {OpKind::LayerNorm, OpKind::RmsNorm, OpKind::Softmax}) {
    CAPTURE(opName(op));
    RowLayout many = rowOpLayout(op, 32768, 1024, DType::BFloat, DType::SFloat);
    CHECK(many.lanes == (op == OpKind::Softmax ? 32 : 64));
    CHECK(many.cachedGroups == (op == OpKind::Softmax ? 4 : 2));
    CHECK(rowOpLayout(op, 16383, 1024, DType::BFloat, DType::SFloat).lanes == 32);
    CHECK(rowOpLayout(op, 32768, 768, DType::BFloat, DType::SFloat).lanes == 32);
    CHECK(rowOpLayout(op, 32768, 1024, DType::SFloat, DType::SFloat).lanes == 32);
  }
  Plan p = rowPlan(DType::BFloat, 16384, 1024);
  REQUIRE(p.kernels.size() == 3);
  for (const Kernel &k : p.kernels) {
    CAPTURE(opName(k.opaqueOp));
    LaunchConfig c = launchConfig(k, h200());
    bool block = k.opaqueOp != OpKind::Softmax;
    // 64 lanes reading ahead: 1024 threads an SM, sixteen blocks.
    CHECK(c.block == (block ? 64u : 256u));
    CHECK(c.grid == uint32_t(h200().smCount) * (block ? 16 : 4));
    CHECK(generateCuda(k, h200()).source.find("fetch(row + stride);") != std::string::npos);
  }
}

TEST_CASE("rowResultOfLastTerm says which row programs have an elementOfTerm") {
  cudagen::KernelShape types;
  types.rowAccumulator = DType::SFloat;
  for (OpKind op : {OpKind::LayerNorm, OpKind::RmsNorm, OpKind::Softmax}) {
    CAPTURE(opName(op));
    CHECK(cudagen::rowResultOfLastTerm(op) ==
          !cudagen::rowProgram(types, op, "g", "b").elementOfTerm.empty());
  }
}

TEST_CASE("the row operations are one rowwise kernel each, compiled for every float class") {
  for (DType t : {DType::HFloat, DType::BFloat, DType::SFloat, DType::DFloat}) {
    CAPTURE(nameOf(t));
    for (auto [rows, cols] : kRowShapes) {
      CAPTURE(cols);
      Plan p = rowPlan(t, rows, cols);
      CHECK(p.kernels.size() == 3);
      compilePlan(p);
    }
    compilePlan(rowPlan(t, 5, 64, /*transposed=*/true));
  }
  // A row that grows keeps its kernel while its layout holds (a length
  // that is a whole number of groups loads them as vectors: two kernels).
  CHECK(kernelKey(rowPlan(DType::SFloat, 2, 100).kernels[2], h200()) ==
        kernelKey(rowPlan(DType::SFloat, 2, 104).kernels[2], h200()));
  CHECK(kernelKey(rowPlan(DType::SFloat, 2, 101).kernels[2], h200()) ==
        kernelKey(rowPlan(DType::SFloat, 2, 103).kernels[2], h200()));
}

TEST_CASE("the disk cache serves a new process and recompiles damaged entries") {
  char tmpl[] = "/tmp/cumo-codegen-cache-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string root = tmpl;
  std::string dir = root + "/kernels";
  const char *old = std::getenv("CUMO_CACHE_DIR");
  std::string saved = old ? old : "";
  setenv("CUMO_CACHE_DIR", dir.c_str(), 1);
  NvrtcCompiler &nvrtc = NvrtcCompiler::get();

  CHECK(NvrtcCompiler::diskCacheDir() == dir);
  struct stat st;
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  KernelSource src = generateCuda(chainPlan(2, 3, 1.0, OpKind::Mod).kernels[0], h200());
  nvrtc.clearMemoryCacheForTesting();
  Stats before = Stats::get();
  std::string first = nvrtc.compileToCubin(src, 9, 0);
  CHECK(Stats::get().nvrtc_compiles == before.nvrtc_compiles + 1);
  CHECK(Stats::get().disk_cache_hits == before.disk_cache_hits);

  // In process: neither the compiler nor the disk.
  CHECK(nvrtc.compileToCubin(src, 9, 0) == first);
  CHECK(Stats::get().nvrtc_compiles == before.nvrtc_compiles + 1);

  // A fresh process state: the disk answers.
  nvrtc.clearMemoryCacheForTesting();
  CHECK(nvrtc.compileToCubin(src, 9, 0) == first);
  CHECK(Stats::get().nvrtc_compiles == before.nvrtc_compiles + 1);
  CHECK(Stats::get().disk_cache_hits == before.disk_cache_hits + 1);

  // Another architecture is another entry.
  nvrtc.compileToCubin(src, 8, 0);
  CHECK(Stats::get().nvrtc_compiles == before.nvrtc_compiles + 2);

  std::vector<std::string> entries;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::string(e->d_name).size() > 6 &&
          std::string(e->d_name).find(".cubin") != std::string::npos)
        entries.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  REQUIRE(entries.size() == 2);

  // A flipped payload bit fails the checksum; a truncated entry its length.
  using Damage = void (*)(std::string &);
  Damage damages[] = {[](std::string &b) { b[b.size() / 2] ^= 0x10; },
                      [](std::string &b) { b.resize(b.size() - 7); },
                      [](std::string &b) { b.resize(20); }};
  for (size_t round = 0; round < std::size(damages); ++round) {
    CAPTURE(round);
    Damage damage = damages[round];
    for (const std::string &path : entries) {
      std::ifstream in(path, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      in.close();
      damage(bytes);
      std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    }
    nvrtc.clearMemoryCacheForTesting();
    Stats mid = Stats::get();
    CHECK(nvrtc.compileToCubin(src, 9, 0) == first);
    CHECK(Stats::get().nvrtc_compiles == mid.nvrtc_compiles + 1);
    CHECK(Stats::get().disk_cache_hits == mid.disk_cache_hits);
    // The rewritten entry is good again.
    nvrtc.clearMemoryCacheForTesting();
    CHECK(nvrtc.compileToCubin(src, 9, 0) == first);
    CHECK(Stats::get().disk_cache_hits == mid.disk_cache_hits + 1);
  }

  // A directory others can write to is not used, and compiles still work.
  ::chmod(dir.c_str(), 0777);
  CHECK(NvrtcCompiler::diskCacheDir().empty());
  nvrtc.clearMemoryCacheForTesting();
  Stats mid = Stats::get();
  CHECK(nvrtc.compileToCubin(src, 9, 0) == first);
  CHECK(Stats::get().nvrtc_compiles == mid.nvrtc_compiles + 1);
  CHECK(Stats::get().disk_cache_hits == mid.disk_cache_hits);

  if (saved.empty())
    unsetenv("CUMO_CACHE_DIR");
  else
    setenv("CUMO_CACHE_DIR", saved.c_str(), 1);
  for (const std::string &path : entries)
    ::unlink(path.c_str());
  ::rmdir(dir.c_str());
  ::rmdir(root.c_str());
}

TEST_CASE("compileAll compiles side by side what compileToCubin compiles one by one") {
  NvrtcCompiler &nvrtc = NvrtcCompiler::get();
  std::vector<KernelSource> sources;
  for (OpKind op : {OpKind::Add, OpKind::Mul, OpKind::Sub, OpKind::Div})
    sources.push_back(generateCuda(chainPlan(3, 2, 1.0, op).kernels[0], h200()));
  std::vector<std::string> alone;
  for (const KernelSource &src : sources)
    alone.push_back(nvrtc.compileToCubin(src, 9, 0));
  nvrtc.clearMemoryCacheForTesting();
  const char *old = std::getenv("CUMO_CACHE_DIR");
  std::string saved = old ? old : "";
  char tmpl[] = "/tmp/cumo-compile-all-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  setenv("CUMO_CACHE_DIR", tmpl, 1); // an empty disk cache: every one compiles
  setenv("CUMO_COMPILE_THREADS", "3", 1);
  Stats before = Stats::get();
  std::vector<std::string> together = nvrtc.compileAll(sources, 9, 0);
  CHECK(together == alone);
  CHECK(Stats::get().nvrtc_compiles == before.nvrtc_compiles + sources.size());

  // The first failure in order is the one raised, with its log; the good
  // sources around it were compiled all the same.
  KernelSource bad1{"cumo_broken_one", "extern \"C\" __global__ void cumo_broken_one() { int x = ; }\n"};
  KernelSource bad2{"cumo_broken_two", "extern \"C\" __global__ void cumo_broken_two() { y; }\n"};
  std::vector<KernelSource> mixed = {sources[0], bad1, sources[1], bad2};
  try {
    nvrtc.compileAll(mixed, 9, 0);
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.kind() == ErrorKind::Nvrtc);
    CHECK(e.message().rfind("[nvrtc] cumo_broken_one: ", 0) == 0);
  }
  unsetenv("CUMO_COMPILE_THREADS");
  if (saved.empty())
    unsetenv("CUMO_CACHE_DIR");
  else
    setenv("CUMO_CACHE_DIR", saved.c_str(), 1);
  std::string cleanup = std::string("rm -rf ") + tmpl;
  CHECK(std::system(cleanup.c_str()) == 0);
}

TEST_CASE("nvrtc: options keep every rounding; errors carry the log") {
  llvm::ArrayRef<const char *> opts = nvrtcOptions();
  auto has = [&](std::string_view o) {
    return llvm::any_of(opts, [&](const char *x) { return o == x; });
  };
  CHECK((has("--fmad=false") && has("--std=c++17") && has("-default-device")));
  CHECK_FALSE(has("--use_fast_math"));
  CHECK(portableOpsHeader().find("namespace cumo_ops") != std::string_view::npos);
  KernelSource bad{"cumo_broken", "extern \"C\" __global__ void cumo_broken() { int x = ; }\n"};
  try {
    NvrtcCompiler::get().compileToCubin(bad, 9, 0);
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.kind() == ErrorKind::Nvrtc);
    CHECK(e.message().rfind("[nvrtc] cumo_broken: ", 0) == 0);
    CHECK(e.message().find("expected an expression") != std::string::npos);
  }
}

// ---------------------------------------------------------------------------
// On a GPU: run the generated kernels and compare with the CPU executor.

namespace {

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

void cudaOk(cudaError_t e, const char *what) {
  INFO(what);
  REQUIRE_MESSAGE(e == cudaSuccess, cudaGetErrorString(e));
}

/// Whether two floats agree within `tol` relative to `scale` (or to 1),
/// NaN matching NaN of any payload.
bool closeTo(double g, double c, double tol, double scale) {
  if (std::isnan(g) || std::isnan(c))
    return std::isnan(g) && std::isnan(c);
  return g == c || (tol > 0 && std::fabs(g - c) <= tol * std::max({1.0, std::fabs(c), scale}));
}

/// Elementwise equality: exact for integers; for floats (the half types
/// widened) within `tol` relative (0: bit-exact); for complex values each
/// part within `tol` of the modulus.
template <class T>
void compareElements(const T *gpu, const T *cpu, int64_t n, double tol,
                     const std::string &buffer) {
  for (int64_t i = 0, bad = 0; i < n && bad < 5; ++i) {
    bool same = std::memcmp(&gpu[i], &cpu[i], sizeof(T)) == 0;
    double g = 0, c = 0, gi = 0, ci = 0;
    if constexpr (kIsComplexC<T>) {
      g = gpu[i].re, c = cpu[i].re, gi = gpu[i].im, ci = cpu[i].im;
      double scale = std::hypot(c, ci);
      same |= closeTo(g, c, tol, scale) && closeTo(gi, ci, tol, scale);
    } else if constexpr (std::is_floating_point_v<T> || kIsNarrowFloatC<T>) {
      g = double(gpu[i]), c = double(cpu[i]);
      same |= closeTo(g, c, tol, 0);
    } else {
      g = double(gpu[i]), c = double(cpu[i]);
    }
    if (!same && ++bad)
      FAIL_CHECK("buffer " << buffer << " element " << i << ": gpu " << g << "+"
                           << gi << "i, cpu " << c << "+" << ci << "i");
  }
}

/// The tolerance of a comparison of math functions in class `t`: a few
/// ulps of single or double precision, or a unit of a half type's last
/// place (its value is rounded from single-precision results).
double mathTolerance(DType t) {
  switch (t) {
  case DType::HFloat: return 1e-3;
  case DType::BFloat: return 8e-3;
  case DType::SComplex: return 1e-5;
  case DType::DComplex: return 1e-12;
  default: return isFloat(t) ? 1e-6 : 0;
  }
}

/// The tolerance of one op's results, from its class's. Single-precision
/// complex asin and acos go through log(iz + sqrt(1 - z^2)), which cancels
/// near their branch cuts: the GPU's logf and the host's differ by an ulp,
/// and that reached 1.3e-5 of |w| at a few of 2145 points (H200).
double opTolerance(OpKind op, DType t, double tol) {
  bool inverse = op == OpKind::Asin || op == OpKind::Acos || op == OpKind::Asinh ||
                 op == OpKind::Acosh || op == OpKind::Atanh;
  return t == DType::SComplex && inverse ? std::max(tol, 1e-4) : tol;
}

/// Runs `plan` on the CPU executor and, kernel by kernel, on the GPU (each
/// kernel twice: a full reduction must leave its counter at zero), and
/// compares every output buffer.
/// Whether the comparisons run the kernels on the CPU emulator
/// (tests/cuda_emulator.h; CUMO_EMULATE_KERNELS, the cpu suite's
/// emulated_codegen), whose "device memory" is host memory, rather than
/// on the GPU.
bool emulating() {
  static const bool on = [] {
    const char *v = std::getenv("CUMO_EMULATE_KERNELS");
    return v && *v && cumo::test::emulatorAvailable();
  }();
  return on;
}

void *deviceAlloc(size_t bytes) {
  if (emulating())
    return std::calloc(1, std::max<size_t>(bytes, 1));
  void *p = nullptr;
  cudaOk(cudaMalloc(&p, std::max<size_t>(bytes, 1)), "cudaMalloc");
  return p;
}
void deviceFree(void *p) {
  if (emulating())
    std::free(p);
  else
    cudaFree(p);
}
void deviceCopy(void *dst, const void *src, size_t bytes, bool up) {
  if (emulating())
    std::memcpy(dst, src, bytes);
  else
    cudaOk(cudaMemcpy(dst, src, bytes, up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
           up ? "upload" : "download");
}
void deviceFill(void *p, int byte, size_t bytes) {
  if (emulating())
    std::memset(p, byte, bytes);
  else
    cudaOk(cudaMemset(p, byte, bytes), "cudaMemset");
}

/// The SMs the emulator's device claims while a WideEmulatedDevice lives
/// (0: the CPU executor's own count).
int emulatedSms = 0;

/// For the small products' comparisons: on the emulator, a device of
/// `sms` SMs, so that their launches narrow the column tiles and split k
/// as on a GPU (the CPU executor's model has as many SMs as the host has
/// cores, two in CI, and a product fills two at once). Their reference
/// sums do not depend on the model.
struct WideEmulatedDevice {
  explicit WideEmulatedDevice(int sms) { emulatedSms = sms; }
  ~WideEmulatedDevice() { emulatedSms = 0; }
};

/// The device the comparisons plan for: the GPU's, or for the emulator
/// the CPU executor's own model (so both fold in the same order).
DeviceModel comparisonModel() {
  if (emulating()) {
    DeviceModel model = hostDevice()->model();
    if (emulatedSms)
      model.smCount = emulatedSms;
    return model;
  }
  cudaDeviceProp prop;
  cudaOk(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  DeviceModel model;
  model.smCount = prop.multiProcessorCount;
  model.ccMajor = prop.major;
  model.ccMinor = prop.minor;
  return model;
}

/// Launches kernel `src` (twice: a full reduction must leave its counter at
/// zero) on the parameter block `block`: from `cubin` on a GPU.
void launchTwice(const KernelSource &src, const std::string &cubin,
                 const LaunchConfig &launch, const llvm::SmallVectorImpl<char> &block) {
  if (emulating()) {
    for (int rep = 0; rep < 2; ++rep) {
      try {
        cumo::test::emulateKernel(src, launch, block.data());
      } catch (const std::exception &e) {
        FAIL(std::string(e.what()));
      }
    }
    return;
  }
  cudaLibrary_t lib;
  cudaKernel_t kernel;
  cudaOk(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
         "cudaLibraryLoadData");
  cudaOk(cudaLibraryGetKernel(&kernel, lib, src.entry.c_str()), "cudaLibraryGetKernel");
  void *params = deviceAlloc(block.size());
  deviceCopy(params, block.data(), block.size(), true);
  void *args[] = {&params};
  for (int rep = 0; rep < 2; ++rep)
    cudaOk(cudaLaunchKernel(reinterpret_cast<const void *>(kernel), dim3(launch.grid),
                            dim3(launch.block), args, launch.sharedBytes, nullptr),
           src.entry.c_str());
  cudaOk(cudaDeviceSynchronize(), src.entry.c_str());
  deviceFree(params);
  cudaLibraryUnload(lib);
}

/// Runs `plan` kernel by kernel on the GPU or the emulator over buffers
/// that start as `start` holds them (bytes per plan buffer), and answers
/// every buffer's bytes after.
std::vector<std::vector<unsigned char>>
runOnDevice(const Plan &plan, const std::vector<std::vector<unsigned char>> &start) {
  DeviceModel model = comparisonModel();
  size_t nb = plan.buffers.size();
  std::vector<void *> gpu(nb, nullptr);
  for (size_t i = 0; i < nb; ++i) {
    gpu[i] = deviceAlloc(start[i].size());
    deviceCopy(gpu[i], start[i].data(), start[i].size(), true);
  }
  for (const Kernel &k : plan.kernels) {
    KernelSource src = generateCuda(k, model);
    // On a GPU every kernel compiles, an empty launch's too.
    std::string cubin = emulating() ? "" : compileOrFail(k, model.ccMajor, model.ccMinor, model);
    LaunchConfig launch = launchConfig(k, model);
    if (launch.grid == 0)
      continue;
    void *scratch = nullptr;
    size_t sb = scratchBytes(k, launch);
    if (sb) {
      scratch = deviceAlloc(sb);
      deviceFill(scratch, 0, sb);
    }
    llvm::SmallVector<char, 512> block;
    void *errorWord = deviceAlloc(2 * sizeof(unsigned));
    deviceFill(errorWord, 0, sizeof(unsigned));
    deviceFill(static_cast<unsigned *>(errorWord) + 1, 0xff, sizeof(unsigned));
    packParams(k, launch, gpu, scratch, errorWord, block);
    launchTwice(src, cubin, launch, block);
    if (sb) {
      uint32_t counter = 1;
      deviceCopy(&counter, scratch, 4, false);
      CHECK(counter == 0);
    }
    deviceFree(scratch);
    deviceFree(errorWord);
  }
  std::vector<std::vector<unsigned char>> after(nb);
  for (size_t i = 0; i < nb; ++i) {
    after[i].resize(start[i].size());
    deviceCopy(after[i].data(), gpu[i], start[i].size(), false);
    deviceFree(gpu[i]);
  }
  return after;
}

/// Each buffer of `plan` as it starts: an input's bytes, and the same
/// garbage for every other.
std::vector<std::vector<unsigned char>> startingBytes(const Plan &plan) {
  std::vector<std::vector<unsigned char>> start;
  for (const PlanBuffer &b : plan.buffers) {
    if (b.role == PlanBuffer::Role::Input) {
      const auto *at = static_cast<const unsigned char *>(b.node->buffer()->data());
      start.emplace_back(at, at + b.node->buffer()->bytes());
    } else {
      start.emplace_back(size_t(b.elements) * sizeOf(b.dtype), (unsigned char)0x5a);
    }
  }
  return start;
}

/// The bytes of node `n`'s output buffer after `plan` ran on the device
/// (the GPU or the emulator) from startingBytes.
std::vector<unsigned char> outputBytes(const Plan &plan, const Node *n) {
  std::vector<std::vector<unsigned char>> after = runOnDevice(plan, startingBytes(plan));
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].role == PlanBuffer::Role::Output && plan.buffers[i].node.get() == n)
      return after[i];
  FAIL("the node is no output of the plan");
  return {};
}

/// Runs `plan` on the CPU executor and, kernel by kernel, on the GPU or
/// the emulator, and compares every output buffer.
void compareWithCpu(const Plan &plan, double tol) {
  // Outputs start as the same garbage on both sides.
  std::vector<std::vector<unsigned char>> start = startingBytes(plan);
  size_t nb = plan.buffers.size();
  std::vector<Ref<Buffer>> cpu(nb);
  for (size_t i = 0; i < nb; ++i) {
    const PlanBuffer &b = plan.buffers[i];
    if (b.role == PlanBuffer::Role::Input) {
      cpu[i] = b.node->buffer();
      continue;
    }
    cpu[i] = hostDevice()->pool().allocate(std::max<size_t>(start[i].size(), 1));
    std::memcpy(cpu[i]->data(), start[i].data(), start[i].size());
  }
  cpuExecutor()->run(plan, cpu);
  std::vector<std::vector<unsigned char>> back = runOnDevice(plan, start);
  for (size_t i = 0; i < nb; ++i) {
    const PlanBuffer &b = plan.buffers[i];
    if (b.role != PlanBuffer::Role::Output)
      continue;
    dispatchDType(b.dtype, [&]<DType D, class T>() {
      // Named by the op that computes it, for the reader of a failure.
      std::string name = std::to_string(i);
      if (b.node)
        name += " (" + std::string(opName(b.node->op())) + ")";
      compareElements(reinterpret_cast<const T *>(back[i].data()),
                      static_cast<const T *>(cpu[i]->data()), b.elements,
                      b.node ? opTolerance(b.node->op(), b.dtype, tol) : tol, name);
    });
  }
}

} // namespace

TEST_SUITE("gpu") {
TEST_CASE("generated kernels compute what the CPU executor computes") {
  // The kernels run on the CPU emulator where asked (the cpu suite's
  // emulated_codegen), else on a GPU; without one the gpu suite's run of
  // these comparisons is skipped (exit 77, as meson reads it), and
  // elsewhere they are only compiled.
  if (!emulating() && !gpuPresent()) {
    if (const char *v = std::getenv("CUMO_SKIP_WITHOUT_GPU"); v && *v)
      std::exit(77);
    MESSAGE("no GPU: only compiled, not run");
    return;
  }
  SUBCASE("elementwise") {
    compareWithCpu(chainPlan(37, 129, 2.5, OpKind::Add), 0);
    compareWithCpu(chainPlan(1000, 1000, -0.75, OpKind::Div), 0);
  }
  SUBCASE("the vector loop, whole chunks and the tail, aligned and not") {
    for (int t = 0; t < kNumDTypes; ++t) {
      CAPTURE(nameOf(DType(t)));
      for (bool offset : {false, true}) {
        compareWithCpu(linearPlan(DType(t), 37, 129, offset), mathTolerance(DType(t)));
        compareWithCpu(linearPlan(DType(t), 300, 1001, offset), mathTolerance(DType(t)));
      }
    }
  }
  SUBCASE("float to integer casts at the edges") {
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat}) {
      CAPTURE(nameOf(t));
      compareWithCpu(floatToIntegerPlan(t), 0);
    }
  }
  SUBCASE("dtypes") {
    for (int t = 0; t < kNumDTypes; ++t) {
      CAPTURE(nameOf(DType(t)));
      // exp, log and pow come from different math libraries.
      compareWithCpu(dtypePlan(DType(t), 33, 65), mathTolerance(DType(t)));
      // The math functions come from different libraries too.
      compareWithCpu(mathPlan(DType(t), 33, 65), mathTolerance(DType(t)));
    }
  }
  SUBCASE("index arrays and sorts") {
    for (int k = 0; k < kNumDTypes; ++k) {
      DType t = DType(k);
      CAPTURE(nameOf(t));
      compareWithCpu(fancyPlan(t), 0);
      compareWithCpu(deviceFancyPlan(t), 0);
      compareWithCpu(fancyPlan(t, false), 0);
      compareWithCpu(deviceFancyPlan(t, 0, false), 0);
      compareWithCpu(siblingWritesPlan(t, 1), 0);
      compareWithCpu(siblingWritesPlan(t, 2), 0);
      if (t != DType::Bit && !isComplex(t))
        compareWithCpu(sortPlan(t), 0);
    }
  }
  SUBCASE("row operations") {
    for (DType t : {DType::HFloat, DType::BFloat, DType::SFloat, DType::DFloat}) {
      CAPTURE(nameOf(t));
      for (auto [rows, cols] : kRowShapes)
        compareWithCpu(rowPlan(t, rows, cols), mathTolerance(t));
      compareWithCpu(rowPlan(t, 5, 64, true), mathTolerance(t));
    }
    // More rows than a wave of warps: a warp takes several in turn (and a
    // BFloat softmax reads each next one ahead).
    compareWithCpu(rowPlan(DType::BFloat, 5000, 64), mathTolerance(DType::BFloat));
    // More rows than a wave of blocks (on the emulator, a model of two
    // SMs: 16 blocks of 128 lanes): a BFloat block takes several in turn,
    // each next one read ahead.
    {
      WideEmulatedDevice narrow(2);
      compareWithCpu(rowPlan(DType::BFloat, 40, 1032), mathTolerance(DType::BFloat));
    }
    // A block of 64 lanes (two warps' fold): HFloat rows of 1500, and on a
    // GPU (too many for the emulator), BFloat layer_norm and rms_norm rows
    // of 1000 from 16384 rows (ops/row_layout.cpp, rowOpLayout).
    compareWithCpu(rowPlan(DType::HFloat, 3, 1500), mathTolerance(DType::HFloat));
    if (!emulating())
      compareWithCpu(rowPlan(DType::BFloat, 16384, 1000), mathTolerance(DType::BFloat));
  }
  SUBCASE("written-out row operations") {
    for (DType t : {DType::HFloat, DType::BFloat, DType::SFloat, DType::DFloat}) {
      CAPTURE(nameOf(t));
      for (auto [rows, cols] : kRowShapes)
        compareWithCpu(writtenRowPlan(t, rows, cols), mathTolerance(t));
      compareWithCpu(writtenRowPlan(t, 5, 64, true), mathTolerance(t));
      // gamma and beta off a group's boundary, and strided: read an
      // element at a time where the rows are stored by vectors.
      compareWithCpu(writtenRowPlan(t, 9, 64, false, 1, 1), mathTolerance(t));
      compareWithCpu(writtenRowPlan(t, 9, 64, false, 2, 0), mathTolerance(t));
      // Full reductions of one row: a block folds it.
      for (int64_t cols : {40, 1000, 5000})
        compareWithCpu(oneRowPlan(t, cols), mathTolerance(t));
    }
    // More rows than a wave of blocks of sixteen-bit rows held, each next
    // one read ahead (two SMs: 24 blocks of 64 lanes).
    WideEmulatedDevice narrow(2);
    for (DType t : {DType::HFloat, DType::BFloat}) {
      CAPTURE(nameOf(t));
      compareWithCpu(writtenRowPlan(t, 100, 1000), mathTolerance(t));
    }
  }
  SUBCASE("small products (the generated matrix-vector kernel)") {
    WideEmulatedDevice wide(16);
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
      for (const SmallProductCase &c : kSmallProducts) {
        CAPTURE(nameOf(t));
        CAPTURE(c.rows);
        CAPTURE(c.k);
        CAPTURE(c.n);
        CAPTURE(c.transposedW);
        compareWithCpu(smallProductPlan(t, c.rows, c.k, c.n, c.transposedW, 3),
                       smallProductTolerance(t, c.k));
      }
    // Along k, rows too long to widen into shared memory (2 x 3100 floats
    // past kAlongKStagedBytes), read from global memory, four columns at
    // once. Its sums of 3100 terms of tens cancel to units in places:
    // their rounding is relative to the terms, not to the result.
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat}) {
      CAPTURE(nameOf(t));
      compareWithCpu(smallProductPlan(t, 2, 3100, 600, true, 3),
                     10 * smallProductTolerance(t, 3100));
    }
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
      for (const SlicedSmallCase &c : kSlicedSmall) {
        CAPTURE(nameOf(t));
        CAPTURE(c.n);
        compareWithCpu(slicedSmallPlan(t, c.rows, c.k, c.n, c.stored),
                       smallProductTolerance(t, c.k));
      }
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
      for (const BatchedSmallCase &c : kBatchedSmall) {
        CAPTURE(nameOf(t));
        CAPTURE(c.a.size());
        CAPTURE(c.swappedB);
        for (bool scaled : {false, true})
          compareWithCpu(batchedSmallPlan(t, c.a, c.b, c.swappedB, scaled),
                         smallProductTolerance(t, c.a.back()));
      }
  }
  SUBCASE("small products that read the matrix before they wait, bit for bit as after") {
    WideEmulatedDevice wide(16);
    // gemvEarlyLoads folds the same rows of k in the same order: the same
    // bits as the kernel that loads everything after its wait, in both
    // layouts.
    auto late = [](Plan p) {
      for (Kernel &k : p.kernels) {
        k.operandsUnwritten = 0;
        k.loadsUnwritten = 0;
      }
      return p;
    };
    auto reads = [&](const Plan &p, const char *what) {
      const Kernel &k = p.kernels.back();
      return generateCuda(k, comparisonModel()).source.find(what) != std::string::npos;
    };
    auto early = [&](const Plan &p) { return reads(p, "early["); };
    for (DType t : {DType::SFloat, DType::HFloat, DType::BFloat}) {
      CAPTURE(nameOf(t));
      // (k, n) weights: a thread per 16-byte vector of columns, the last
      // tile partial; one with a layer_norm prologue, as a decode's qkv.
      Plan plain = smallProductPlan(t, 1, 300, 520, false, 3);
      Plan normed = prologuePlan(t, {1, 256, 264, false}, OpKind::LayerNorm, false, false);
      // A weight read along k (stored (n, k), used transposed, as an LM
      // head): a warp's first column.
      Plan along = smallProductPlan(t, 1, 264, 300, true, 3);
      Plan alongNormed = prologuePlan(t, {1, 256, 70, true}, OpKind::LayerNorm, false, false);
      // One row and no batch: the epilogue's bias and residual (inputs of
      // the plan) read before the wait too, and the prologue's gamma and
      // beta (or gamma) for a thread's first elements, the rest after.
      Plan consumers = epiloguePlan(t, {1, 300, 520, false}, false);
      Plan normedBiased = prologuePlan(t, {1, 256, 264, false}, OpKind::LayerNorm, false, true);
      Plan storedRows = prologuePlan(t, {1, 1000, 96, false}, OpKind::LayerNorm, true, true);
      Plan rmsBiased = prologuePlan(t, {1, 256, 264, false}, OpKind::RmsNorm, false, true);
      for (const Plan *p :
           {&plain, &normed, &along, &alongNormed, &consumers, &normedBiased, &storedRows, &rmsBiased}) {
        REQUIRE(early(*p));
        REQUIRE(!early(late(*p)));
        REQUIRE(!reads(late(*p), "early_ld"));
        REQUIRE(!reads(late(*p), "early_g["));
        std::vector<std::vector<unsigned char>> start = startingBytes(*p);
        CHECK(runOnDevice(*p, start) == runOnDevice(late(*p), start));
      }
      CHECK(reads(consumers, "early_ld"));
      CHECK(!reads(normed, "early_ld"));
      for (const Plan *p : {&normedBiased, &storedRows, &rmsBiased}) {
        CHECK(reads(*p, "early_ld"));
        CHECK(reads(*p, "early_g["));
      }
      CHECK(reads(normed, "early_b["));
      CHECK(!reads(rmsBiased, "early_b["));
      CHECK(!reads(alongNormed, "early_g["));
    }
    // Eight rows: no epilogue load before the wait (a thread computes
    // several rows' elements), the matrix's still.
    Plan batch8 = epiloguePlan(DType::SFloat, {8, 768, 2304, false}, false);
    CHECK(early(batch8));
    CHECK(!reads(batch8, "early_ld"));
  }
  SUBCASE("a small product with its row op in its prologue gives the two kernels' bits") {
    WideEmulatedDevice wide(16);
    // The same rows from the row op's own kernel (kept there because
    // something else reads them) and then the plain product: the fused
    // kernel's rows are the row kernel's bit for bit, and its tiling the
    // plain product's, so the fold over k is in the same order.
    struct Case {
      SmallProductCase product;
      OpKind op;
    };
    const Case cases[] = {{{1, 768, 768, false}, OpKind::LayerNorm},
                          {{1, 300, 520, false}, OpKind::LayerNorm},
                          {{3, 200, 70, false}, OpKind::RmsNorm},
                          {{1, 256, 300, true}, OpKind::LayerNorm},
                          {{2, 100, 33, false}, OpKind::Softmax},
                          // Rows and exponentials past kPrologueBytes in
                          // single precision: one warp a row computes them.
                          {{8, 768, 40, false}, OpKind::Softmax}};
    for (DType t : {DType::SFloat, DType::HFloat, DType::BFloat})
      for (const Case &tc : cases) {
        const SmallProductCase &c = tc.product;
        CAPTURE(nameOf(t));
        CAPTURE(c.rows);
        CAPTURE(c.k);
        CAPTURE(c.n);
        CAPTURE(opName(tc.op));
        Handle x = wrap(input(t, {c.rows, c.k}, 80));
        Handle gamma = wrap(input(t, {c.k}, 81));
        Handle beta = wrap(input(t, {c.k}, 82));
        Handle w = wrap(input(t, c.transposedW ? Shape{c.n, c.k} : Shape{c.k, c.n}, 83));
        ArrayHandle wt(w->storageRef(), transposeLayout(w->layout(), {}, "transpose"));
        Handle rows = wrap(tc.op == OpKind::LayerNorm ? layerNormOp(*x, *gamma, *beta, 1e-5)
                           : tc.op == OpKind::RmsNorm ? rmsNormOp(*x, *gamma, 1e-3)
                                                      : softmaxOp(*x));
        Handle product = wrap(matmulOp("matmul", *rows, c.transposedW ? wt : *w));
        NodeRef productNode = product->value();
        Plan fused = planForRoots({productNode});
        Plan apart = planForRoots({productNode, binary(OpKind::Mul, *rows, *rows)});
        REQUIRE(fused.kernels.back().hasPrologue());
        for (const Kernel &k : apart.kernels)
          REQUIRE(!k.hasPrologue());
        CHECK(outputBytes(fused, productNode.get()) == outputBytes(apart, productNode.get()));
      }
    // Attention as a decode step writes it: each head's softmax times its
    // values, a batch.
    for (DType t : {DType::SFloat, DType::BFloat}) {
      CAPTURE(nameOf(t));
      Handle scores = wrap(input(t, {1, 3, 1, 100}, 84));
      Handle values = wrap(input(t, {1, 3, 100, 16}, 85));
      Handle probs = wrap(softmaxOp(*scores));
      NodeRef out = matmulOp("matmul", *probs, *values);
      Plan fused = planForRoots({out});
      Plan apart = planForRoots({out, binary(OpKind::Mul, *probs, *probs)});
      REQUIRE(fused.kernels.back().hasPrologue());
      REQUIRE(cudagen::gemvPrologueTerms(fused.kernels.back()));
      CHECK(outputBytes(fused, out.get()) == outputBytes(apart, out.get()));
    }
  }
  SUBCASE("small products with an epilogue") {
    WideEmulatedDevice wide(16);
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
      for (const SmallProductCase &c : kSmallProducts)
        for (bool held : {false, true}) {
          CAPTURE(nameOf(t));
          CAPTURE(c.rows);
          CAPTURE(c.transposedW);
          CAPTURE(held);
          // The product sums in another order than the reference's; its
          // consumers then agree up to that rounding and gelu_tanh's tanh.
          compareWithCpu(epiloguePlan(t, c, held), smallProductTolerance(t, c.k));
        }
  }
  SUBCASE("small products with cache writes in their epilogue") {
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
      for (bool onDevice : {false, true})
        for (int32_t at : {4, 0, -1, 6})
          for (bool transposedW : {false, true}) {
            CAPTURE(nameOf(t));
            CAPTURE(onDevice);
            CAPTURE(at);
            CAPTURE(transposedW);
            // A host list is checked at the call: only device positions
            // reach the kernel out of range (6; -1 counts from the end).
            if (!onDevice && at == 6)
              continue;
            compareWithCpu(cacheWritePlan(t, onDevice, at, transposedW),
                           smallProductTolerance(t, 40));
            if (at == 4)
              compareWithCpu(cacheWritePlan(t, onDevice, at, transposedW, /*everyOther=*/true),
                             smallProductTolerance(t, 40));
          }
  }
  SUBCASE("small products with a prologue") {
    WideEmulatedDevice wide(16);
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
      for (const PrologueCase &pc : prologueCases()) {
        const SmallProductCase &c = pc.product;
        CAPTURE(nameOf(t));
        CAPTURE(c.rows);
        CAPTURE(c.k);
        CAPTURE(c.transposedW);
        CAPTURE(opName(pc.op));
        CAPTURE(pc.held);
        // The rows are the row op's, bit for bit (the held ones are
        // compared too; softmax's up to the libraries' exp); the product
        // sums in another order than the reference's.
        compareWithCpu(prologuePlan(t, c, pc.op, pc.held, c.rows == 8),
                       prologueTolerance(t, c.k));
      }
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat})
      for (bool held : {false, true}) {
        CAPTURE(nameOf(t));
        CAPTURE(held);
        compareWithCpu(attentionPlan(t, {1, 12}, 1, 1024, 64, held),
                       prologueTolerance(t, 1024));
        compareWithCpu(attentionPlan(t, {2, 3}, 2, 100, 16, held),
                       prologueTolerance(t, 100));
      }
  }
  SUBCASE("matmul (the generated kernel)") {
    for (DType t : {DType::Int8, DType::Int32, DType::UInt64, DType::Int64})
      for (const MatmulCase &c : kMatmulCases) {
        CAPTURE(nameOf(t));
        compareWithCpu(matmulPlan(t, c.a, c.b, c.transposeA, 3), 0);
      }
    // Floats sum in the reference's order too: equal; but a small product
    // splits k over lanes (rounding apart).
    for (const MatmulCase &c : kMatmulCases) {
      Plan p = matmulPlan(DType::DFloat, c.a, c.b, c.transposeA);
      compareWithCpu(p, isSmallProduct(p.kernels[0]) ? 1e-12 : 0);
    }
  }
  SUBCASE("quantize_symmetric") {
    for (DType t : {DType::HFloat, DType::BFloat, DType::SFloat, DType::DFloat})
      for (auto [rows, cols] : kRowShapes) {
        CAPTURE(nameOf(t));
        CAPTURE(cols);
        // The scale is a max (exact) over 127, xq a rounded quotient: equal.
        compareWithCpu(quantizePlan(t, {rows, cols}), 0);
      }
    // More rows than a wave of blocks (two SMs: 24 blocks of 64 lanes),
    // each next row read ahead where its rows start on a group (1000) and
    // read when its turn comes where they do not (1001).
    WideEmulatedDevice narrow(2);
    for (DType t : {DType::HFloat, DType::BFloat})
      for (int64_t cols : {1000, 1001}) {
        CAPTURE(nameOf(t));
        CAPTURE(cols);
        compareWithCpu(quantizePlan(t, {100, cols}), 0);
      }
  }
  SUBCASE("full reductions") {
    compareWithCpu(dotPlan(1000, DType::SFloat), 1e-5);
    compareWithCpu(dotPlan(3 << 20, DType::DFloat), 1e-12);
    compareWithCpu(fullReductionsPlan(1, DType::SFloat), 0);
    compareWithCpu(fullReductionsPlan(100003, DType::DFloat), 1e-12);
    for (DType t : {DType::Int8, DType::UInt16, DType::Int32, DType::UInt64,
                    DType::Bit})
      compareWithCpu(fullReductionsPlan(77777, t), 1e-12);
  }
  SUBCASE("full reductions folded by their readers") {
    for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::DComplex,
                    DType::Int32}) {
      CAPTURE(nameOf(t));
      for (int64_t n : {int64_t(1), int64_t(1000), int64_t(300001)}) {
        CAPTURE(n);
        Plan plan = foldedReductionsPlan(n, t);
        size_t folds = 0;
        for (const Kernel &k : plan.kernels)
          folds += k.folds.size();
        CHECK(folds == 4);
        // The folds are the last block's, in its order: the sums are the
        // CPU executor's bit for bit; y and w are products of them.
        compareWithCpu(plan, 0);
      }
    }
  }
  SUBCASE("axis reductions") {
    for (OpKind op : {OpKind::Sum, OpKind::Max, OpKind::Min, OpKind::Mean,
                      OpKind::Prod}) {
      CAPTURE(opName(op));
      // Folds in another order round floats differently; max and min
      // do not round. A float product of thousands of factors over- or
      // underflows depending on the order, so products are integers here.
      double tol = op == OpKind::Max || op == OpKind::Min ? 0 : 1e-12;
      for (DType t : {DType::DFloat, DType::Int16, DType::UInt8}) {
        if (op == OpKind::Prod && isFloat(t))
          continue;
        compareWithCpu(axisPlan(t, {37, 29}, op, 0, true), tol);
        compareWithCpu(axisPlan(t, {37, 29}, op, 1, false), tol);
        compareWithCpu(axisPlan(t, {5, 300}, op, 1, false), tol);
        compareWithCpu(axisPlan(t, {3, 20000}, op, 1, false), tol);
        compareWithCpu(axisPlan(t, {100, 5000}, op, 0, false), tol);
        compareWithCpu(axisPlan(t, {6, 7, 50}, op, 1, true), tol);
        compareWithCpu(axisPlan(t, {6, 70, 50}, op, 2, false), tol);
        compareWithCpu(axisPlan(t, {40, 3, 20}, op, 0, false), tol);
      }
    }
    compareWithCpu(axisPlan(DType::Bit, {4, 300}, OpKind::Sum, 1, false), 0);
    compareWithCpu(axisPlan(DType::Bit, {40, 3}, OpKind::Max, 0, false), 0);
    compareWithCpu(axisPlan(DType::SFloat, {3, 20000}, OpKind::Sum, 1, false), 1e-5);
  }
  SUBCASE("generators") {
    compareWithCpu(seqPlan(DType::DFloat, {1000}, Scalar::ofFloat(1.5), Scalar::ofFloat(0.5)), 0);
    compareWithCpu(seqPlan(DType::SFloat, {1000}, Scalar::ofInt(-3), Scalar::ofFloat(0.1)), 0);
    compareWithCpu(seqPlan(DType::Int32, {30, 40}, Scalar::ofInt(2), Scalar::ofInt(3)), 0);
    compareWithCpu(seqPlan(DType::Int16, {30, 40}, Scalar::ofInt(2), Scalar::ofFloat(-0.7)), 0);
    compareWithCpu(seqPlan(DType::UInt8, {3000}, Scalar::ofInt(0), Scalar::ofInt(1)), 0);
    compareWithCpu(randPlan(DType::SFloat, {10000}, Scalar::ofInt(0), Scalar::ofInt(1)), 0);
    compareWithCpu(randPlan(DType::DFloat, {100, 100}, Scalar::ofFloat(-1), Scalar::ofFloat(1)), 0);
    compareWithCpu(randPlan(DType::Int64, {10000}, Scalar::ofInt(-5), Scalar::ofInt(100)), 0);
    compareWithCpu(randPlan(DType::UInt8, {10000}, Scalar::ofInt(0), Scalar::ofInt(200)), 0);
  }
  SUBCASE("stencil") {
    compareWithCpu(stencilPlan(8, 4.0), 0);
    compareWithCpu(stencilPlan(257, 4.0), 0);
  }
  SUBCASE("new dtypes") {
    for (DType t : {DType::HFloat, DType::BFloat, DType::SComplex, DType::DComplex}) {
      CAPTURE(nameOf(t));
      // Sums round once from single precision: a different order of the
      // sum moves the result by at most a unit of the type's last place.
      double tol = t == DType::HFloat ? 1e-3 : t == DType::BFloat ? 8e-3 : 1e-5;
      compareWithCpu(fullReductionsPlan(100003, t), tol);
      compareWithCpu(dotPlan(5000, t), tol);
      for (OpKind op : {OpKind::Sum, OpKind::Mean, OpKind::Max}) {
        if (op == OpKind::Max && isComplex(t))
          continue;
        compareWithCpu(axisPlan(t, {37, 29}, op, 0, true), tol);
        compareWithCpu(axisPlan(t, {5, 300}, op, 1, false), tol);
        compareWithCpu(axisPlan(t, {3, 20000}, op, 1, false), tol);
      }
      compareWithCpu(seqPlan(t, {1000}, Scalar::ofFloat(2040.5), Scalar::ofFloat(0.75)), 0);
      compareWithCpu(randPlan(t, {10000}, Scalar::ofInt(-2), Scalar::ofInt(5)), 0);
      compareWithCpu(stencilPlan(65, 4.0, t), 0);
    }
  }
  SUBCASE("boxes") {
    compareWithCpu(boxesPlan(12, 1.5), 0);
    compareWithCpu(boxesPlan(1001, -2.0), 0);
  }
  SUBCASE("scans") {
    for (DType t : {DType::Int32, DType::SFloat, DType::DFloat, DType::HFloat,
                    DType::DComplex}) {
      compareWithCpu(scanPlan(t, {7, 9}, OpKind::CumSum, std::nullopt), 0);
      compareWithCpu(scanPlan(t, {5, 6, 7}, OpKind::CumSum, int64_t(2), true), 0);
      compareWithCpu(scanPlan(t, {5, 6, 7}, OpKind::CumProd, int64_t(0)), 0);
    }
  }
  SUBCASE("scatter") {
    compareWithCpu(scatterPlan(3, 4, 5), 0);
    compareWithCpu(scatterPlan(50, 70, 3000), 0);
  }
}
} // TEST_SUITE("gpu")
