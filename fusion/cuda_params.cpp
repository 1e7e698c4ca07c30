// The parameter block of a generated kernel. describeParams is the one
// list of its fields: generation lays it out into a struct (and checks the
// offsets with static_asserts in the source), packing writes the values at
// the same offsets, so the two cannot disagree.
#include "fusion/cuda_kernel_shape.h"

#include "core/error.h"
#include "fusion/cuda_row_codegen.h"

#include <cmath>
#include <cstring>

namespace cumo::cudagen {

static_assert(sizeof(void *) == 8, "kernel parameter blocks hold 64-bit pointers");

namespace {

using ValueFn = llvm::function_ref<void(size_t, void *)>;

/// Typed helpers over ParamSink::field.
class Fields {
public:
  Fields(ParamSink &sink, const PackInputs *in) : sink_(sink), in_(in) {}
  const PackInputs *in() const { return in_; }

  /// An array of `count` int64s (none when empty: C has no empty arrays).
  void i64s(const std::string &name, size_t count,
            llvm::function_ref<int64_t(size_t)> f) {
    if (count == 0)
      return;
    sink_.field(name, "long long", 8, count, /*array=*/true,
                [&](size_t i, void *dst) {
                  int64_t v = f(i);
                  std::memcpy(dst, &v, 8);
                });
  }
  void i64(const std::string &name, llvm::function_ref<int64_t()> f) {
    sink_.field(name, "long long", 8, 1, /*array=*/false,
                [&](size_t, void *dst) {
                  int64_t v = f();
                  std::memcpy(dst, &v, 8);
                });
  }
  void u64(const std::string &name, llvm::function_ref<uint64_t()> f) {
    sink_.field(name, "unsigned long long", 8, 1, false, [&](size_t, void *dst) {
      uint64_t v = f();
      std::memcpy(dst, &v, 8);
    });
  }
  void f64(const std::string &name, llvm::function_ref<double()> f) {
    sink_.field(name, "double", 8, 1, false, [&](size_t, void *dst) {
      double v = f();
      std::memcpy(dst, &v, 8);
    });
  }
  void ptr(const std::string &name, const std::string &ctype,
           llvm::function_ref<void *()> f) {
    sink_.field(name, ctype, 8, 1, false, [&](size_t, void *dst) {
      void *v = f();
      std::memcpy(dst, &v, 8);
    });
  }
  void raw(const std::string &name, llvm::StringRef ctype, size_t size,
           ValueFn f) {
    sink_.field(name, ctype, size, 1, false, f);
  }

  /// Offset and strides of an index expression.
  void index(const std::string &prefix, const IndexShape &shape,
             const IndexExpr *e) {
    i64(prefix + "_off", [&] { return e->offset; });
    if (shape.cls == AddressClass::General)
      i64s(prefix + "_s", size_t(shape.rank),
           [&](size_t d) { return e->strides[d]; });
  }

  /// Records that the field being written changes from flush to flush.
  void note(ParamPatch::Kind kind, uint32_t index, uint8_t which = 0) const {
    if (in_ && in_->patches)
      in_->patches->push_back(
          {kind, which, uint32_t(sink_.currentOffset()), index});
  }

