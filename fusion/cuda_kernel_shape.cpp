// The structure of a plan kernel, as code generation sees it: every fact a
// source may depend on, and nothing a flush changes from one iteration to
// the next (see cuda_kernel_shape.h).
#include "fusion/cuda_kernel_shape.h"

#include "core/error.h"
#include "ops/element_fn.h"

#include <algorithm>
#include <cmath>

namespace cumo::cudagen {

namespace {

/// Classifies how `e` addresses its buffer. Linear needs basis 0 and the
/// domain's row-major strides; axes of extent one are skipped, since their
/// coordinate is always 0 and their stride never matters.
IndexShape classify(const IndexExpr &e, const Kernel &k) {
  IndexShape s;
  s.basis = e.basis;
  s.rank = int32_t(e.strides.size());
  if (llvm::all_of(e.strides, [](int64_t st) { return st == 0; })) {
    s.cls = AddressClass::Scalar;
    return s;
  }
  s.cls = AddressClass::General;
  if (e.basis != 0 || e.strides.size() != k.domain.size())
    return s;
  Strides contiguous = contiguousStrides(k.domain);
  for (size_t d = 0; d < k.domain.size(); ++d)
    if (k.domain[d] != 1 && e.strides[d] != contiguous[d])
      return s;
  s.cls = AddressClass::Linear;
  return s;
}

GenMode genMode(const Generator &g) {
  bool isSeq = g.op == OpKind::Seq;
  if (isComplex(g.dtype))
    return isSeq ? GenMode::SeqComplex : GenMode::RandComplex;
  if (g.dtype == DType::SFloat || isNarrowFloat(g.dtype))
    return isSeq ? GenMode::SeqFloat : GenMode::RandFloat;
  if (g.dtype == DType::DFloat)
    return isSeq ? GenMode::SeqFloat : GenMode::RandDouble;
  if (!isSeq)
    return GenMode::RandInt;
  return g.a.isFloat() || g.b.isFloat() ? GenMode::SeqIntViaDouble
                                        : GenMode::SeqInt;
}

} // namespace

ReduceStrategy axisStrategy(const Kernel &k) {
  int64_t length = k.reduceLength();
  int64_t outputs = k.reduceOutputs();
  bool innermostKept =
      !k.domain.empty() &&
      !llvm::is_contained(k.reduceAxes, int32_t(k.domain.size() - 1));
  if (length <= kThreadReduceMaxLength)
    return ReduceStrategy::Thread;
  if (innermostKept && outputs >= kThreadReduceMinColumns)
    return ReduceStrategy::Thread;
  if (length <= kWarpReduceMaxLength)
    return ReduceStrategy::Warp;
  return ReduceStrategy::Block;
}

namespace {

[[noreturn]] void unsupported(const std::string &what) {
  throw Error(ErrorKind::Internal, "[cuda codegen] " + what);
}

void checkValue(const Kernel &k, const Value &v, uint32_t id) {
  for (uint32_t a : v.args)
    if (a >= id)
      unsupported("value " + std::to_string(id) + " reads a later value");
  if (v.basis < 0 || size_t(v.basis) >= k.bases.size())
    unsupported("value basis out of range");
  switch (v.kind) {
  case Value::Kind::Load:
    if (v.ref >= k.loads.size())
      unsupported("load out of range");
    return;
  case Value::Kind::Param:
    if (v.ref >= k.params.size())
      unsupported("param out of range");
    return;
  case Value::Kind::Generator:
    if (v.ref >= k.generators.size())
      unsupported("generator out of range");
    return;
  case Value::Kind::Gather:
    if (v.ref >= k.gathers.size() || v.args.size() != 1 ||
        k.values[v.args[0]].dtype != DType::Int64 || v.dtype != k.gathers[v.ref].dtype)
      unsupported("malformed gather read");
    return;
  case Value::Kind::Select:
    if (v.ref == 0 || v.ref >= k.bases.size() || v.args.size() != 2)
      unsupported("malformed select");
    return;
  case Value::Kind::RowReduce:
    if (k.kind != Kernel::Kind::Rowwise || v.basis != 0 || v.args.size() != 1 ||
        opCategory(v.op) != OpCategory::Reduce)
      unsupported("a row fold outside a Rowwise kernel, or malformed");
    return;
  case Value::Kind::Result:
    if (k.kind != Kernel::Kind::Opaque || id != 0 || v.basis != 0 || !v.args.empty() ||
        v.dtype != k.opaqueDtype)
      unsupported("an op's result outside its epilogue, or malformed");
    return;
  case Value::Kind::Op: {
    OpCategory c = opCategory(v.op);
    if ((c != OpCategory::Unary && c != OpCategory::Binary &&
         c != OpCategory::Compare) ||
        v.args.size() != size_t(opArity(v.op)))
      unsupported(std::string("op ") + std::string(opName(v.op)) +
                  " in a kernel");
    // The element function must have an overload for the operands' type
    // (a comparison's operands, not its Bit answer; a complex operand of
    // abs, real, imag and arg, not their real answer).
    DType operand = c == OpCategory::Binary ? v.dtype : k.values[v.args[0]].dtype;
    if (auto d = elementDomain(v.op); d && !inDomain(*d, operand))
      unsupported(std::string(opName(v.op)) + " of " +
                  std::string(nameOf(operand)));
    return;
  }
  }
}

} // namespace

KernelShape analyzeKernel(const Kernel &k, const DeviceModel &model) {
  if (k.kind == Kernel::Kind::Opaque)
    return analyzeOpaque(k);
  KernelShape s;
  s.kind = k.kind;
  analyzeElements(k, s);
  switch (k.kind) {
  case Kernel::Kind::Elementwise:
    s.strategy = k.reduces.empty() ? ReduceStrategy::None : ReduceStrategy::Grid;
    s.vector = vectorWidth(s);
    break;
  case Kernel::Kind::AxisReduce:
    s.strategy = axisStrategy(k);
    break;
  case Kernel::Kind::Scatter:
    if (!k.reduces.empty())
      unsupported("a scatter with reductions");
    s.strategy = ReduceStrategy::None;
    break;
  case Kernel::Kind::Rowwise: {
    if (!k.reduces.empty() || s.rank < 2)
      unsupported("a Rowwise kernel with grid reductions or without rows");
    RowProgram p = rowProgram(k);
    for (size_t i = 0; i < s.loads.size(); ++i)
      s.loads[i].row = p.reads[i];
    s.rowWarp = p.layout.warpPerRow();
    s.rowLanes = int32_t(p.layout.lanes);
    s.rowGroup = int32_t(p.layout.group);
    s.rowCachedGroups = int32_t(p.layout.cachedGroups);
    s.rowReadsAhead = rowProgramReadsAhead(k, p);
    s.strategy = ReduceStrategy::None;
    break;
  }
  case Kernel::Kind::Opaque:
    break; // analyzeOpaque took it
  }
  (void)model; // no strategy depends on the device yet
  return s;
}

bool rowProgramReadsAhead(const Kernel &k, const RowProgram &p) {
  if (p.layout.warpPerRow() || p.layout.cachedGroups == 0)
    return false;
  bool any = false;
  for (size_t i = 0; i < k.loads.size(); ++i) {
    if (p.reads[i] != RowRead::Cached)
      continue;
    const Load &l = k.loads[i];
    if (!isNarrowFloat(l.dtype) || classify(l.index, k).cls != AddressClass::Linear)
      return false;
    any = true;
  }
  return any;
}

void analyzeElements(const Kernel &k, KernelShape &s) {
  s.rank = int32_t(k.domain.size());
  if (k.bases.empty())
    unsupported("a kernel without a domain basis");
  for (size_t b = 0; b < k.bases.size(); ++b) {
    const Basis &basis = k.bases[b];
    BasisShape bs;
    if (b == 0) {
      bs.rank = s.rank;
      s.bases.push_back(std::move(bs));
      continue;
    }
    if (basis.parent < 0 || size_t(basis.parent) >= b)
      unsupported("a box whose parent is not an earlier basis");
    const AffineMap &m = basis.fromParent;
    bs.parent = basis.parent;
    bs.rank = int32_t(basis.rank());
    bs.inRank = int32_t(m.inRank);
    bs.parentRank = int32_t(m.outRank);
    if (bs.parentRank != s.bases[basis.parent].rank ||
        basis.axisOf.size() != size_t(m.inRank))
      unsupported("a box map that does not fit its parent");
    bs.axisOf.assign(basis.axisOf.begin(), basis.axisOf.end());
    for (int32_t a : bs.axisOf)
      if (a >= bs.rank)
        unsupported("a box axis out of range");
    for (int64_t r = 0; r < m.inRank; ++r)
      for (int64_t d = 0; d < m.outRank; ++d)
        bs.nonzero.push_back(m.at(r, d) != 0);
    for (int64_t r = 0; r < m.inRank; ++r)
      bs.unitStep.push_back(basis.step[r] == 1);
    s.bases.push_back(std::move(bs));
  }
  auto checkIndex = [&](const IndexShape &i) {
    if (i.basis < 0 || size_t(i.basis) >= s.bases.size() ||
        i.rank != s.bases[i.basis].rank)
      unsupported("an index that does not fit its basis");
  };
  for (const Load &l : k.loads) {
    s.loads.push_back({l.dtype, classify(l.index, k)});
    checkIndex(s.loads.back().index);
    for (size_t f = 0; f < k.folds.size(); ++f)
      if (k.folds[f].buffer == l.buffer) {
        // The reduction's buffer holds one element, so every index of
        // it reads that one (a kept-dims [1, 1] read over a [1, 1] domain
        // has strides of 1).
        if (l.dtype != k.folds[f].dtype)
          unsupported("a folded reduction read in another class");
        s.loads.back().fold = int32_t(f);
      }
  }
  if (!k.folds.empty() && k.kind != Kernel::Kind::Elementwise)
    unsupported("a fold in a kernel that is not elementwise");
  for (const Fold &f : k.folds)
    s.folds.push_back({f.op, f.accumulator, f.dtype});
  for (const Param &p : k.params)
    s.params.push_back(p.dtype);
  for (const Generator &g : k.generators) {
    s.generators.push_back({genMode(g), g.dtype, classify(g.flatIndex, k)});
    checkIndex(s.generators.back().index);
  }
  for (const GatherRead &g : k.gathers) {
    if (g.strides.size() != g.extents.size())
      unsupported("a gather read whose strides do not fit its extents");
    s.gathers.push_back({g.dtype, int32_t(g.extents.size()), g.dense(), g.checked});
    s.checksGather = s.checksGather || g.checked;
  }
  for (uint32_t v = 0; v < k.values.size(); ++v) {
    checkValue(k, k.values[v], v);
    s.values.push_back(k.values[v]);
  }
  for (const Store &st : k.stores) {
    if (st.value >= k.values.size())
      unsupported("a store of an unknown value");
    if (cType(k.values[st.value].dtype) != cType(st.dtype))
      unsupported("a store whose dtype differs from its value's");
    StoreShape ss;
    ss.value = st.value;
    ss.dtype = st.dtype;
    ss.index = classify(st.index, k);
    checkIndex(ss.index);
    ss.zeroAxes.assign(st.zeroAxes.begin(), st.zeroAxes.end());
    ss.optional = st.optional;
    if (st.through) {
      // Only an epilogue's element knows its flat index in the product.
      if (!k.hasEpilogue())
        unsupported("a store through a table outside an epilogue");
      ss.throughAxes = int32_t(st.through->extents.size());
      ss.throughChecked = st.through->checked;
      ss.throughUnitLast = !st.through->viewStrides.empty() && st.through->viewStrides.back() == 1;
    }
    for (int32_t a : ss.zeroAxes)
      if (a < 0 || a >= s.rank)
        unsupported("a store zero axis out of range");
    s.stores.push_back(std::move(ss));
  }
  for (const Reduce &r : k.reduces) {
    if (r.value >= k.values.size())
      unsupported("a reduction of an unknown value");
    if (opCategory(r.op) != OpCategory::Reduce)
      unsupported("a reduction that is not one");
    if (r.partials >= 0 && k.kind != Kernel::Kind::Elementwise)
      unsupported("deferred partials of a reduction that is not a full one");
    s.reduces.push_back({r.value, r.op, r.accumulator, r.dtype, r.partials >= 0});
  }
  s.reduceAxes.assign(k.reduceAxes.begin(), k.reduceAxes.end());
  for (int32_t a : s.reduceAxes)
    if (a < 0 || a >= s.rank)
      unsupported("a reduced axis out of range");
  for (const Value &v : s.values)
    s.checksDivision |= v.kind == Value::Kind::Op &&
                        (v.op == OpKind::Div || v.op == OpKind::Mod) &&
                        isInteger(v.dtype);
}

namespace {

/// Accumulates 64-bit words into a hash (splitmix64's finalizer per word,
/// folded with a multiply): cheap, and stable across processes and builds.
class Hasher {
public:
  void add(uint64_t x) {
    h_ = (h_ ^ mix(x + 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  }
  template <class Range> void addAll(const Range &r) {
    add(uint64_t(std::size(r)));
    for (const auto &x : r)
      add(uint64_t(x));
  }
  uint64_t get() const { return mix(h_); }

private:
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t h_ = 0x636f6d6f2d6b6579ull;
};

void addIndex(Hasher &h, const IndexShape &i) {
  h.add(uint64_t(i.basis));
  h.add(uint64_t(i.rank));
  h.add(uint64_t(i.cls));
}

} // namespace

std::string vectorTypeDecl() {
  return "template <class T, int V> struct alignas(sizeof(T) * V) cumo_vec { T e[V]; };\n\n";
}

int32_t vectorWidth(const KernelShape &s) {
  if (s.kind != Kernel::Kind::Elementwise || !s.reduces.empty() || s.bases.size() != 1 ||
      !s.generators.empty() || !s.gathers.empty())
    return 0;
  size_t widest = 0;
  bool linear = false;
  auto note = [&](DType t, const IndexShape &i) {
    if (i.cls == AddressClass::General)
      return false;
    if (i.cls == AddressClass::Linear) {
      linear = true;
      widest = std::max(widest, sizeOf(t));
    }
    return true;
  };
  for (const LoadShape &l : s.loads)
    if (!note(l.dtype, l.index))
      return 0;
  for (const StoreShape &st : s.stores)
    if (!st.zeroAxes.empty() || !note(st.dtype, st.index))
      return 0;
  if (!linear || widest == 0)
    return 0;
  // 16 bytes of the widest class, at most 8 elements (a byte class moves
  // 8 bytes: enough, and the unrolled body stays short).
  int32_t v = int32_t(std::min<size_t>(16 / widest, 8));
  return v >= 2 ? v : 0;
}

double indexMagnitude(const IndexExpr &e, const Shape &shape) {
  double bound = std::fabs(double(e.offset));
  for (size_t d = 0; d < e.strides.size() && d < shape.size(); ++d)
    bound += std::fabs(double(e.strides[d])) * double(std::max<int64_t>(shape[d] - 1, 0));
  return bound;
}

uint64_t hashShape(const KernelShape &s) {
  Hasher h;
  h.add(1); // the layout version of this hash and of the emitters
  h.add(uint64_t(s.kind));
  h.add(uint64_t(s.rank));
  h.add(uint64_t(s.vector));
  h.add(uint64_t(s.strategy));
  h.add(uint64_t(s.checksDivision) | uint64_t(s.checksIndex) << 1 |
        uint64_t(s.distinctPositions) << 2 | uint64_t(s.writes) << 8);
  h.add(s.bases.size());
  for (const BasisShape &b : s.bases) {
    h.add(uint64_t(b.parent));
    h.add(uint64_t(b.rank));
    h.add(uint64_t(b.inRank));
    h.add(uint64_t(b.parentRank));
    h.addAll(b.axisOf);
    h.addAll(b.nonzero);
    h.addAll(b.unitStep);
  }
  h.add(s.loads.size());
  for (const LoadShape &l : s.loads) {
    h.add(uint64_t(l.dtype));
    addIndex(h, l.index);
    h.add(uint64_t(l.row));
    h.add(uint64_t(int64_t(l.fold)));
  }
  h.add(s.folds.size());
  for (const FoldShape &f : s.folds) {
    h.add(uint64_t(f.op));
    h.add(uint64_t(f.accumulator));
    h.add(uint64_t(f.dtype));
  }
  h.addAll(s.params);
  h.add(s.generators.size());
  for (const GenShape &g : s.generators) {
    h.add(uint64_t(g.mode));
    h.add(uint64_t(g.dtype));
    addIndex(h, g.index);
  }
  h.add(s.gathers.size());
  for (const GatherShape &g : s.gathers)
    h.add(uint64_t(g.dtype) | uint64_t(g.rank) << 8 | uint64_t(g.dense) << 40 |
          uint64_t(g.checked) << 41);
  h.add(s.values.size());
  for (const Value &v : s.values) {
    h.add(uint64_t(v.kind));
    h.add(uint64_t(v.op));
    h.add(uint64_t(v.dtype));
    h.add(uint64_t(v.basis));
    h.add(uint64_t(v.ref));
    h.addAll(v.args);
    if (v.kind == Value::Kind::RowReduce)
      h.add(uint64_t(v.accumulator));
  }
  h.add(s.stores.size());
  for (const StoreShape &st : s.stores) {
    h.add(st.value);
    h.add(uint64_t(st.dtype));
    addIndex(h, st.index);
    h.addAll(st.zeroAxes);
    h.add(uint64_t(st.optional));
    h.add(uint64_t(int64_t(st.throughAxes)));
    h.add(uint64_t(st.throughChecked) | uint64_t(st.throughUnitLast) << 1);
  }
  h.add(s.reduces.size());
  for (const ReduceShape &r : s.reduces) {
    h.add(r.value);
    h.add(uint64_t(r.op));
    h.add(uint64_t(r.accumulator));
    h.add(uint64_t(r.dtype));
    h.add(uint64_t(r.deferred));
  }
  h.addAll(s.reduceAxes);
  h.add(uint64_t(s.opaqueOp));
  h.addAll(s.operandDtypes);
  h.addAll(s.operandRanks);
  h.add(uint64_t(s.outDtype));
  h.add(uint64_t(s.flat));
  h.add(uint64_t(s.rowAccumulator));
  h.add(uint64_t(s.rowWarp) | uint64_t(s.rowVector) << 1 | uint64_t(s.rowParamsVector) << 2 |
        uint64_t(s.rowNarrow) << 3 | uint64_t(s.rowReadsAhead) << 4);
  h.add(uint64_t(s.rowGroup));
  h.add(uint64_t(s.rowCachedGroups));
  h.add(uint64_t(s.rowLanes));
  h.add(uint64_t(s.gemvRows) | uint64_t(s.gemvAlongK) << 32 | uint64_t(s.gemvColumns) << 40 |
        uint64_t(s.gemvEarlyLoads) << 56 | uint64_t(s.gemvNarrow) << 57 |
        uint64_t(s.gemvEarlyAffine) << 58);
  h.add(uint64_t(s.gemvEarlyEpilogueLoads));
  h.add(uint64_t(s.prologueOp) | uint64_t(s.prologueStored) << 32 |
        uint64_t(s.prologueTerms) << 33);
  return h.get();
}

llvm::StringRef cType(DType t) {
  std::string_view s = info(t).cudaType;
  return llvm::StringRef(s.data(), s.size());
}

} // namespace cumo::cudagen