  void *buffer(uint32_t id) const {
    note(ParamPatch::Kind::Buffer, id);
    if (id >= in_->buffers.size())
      throw Error(ErrorKind::Internal,
                  "[cuda codegen] a kernel reads plan buffer " +
                      std::to_string(id) + " that was not given");
    return in_->buffers[id];
  }

private:
  ParamSink &sink_;
  const PackInputs *in_;
};

/// A scalar parameter converted as the CPU executor converts it.
void writeParam(DType t, const Scalar &v, void *dst) {
  dispatchDType(t, [&]<DType D, class T>() {
    T x;
    if constexpr (D == DType::Bit)
      x = T(v.asDouble() != 0);
    else
      x = v.template as<T>();
    std::memcpy(dst, &x, sizeof(T));
  });
}

std::string indexed(const char *prefix, size_t i, const char *suffix = "") {
  return prefix + std::to_string(i) + suffix;
}

/// Whether every index the kernel computes fits 32-bit arithmetic, with
/// room for the grid stride: the domain, and for each address and box row
/// |offset| + sum |factor| * (extent - 1), which bounds every partial sum
/// over coordinates in range (box coordinates out of range are bounded by
/// the same row sums before the predicate rejects them).
bool vectorsAligned(const Kernel &k, int64_t width) {
  auto aligned = [&](const IndexExpr &e) {
    bool scalar = llvm::all_of(e.strides, [](int64_t s) { return s == 0; });
    return scalar || e.offset % width == 0;
  };
  return llvm::all_of(k.loads, [&](const Load &l) { return aligned(l.index); }) &&
         llvm::all_of(k.stores, [&](const Store &s) { return aligned(s.index); });
}

bool fitsNarrow(const Kernel &k) {
  constexpr double kLimit = double(int64_t(1) << 30);
  auto extent = [&](int32_t basis, size_t d) {
    int64_t e = basis == 0 ? k.domain[d] : k.bases[basis].count[d];
    return double(std::max<int64_t>(e - 1, 0));
  };
  auto fits = [&](const IndexExpr &e) {
    double bound = std::fabs(double(e.offset));
    for (size_t d = 0; d < e.strides.size(); ++d)
      bound += std::fabs(double(e.strides[d])) * extent(e.basis, d);
    return bound <= kLimit;
  };
  if (double(k.domainSize()) > kLimit)
    return false;
  for (int64_t e : k.domain)
    if (double(e) > kLimit)
      return false;
  for (size_t b = 1; b < k.bases.size(); ++b) {
    const Basis &basis = k.bases[b];
    const AffineMap &m = basis.fromParent;
    for (int64_t r = 0; r < m.inRank; ++r) {
      double bound = std::fabs(double(m.offset[r])) +
                     std::fabs(double(basis.start[r]));
      for (int64_t d = 0; d < m.outRank; ++d)
        bound += std::fabs(double(m.at(r, d))) * extent(basis.parent, size_t(d));
      if (bound > kLimit || std::fabs(double(basis.step[r])) > kLimit)
        return false;
    }
    for (int64_t c : basis.count)
      if (double(c) > kLimit)
        return false;
  }
  return llvm::all_of(k.loads, [&](const Load &l) { return fits(l.index); }) &&
         llvm::all_of(k.stores, [&](const Store &s) { return fits(s.index); }) &&
         llvm::all_of(k.generators,
                      [&](const Generator &g) { return fits(g.flatIndex); });
}

/// The fields of a kernel's elements (analyzeElements): the slice boxes,
/// loads, generators and stores. `k` is null in layout mode.
void describeElements(const KernelShape &s, const Kernel *k, Fields &f) {
  for (size_t b = 1; b < s.bases.size(); ++b) {
    const BasisShape &bs = s.bases[b];
    auto basis = [&]() -> const Basis & { return k->bases[b]; };
    size_t nnz = size_t(llvm::count(bs.nonzero, uint8_t(1)));
    f.i64s(indexed("b", b, "_m"), nnz, [&](size_t i) {
      // The i-th nonzero entry, row-major.
      const AffineMap &m = basis().fromParent;
      for (size_t e = 0, seen = 0; e < bs.nonzero.size(); ++e)
        if (bs.nonzero[e] && seen++ == i)
          return m.matrix[e];
      return int64_t(0);
    });
    f.i64s(indexed("b", b, "_off"), size_t(bs.inRank),
          [&](size_t r) { return basis().fromParent.offset[r]; });
    f.i64s(indexed("b", b, "_start"), size_t(bs.inRank),
          [&](size_t r) { return basis().start[r]; });
    f.i64s(indexed("b", b, "_step"), size_t(bs.inRank),
          [&](size_t r) { return basis().step[r]; });
    f.i64s(indexed("b", b, "_cnt"), size_t(bs.rank),
          [&](size_t d) { return basis().count[d]; });
  }

  for (size_t i = 0; i < s.loads.size(); ++i) {
    const LoadShape &l = s.loads[i];
    const Load *ld = k ? &k->loads[i] : nullptr;
    f.ptr(indexed("ld", i), "const " + cType(l.dtype).str() + "*",
          [&] { return f.buffer(ld->buffer); });
    f.index(indexed("ld", i), l.index, ld ? &ld->index : nullptr);
  }

  // A gather read: its array, where element 0 lies, and its size; a
  // strided one its extents and strides too.
  for (size_t i = 0; i < s.gathers.size(); ++i) {
    const GatherShape &g = s.gathers[i];
    auto read = [&, i]() -> const GatherRead & { return k->gathers[i]; };
    f.ptr(indexed("ga", i), "const " + cType(g.dtype).str() + "*",
          [&] { return f.buffer(read().buffer); });
    f.i64(indexed("ga", i, "_off"), [&] { return read().offset; });
    f.i64(indexed("ga", i, "_n"), [&] { return read().size(); });
    if (!g.dense) {
      f.i64s(indexed("ga", i, "_ext"), size_t(g.rank), [&](size_t d) { return read().extents[d]; });
      f.i64s(indexed("ga", i, "_s"), size_t(g.rank), [&](size_t d) { return read().strides[d]; });
    }
  }

  for (size_t i = 0; i < s.generators.size(); ++i) {
    const GenShape &g = s.generators[i];
    const Generator *gen = k ? &k->generators[i] : nullptr;
    switch (g.mode) {
    case GenMode::SeqInt:
      f.i64(indexed("g", i, "_a"), [&] {
        f.note(ParamPatch::Kind::GenInt, uint32_t(i), 0);
        return gen->a.i;
      });
      f.i64(indexed("g", i, "_b"), [&] {
        f.note(ParamPatch::Kind::GenInt, uint32_t(i), 1);
        return gen->b.i;
      });
      break;
    case GenMode::RandInt:
      f.i64(indexed("g", i, "_a"),
            [&] {
              f.note(ParamPatch::Kind::GenIntConv, uint32_t(i), 0);
              return int64_t(gen->a.as<long long>());
            });
      f.i64(indexed("g", i, "_b"),
            [&] {
              f.note(ParamPatch::Kind::GenIntConv, uint32_t(i), 1);
              return int64_t(gen->b.as<long long>());
            });
      break;
    default:
      f.f64(indexed("g", i, "_a"), [&] {
        f.note(ParamPatch::Kind::GenDouble, uint32_t(i), 0);
        return gen->a.asDouble();
      });
      f.f64(indexed("g", i, "_b"), [&] {
        f.note(ParamPatch::Kind::GenDouble, uint32_t(i), 1);
        return gen->b.asDouble();
      });
      if (g.mode == GenMode::SeqComplex || g.mode == GenMode::RandComplex) {
        f.f64(indexed("g", i, "_ai"), [&] {
          f.note(ParamPatch::Kind::GenDouble, uint32_t(i), 2);
          return gen->a.im;
        });
        f.f64(indexed("g", i, "_bi"), [&] {
          f.note(ParamPatch::Kind::GenDouble, uint32_t(i), 3);
          return gen->b.im;
        });
      }
      break;
    }
    if (g.mode == GenMode::RandFloat || g.mode == GenMode::RandDouble ||
        g.mode == GenMode::RandInt || g.mode == GenMode::RandComplex) {
      f.u64(indexed("g", i, "_seed"), [&] {
        f.note(ParamPatch::Kind::GenSeed, uint32_t(i));
        return gen->seed;
      });
      f.u64(indexed("g", i, "_ctr"), [&] {
        f.note(ParamPatch::Kind::GenCounter, uint32_t(i));
        return gen->counter;
      });
    }
    f.index(indexed("g", i), g.index, gen ? &gen->flatIndex : nullptr);
  }

  for (size_t i = 0; i < s.stores.size(); ++i) {
    const StoreShape &st = s.stores[i];
    const Store *store = k ? &k->stores[i] : nullptr;
    f.ptr(indexed("st", i), cType(st.dtype).str() + "*",
          [&] { return f.buffer(store->buffer); });
    f.index(indexed("st", i), st.index, store ? &store->index : nullptr);
    if (st.throughAxes < 0)
      continue;
    // A store through a table (TableWrite): the table, the view of the
    // values in the domain, and the written array's size.
    auto t = [&]() -> const TableWrite & { return *store->through; };
    size_t axes = size_t(st.throughAxes);
    f.ptr(indexed("st", i, "_t"), "const long long*", [&] { return f.buffer(t().table); });
    f.i64(indexed("st", i, "_toff"), [&] { return t().tableOffset; });
    f.i64(indexed("st", i, "_voff"), [&] { return t().offset; });
    f.i64(indexed("st", i, "_n"), [&] { return t().size; });
    f.i64s(indexed("st", i, "_ve"), axes, [&](size_t a) { return t().extents[a]; });
    f.i64s(indexed("st", i, "_vs"), axes, [&](size_t a) { return t().viewStrides[a]; });
    f.i64s(indexed("st", i, "_ts"), axes, [&](size_t a) { return t().tableStrides[a]; });
  }
}

void describeErrorWord(const PackInputs *in, Fields &f) {
  f.ptr("err", "unsigned int*", [&] {
    f.note(ParamPatch::Kind::ErrorWord, 0);
    return in->errorWord;
  });
}

/// The error word and the kernel's tag of a kernel whose elements check
/// gather positions (a checked index op has both already), or the word
/// alone where they only divide integers.
void describeElementChecks(const KernelShape &s, const PackInputs *in, const Kernel *k,
                           Fields &f) {
  if (s.checksIndex || (!s.checksDivision && !s.checksGather))
    return;
  describeErrorWord(in, f);
  if (s.checksGather)
    f.i64("tag", [&] {
      f.note(ParamPatch::Kind::CheckTag, 0);
      return int64_t(k->checkTag);
    });
}

/// Scalars last: the narrow ones then pack without padding between the
/// 8-byte fields. Converted here as the CPU executor converts them.
void describeScalars(const KernelShape &s, const Kernel *k, Fields &f) {
  for (size_t i = 0; i < s.params.size(); ++i) {
    DType t = s.params[i];
    f.raw(indexed("p", i), cType(t), sizeOf(t), [&](size_t, void *dst) {
      f.note(ParamPatch::Kind::Param, uint32_t(i));
      writeParam(t, k->params[i].value, dst);
    });
  }
}

} // namespace

void describeParams(const KernelShape &s, const PackInputs *in,
                    ParamSink &sink) {
  Fields f(sink, in);
  // Only call through `k` inside value callbacks: in layout mode `in` is
  // null and the callbacks never run.
  const Kernel *k = in ? &in->kernel : nullptr;

  if (s.kind == Kernel::Kind::Opaque) {
    // Operands where they lie, the contiguous result, the extents.
    for (size_t i = 0; i < s.operandDtypes.size(); ++i) {
      auto load = [&]() -> const Load & { return k->operands[i]; };
      f.ptr(indexed("in", i), "const " + cType(s.operandDtypes[i]).str() + "*",
            [&] { return f.buffer(load().buffer); });
      f.i64(indexed("in", i, "_off"), [&] { return load().index.offset; });
      f.i64s(indexed("in", i, "_s"), size_t(s.operandRanks[i]),
             [&](size_t d) { return load().index.strides[d]; });
      f.i64s(indexed("in", i, "_ext"), size_t(s.operandRanks[i]),
             [&](size_t d) { return k->operandShapes[i][d]; });
    }
    // An epilogue's stores write what the kernel stores instead.
    if (!s.hasEpilogue()) {
      f.ptr("out", cType(s.outDtype).str() + "*",
            [&] { return f.buffer(k->stores[0].buffer); });
      f.i64("out_off", [&] { return k->stores[0].index.offset; });
    }
    // Sibling index writes' further results.
    for (int32_t w = 1; w < s.writes; ++w) {
      f.ptr(indexed("out", size_t(w)), cType(s.outDtype).str() + "*",
            [&, w] { return f.buffer(k->stores[size_t(w)].buffer); });
      f.i64(indexed("out", size_t(w), "_off"), [&, w] { return k->stores[size_t(w)].index.offset; });
    }
    f.i64("n", [&] { return k->domainSize(); });
    f.i64("axis", [&] { return k->opaqueInts.empty() ? int64_t(-1) : k->opaqueInts[0]; });
    // median: whether a NaN in a line makes it NaN (the node's scalar).
    f.i64("propagate", [&] { return int64_t(k->opaqueScalar.asDouble() != 0); });
    if (isRowOp(s.opaqueOp))
      f.f64("eps", [&] { return k->opaqueScalar.asDouble(); });
    if (s.checksIndex) {
      f.ptr("err", "unsigned int*", [&] {
        f.note(ParamPatch::Kind::ErrorWord, 0);
        return in->errorWord;
      });
      f.i64("tag", [&] {
        f.note(ParamPatch::Kind::CheckTag, 0);
        return int64_t(k->checkTag);
      });
    }
    if (s.opaqueOp == OpKind::MatMul) {
      // gemm's alpha, in the accumulator's kind (complex products go to
      // cuBLAS, which takes alpha itself).
      if (isInteger(s.outDtype))
        f.i64("alpha", [&] { return k->opaqueScalar.as<int64_t>(); });
      else
        f.f64("alpha", [&] { return k->opaqueScalar.asDouble(); });
    }
    if (s.gemvRows && !s.gemvAlongK) {
      f.ptr("scratch", "unsigned char*", [&] {
        f.note(ParamPatch::Kind::Scratch, 0);
        return in->scratch;
      });
      // Fixed by the extents, as the grid is: a repeat of the plan packs
      // the same value.
      f.i64("lanes", [&] { return int64_t(in->launch.tileLanes); });
    }
    if (s.gemvRows && s.gemvAlongK) {
      f.i64("bvec", [&] { return int64_t(gemvColumnsAligned(*k)); });
      f.i64("lanes", [&] { return int64_t(in->launch.tileLanes); });
      f.i64("cols", [&] { return int64_t(in->launch.tileColumns); });
    }
    // A prologue's row op (fusion/prologue.h): its eps, and its store.
    if (s.prologueOp != OpKind::Copy)
      f.f64("pro_eps", [&] { return k->prologue.eps.asDouble(); });
    if (s.prologueStored) {
      f.ptr("pro_out", cType(s.outDtype).str() + "*",
            [&] { return f.buffer(k->prologue.out.buffer); });
      f.i64("pro_out_off", [&] { return k->prologue.out.index.offset; });
    }
    if (s.hasEpilogue()) {
      describeElements(s, k, f);
      // (An epilogue's checked index write has the error word above.)
      describeElementChecks(s, in, k, f);
      describeScalars(s, k, f);
    }
    return;
  }

  f.i64("n", [&] { return k->domainSize(); });
  // Whether this launch may run the 32-bit instantiation of the loop.
  f.i64("narrow", [&] { return int64_t(fitsNarrow(*k)); });
  if (s.vector)
    // Whether every Linear access starts on a vector boundary (buffers
    // themselves are 256-byte aligned): then the launch moves whole vectors.
    f.i64("vec", [&] { return int64_t(vectorsAligned(*k, s.vector)); });
  f.i64s("ext", size_t(s.rank), [&](size_t d) { return k->domain[d]; });
  if (s.kind == Kernel::Kind::AxisReduce) {
    f.i64("outs", [&] { return k->reduceOutputs(); });
    f.i64("len", [&] { return k->reduceLength(); });
  }

  describeElements(s, k, f);

  for (size_t i = 0; i < s.reduces.size(); ++i) {
    const ReduceShape &r = s.reduces[i];
    f.ptr(indexed("rd", i), cType(r.dtype).str() + "*",
          [&] { return f.buffer(k->reduces[i].buffer); });
    if (r.op == OpKind::Mean)
      f.i64(indexed("rd", i, "_count"), [&] { return k->reduces[i].count; });
    if (r.deferred) {
      f.ptr(indexed("pd", i), cType(r.accumulator).str() + "*",
            [&] { return f.buffer(uint32_t(k->reduces[i].partials)); });
      f.i64(indexed("pd", i, "_n"), [&] { return k->reduces[i].slots; });
    }
  }

  for (size_t i = 0; i < s.folds.size(); ++i) {
    const FoldShape &fs = s.folds[i];
    f.ptr(indexed("fd", i), "const " + cType(fs.accumulator).str() + "*",
          [&] { return f.buffer(k->folds[i].partials); });
    f.i64(indexed("fd", i, "_n"), [&] { return k->folds[i].slots; });
    if (fs.op == OpKind::Mean)
      f.i64(indexed("fd", i, "_count"), [&] { return k->folds[i].count; });
    f.ptr(indexed("fd", i, "_out"), cType(fs.dtype).str() + "*",
          [&] { return f.buffer(k->folds[i].buffer); });
  }

  describeElementChecks(s, in, k, f);

  if (s.strategy == ReduceStrategy::Grid) {
    f.ptr("counter", "unsigned int*", [&] {
      f.note(ParamPatch::Kind::Scratch, 0);
      return in->scratch;
    });
    f.ptr("partials", "unsigned char*", [&] {
      f.note(ParamPatch::Kind::Scratch, uint32_t(kScratchCounterBytes));
      return static_cast<void *>(static_cast<char *>(in->scratch) +
                                 kScratchCounterBytes);
    });
  }

  describeScalars(s, k, f);
}

size_t placeField(size_t &cursor, size_t &maxAlign, size_t size,
                  size_t count) {
  size_t offset = (cursor + size - 1) / size * size;
  cursor = offset + size * count;
  maxAlign = std::max(maxAlign, size);
  return offset;
}

namespace {

class LayoutSink final : public ParamSink {
public:
  void field(llvm::StringRef name, llvm::StringRef ctype, size_t size,
             size_t count, bool array, ValueFn) override {
    PlacedField p;
    p.array = array;
    p.name = name.str();
    p.ctype = ctype.str();
    p.size = size;
    p.count = count;
    p.offset = placeField(cursor_, maxAlign_, size, count);
    layout.fields.push_back(std::move(p));
  }
  void finish() {
    layout.bytes = (cursor_ + maxAlign_ - 1) / maxAlign_ * maxAlign_;
  }
  ParamLayout layout;

private:
  size_t cursor_ = 0, maxAlign_ = 1;
};

class PackSink final : public ParamSink {
public:
  PackSink(llvm::SmallVectorImpl<char> &out, size_t base)
      : out_(out), base_(base) {}
  void field(llvm::StringRef, llvm::StringRef, size_t size, size_t count,
             bool, ValueFn value) override {
    size_t offset = placeField(cursor_, maxAlign_, size, count);
    out_.resize(base_ + cursor_, 0);
    for (size_t i = 0; i < count; ++i) {
      current_ = offset + i * size;
      value(i, out_.data() + base_ + current_);
    }
  }
  size_t currentOffset() const override { return current_; }
  /// Pads the block to its alignment, as sizeof pads the struct.
  void finish() {
    cursor_ = (cursor_ + maxAlign_ - 1) / maxAlign_ * maxAlign_;
    out_.resize(base_ + cursor_, 0);
  }

private:
  llvm::SmallVectorImpl<char> &out_;
  size_t base_;
  size_t cursor_ = 0, maxAlign_ = 1;
  size_t current_ = 0;
};

} // namespace

void applyPatches(const KernelShape &s, const Kernel &k,
                  llvm::ArrayRef<ParamPatch> patches,
                  llvm::ArrayRef<void *> buffers, void *scratch, void *errorWord,
                  char *block) {
  using K = ParamPatch::Kind;
  auto put = [&](uint32_t offset, const auto &v) {
    std::memcpy(block + offset, &v, sizeof(v));
  };
  for (const ParamPatch &p : patches) {
    switch (p.kind) {
    case K::Buffer:
      put(p.offset, buffers[p.index]);
      break;
    case K::Scratch:
      put(p.offset, static_cast<void *>(static_cast<char *>(scratch) + p.index));
      break;
    case K::ErrorWord:
      put(p.offset, errorWord);
      break;
    case K::CheckTag:
      put(p.offset, int64_t(k.checkTag));
      break;
    case K::Param:
      writeParam(s.params[p.index], k.params[p.index].value, block + p.offset);
      break;
    case K::GenInt: {
      const Generator &g = k.generators[p.index];
      put(p.offset, int64_t((p.which ? g.b : g.a).i));
      break;
    }
    case K::GenIntConv: {
      const Generator &g = k.generators[p.index];
      put(p.offset, int64_t((p.which ? g.b : g.a).as<long long>()));
      break;
    }
    case K::GenDouble: {
      const Generator &g = k.generators[p.index];
      const Scalar &v = (p.which & 1) ? g.b : g.a;
      put(p.offset, (p.which & 2) ? v.im : v.asDouble());
      break;
    }
    case K::GenSeed:
      put(p.offset, uint64_t(k.generators[p.index].seed));
      break;
    case K::GenCounter:
      put(p.offset, uint64_t(k.generators[p.index].counter));
      break;
    }
  }
}

ParamLayout layoutParams(const KernelShape &s) {
  LayoutSink sink;
  describeParams(s, nullptr, sink);
  sink.finish();
  return std::move(sink.layout);
}

} // namespace cumo::cudagen

namespace cumo {

void packParams(const Kernel &k, const LaunchConfig &launch,
                llvm::ArrayRef<void *> buffers, void *scratch, void *errorWord,
                llvm::SmallVectorImpl<char> &out) {
  // The model only picks among axis-reduction strategies, which share one
  // parameter layout.
  cudagen::packWithShape(cudagen::analyzeKernel(k, DeviceModel()), k, launch,
                         buffers, scratch, errorWord, out);
}

void cudagen::packWithShape(const KernelShape &s, const Kernel &k,
                            const LaunchConfig &launch,
                            llvm::ArrayRef<void *> buffers, void *scratch,
                            void *errorWord, llvm::SmallVectorImpl<char> &out,
                            std::vector<ParamPatch> *patches) {
  size_t base = (out.size() + kParamAlignment - 1) / kParamAlignment *
                kParamAlignment;
  out.resize(base, 0);
  PackInputs in{k, launch, buffers, scratch, errorWord, patches};
  PackSink sink(out, base);
  describeParams(s, &in, sink);
  sink.finish();
}

} // namespace cumo
