// The CPU reference executor: interprets a plan's kernels with plain loops,
// a tile of elements at a time, calling the same element functions the
// CUDA kernels are generated from. It is the reference every GPU result is
// compared with, and the executor of machines without a GPU. Reductions
// fold in the order the CUDA kernels fold (fusion/reduce_order.h), so on
// the GPU it plans against the two executors agree bit for bit.
#include "graph/executor.h"
#include "graph/opaque_call.h"

#include "core/env_flag.h"
#include "core/error.h"
#include "core/stats.h"
#include "fusion/reduce_order.h"
#include "fusion/row_program.h"
#include "ops/fancy_index.h"
#include "ops/reference.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

namespace cumo {

namespace {

constexpr int64_t kTile = 256;

/// The widest element a value holds (DComplex).
constexpr size_t kMaxElementBytes = 16;

/// A tile of one value: up to kTile elements of at most kMaxElementBytes.
/// Tiles are never zeroed, so the width costs real values nothing but
/// address space: each touches only its own elements' bytes. The pad of
/// one cache line staggers consecutive tiles across cache sets (a 4 KiB
/// stride would put every tile's first elements in the same sets).
struct Tile {
  alignas(16) unsigned char bytes[kTile * kMaxElementBytes + 64];
  template <class T> T *as() { return reinterpret_cast<T *>(bytes); }
};

/// Converts `n` elements of dtype `from` at `src` into dtype `to` at `dst`.
void convertTile(DType from, const void *src, DType to, void *dst, int64_t n) {
  dispatchDType(from, [&]<DType F, class FT>() {
    const FT *in = static_cast<const FT *>(src);
    dispatchDType(to, [&]<DType T, class TT>() {
      TT *out = static_cast<TT *>(dst);
      if constexpr (T == DType::Bit) {
        for (int64_t i = 0; i < n; ++i)
          out[i] = cumo_ops::nonzero(in[i]);
      } else {
        for (int64_t i = 0; i < n; ++i)
          out[i] = ref::convert<TT>(in[i]);
      }
    });
  });
}

/// A fold's last step before it is stored: mean divides by the elements it
/// folded, quantize_scale by the int8 grid's levels; the rest stand.
template <class A> A finishFold(OpKind op, A total, int64_t count) {
  if (op == OpKind::Mean)
    return cumo_ops::div(total, ref::convert<A>((long long)count));
  if (op == OpKind::QuantizeScale)
    return cumo_ops::div(total, ref::convert<A>((long long)kQuantizeLevels));
  return total;
}

class KernelRun {
public:
  /// `result`: for an opaque kernel's epilogue, the op's result, computed
  /// and rounded by its reference, contiguous over the domain.
  KernelRun(const Kernel &k, llvm::ArrayRef<Ref<Buffer>> buffers,
            const DeviceModel &model, const void *result = nullptr)
      // Tiles are written before they are read: leave them uninitialized
      // (zeroing 2 KB a value dominated small kernels).
      : k_(k), buffers_(buffers), result_(static_cast<const char *>(result)),
        values_(new Tile[k.values.size()]),
        coords_(k.bases.size()), pred_(k.bases.size()),
        order_(reduceOrder(k, model)) {
    switch (order_.kind) {
    case ReduceOrder::Kind::Sequential: slots_ = 1; break;
    case ReduceOrder::Kind::Lanes: slots_ = order_.lanes; break;
    case ReduceOrder::Kind::Grid: slots_ = order_.blocks * order_.block; break;
    }
    for (size_t b = 0; b < k.bases.size(); ++b) {
      int64_t rank = b == 0 ? int64_t(k.domain.size()) : k.bases[b].rank();
      coords_[b].assign(size_t(std::max<int64_t>(rank, 1)) * kTile, 0);
      pred_[b].assign(kTile, 1);
    }
  }

  void run() {
    switch (k_.kind) {
    case Kernel::Kind::Elementwise:
      initReductions(slots_);
      break;
    case Kernel::Kind::AxisReduce:
      initReductions(k_.reduceOutputs() * slots_);
      break;
    case Kernel::Kind::Scatter:
      break;
    case Kernel::Kind::Rowwise:
      runRows();
      return;
    case Kernel::Kind::Opaque:
      // Only its epilogue is interpreted, over the result.
      if (!k_.hasEpilogue() || !result_)
        throw Error(ErrorKind::Internal, "[cpu] an opaque kernel is not interpreted");
      break;
    }
    int64_t n = k_.domainSize();
    for (int64_t start = 0; start < n; start += kTile)
      runTile(start, std::min(kTile, n - start));
    finishReductions();
  }

private:
  int64_t *coords(int32_t basis, int64_t axis) {
    return coords_[basis].data() + axis * kTile;
  }

  /// A Rowwise kernel, row by row: each fold of the row in value order
  /// (recomputing what it reads, tile by tile), its result kept for the
  /// values after it, then the row's stores. Element j folds into lane
  /// (j / group) % lanes, in increasing j, as the CUDA kernel's lanes take
  /// their groups; the lanes then fold by the warp or block tree.
  void runRows() {
    RowLayout layout = rowProgram(k_).layout;
    int64_t n = k_.domain.back();
    int64_t rows = n ? k_.domainSize() / n : 0;
    rowValue_.assign(k_.values.size(), {});
    for (int64_t row = 0; row < rows; ++row) {
      for (uint32_t id = 0; id < k_.values.size(); ++id) {
        const Value &v = k_.values[id];
        if (v.kind != Value::Kind::RowReduce)
          continue;
        dispatchDType(v.accumulator, [&]<DType D, class A>() {
          foldRow<A>(v, id, row * n, n, layout);
        });
      }
      for (int64_t j = 0; j < n; j += kTile)
        runTile(row * n + j, std::min(kTile, n - j), k_.values.size(), /*write=*/true);
    }
  }

  template <class A>
  void foldRow(const Value &v, uint32_t id, int64_t start, int64_t n, const RowLayout &layout) {
    A identity = ref::reduceIdentity<A>(v.op);
    std::vector<A> lanes(size_t(layout.lanes), identity);
    auto op = [&](A a, A b) { return ref::reduceStep(v.op, a, b); };
    Tile converted;
    for (int64_t j = 0; j < n; j += kTile) {
      int64_t count = std::min(kTile, n - j);
      runTile(start + j, count, id, /*write=*/false);
      uint32_t arg = v.args[0];
      convertTile(k_.values[arg].dtype, values_[arg].bytes, v.accumulator, converted.bytes,
                  count);
      const A *x = converted.as<A>();
      for (int64_t l = 0; l < count; ++l) {
        A &lane = lanes[size_t(((j + l) / layout.group) % layout.lanes)];
        lane = op(lane, x[l]);
      }
    }
    A total = layout.warpPerRow() ? warpTree(lanes.data(), op)
                                  : blockTree(lanes.data(), layout.lanes, identity, op);
    total = finishFold(v.op, total, n);
    convertTile(v.accumulator, &total, v.dtype, rowValue_[id].data(), 1);
  }

  void runTile(int64_t start, int64_t lanes) {
    runTile(start, lanes, k_.values.size(), /*write=*/true);
  }

  /// Evaluates values [0, upTo) at the flat indices [start, start +
  /// lanes), then, if `write`, the stores and the folds of reductions.
  void runTile(int64_t start, int64_t lanes, size_t upTo, bool write) {
    lanes_ = lanes;
    start_ = start;
    // Domain coordinates of each lane, row-major.
    int64_t rank = k_.domain.size();
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t rest = start + l;
      for (int64_t d = rank; d-- > 0;) {
        coords(0, d)[l] = rest % k_.domain[d];
        rest /= k_.domain[d];
      }
    }
    for (size_t b = 1; b < k_.bases.size(); ++b)
      computeBox(int32_t(b));
    for (size_t v = 0; v < upTo; ++v)
      evaluate(uint32_t(v));
    if (!write)
      return;
    for (const Store &s : k_.stores)
      store(s);
    for (const Reduce &r : k_.reduces)
      accumulate(r);
  }

  void computeBox(int32_t b) {
    const Basis &basis = k_.bases[b];
    const AffineMap &m = basis.fromParent;
    for (int64_t d = 0; d < basis.rank(); ++d)
      std::fill(coords(b, d), coords(b, d) + lanes_, 0);
    for (int64_t l = 0; l < lanes_; ++l) {
      bool in = pred_[basis.parent][l];
      for (int64_t r = 0; in && r < m.inRank; ++r) {
        int64_t u = m.offset[r];
        for (int64_t d = 0; d < m.outRank; ++d)
          u += m.at(r, d) * coords(basis.parent, d)[l];
        int64_t q = u - basis.start[r];
        int32_t axis = basis.axisOf[r];
        if (axis < 0) {
          in = q == 0;
          continue;
        }
        int64_t step = basis.step[r];
        if (q % step != 0) {
          in = false;
          continue;
        }
        int64_t j = q / step;
        in = j >= 0 && j < basis.count[axis];
        coords(b, axis)[l] = j;
      }
      pred_[b][l] = in;
    }
  }

  int64_t indexAt(const IndexExpr &e, int64_t l) {
    int64_t idx = e.offset;
    for (size_t d = 0; d < e.strides.size(); ++d)
      idx += e.strides[d] * coords(e.basis, d)[l];
    return idx;
  }

  void evaluate(uint32_t id) {
    const Value &v = k_.values[id];
    Tile &out = values_[id];
    const uint8_t *pred = pred_[v.basis].data();
    switch (v.kind) {
    case Value::Kind::Load: {
      const Load &ld = k_.loads[v.ref];
      const char *base = static_cast<const char *>(buffers_[ld.buffer]->data());
      size_t size = sizeOf(ld.dtype);
      for (int64_t l = 0; l < lanes_; ++l)
        if (pred[l])
          std::memcpy(out.bytes + l * size, base + indexAt(ld.index, l) * size,
                      size);
      return;
    }
    case Value::Kind::Param: {
      const Param &p = k_.params[v.ref];
      dispatchDType(p.dtype, [&]<DType D, class T>() {
        T x;
        if constexpr (D == DType::Bit)
          x = T(p.value.asDouble() != 0);
        else
          x = p.value.as<T>();
        std::fill(out.as<T>(), out.as<T>() + lanes_, x);
      });
      return;
    }
    case Value::Kind::Generator:
      generate(k_.generators[v.ref], out, pred);
      return;
    case Value::Kind::Select: {
      const uint8_t *in = pred_[v.ref].data();
      size_t size = sizeOf(v.dtype);
      const Tile &a = values_[v.args[0]], &b = values_[v.args[1]];
      for (int64_t l = 0; l < lanes_; ++l)
        std::memcpy(out.bytes + l * size, (in[l] ? a : b).bytes + l * size, size);
      return;
    }
    case Value::Kind::Op:
      applyOp(v, out);
      return;
    case Value::Kind::Gather:
      gather(k_.gathers[v.ref], values_[v.args[0]].as<int64_t>(), pred, out);
      return;
    case Value::Kind::Result: {
      size_t size = sizeOf(v.dtype);
      std::memcpy(out.bytes, result_ + start_ * size, size_t(lanes_) * size);
      return;
    }
    case Value::Kind::RowReduce: {
      // This row's fold, the same at every element of the row.
      size_t size = sizeOf(v.dtype);
      for (int64_t l = 0; l < lanes_; ++l)
        std::memcpy(out.bytes + l * size, rowValue_[id].data(), size);
      return;
    }
    }
  }

  /// A GatherRead at each lane's position: the element, or 0 outside the
  /// array (flagged where the positions were computed on the device), as
  /// the CUDA kernels read it.
  void gather(const GatherRead &g, const int64_t *position, const uint8_t *pred, Tile &out) {
    const char *base = static_cast<const char *>(buffers_[g.buffer]->data());
    size_t size = sizeOf(g.dtype);
    int64_t n = g.size();
    std::memset(out.bytes, 0, size_t(lanes_) * size);
    for (int64_t l = 0; l < lanes_; ++l) {
      if (!pred[l])
        continue;
      int64_t q = position[l];
      if (q < 0 || q >= n) {
        if (g.checked)
          flagIndexOutOfRange(static_cast<uint32_t *>(hostDevice()->errorWord()), k_.checkTag);
        continue;
      }
      int64_t at = g.offset;
      for (size_t d = g.extents.size(); d-- > 0;) {
        at += q % g.extents[d] * g.strides[d];
        q /= g.extents[d];
      }
      std::memcpy(out.bytes + l * size, base + at * int64_t(size), size);
    }
  }

  void generate(const Generator &g, Tile &out, const uint8_t *pred) {
    dispatchDType(g.dtype, [&]<DType D, class T>() {
      T *o = out.as<T>();
      for (int64_t l = 0; l < lanes_; ++l) {
        if (!pred[l])
          continue;
        long long i = indexAt(g.flatIndex, l);
        if constexpr (kIsComplexC<T>) {
          if (g.op == OpKind::Seq)
            o[l] = seqComplex<T>(g, i);
          else
            o[l] = randComplex<T>(g, (unsigned long long)i);
        } else if (g.op == OpKind::Seq) {
          if constexpr (std::is_floating_point_v<T> || kIsNarrowFloatC<T>)
            o[l] = T(cumo_ops::seq_double(g.a.asDouble(), g.b.asDouble(), i));
          else if (g.a.isFloat() || g.b.isFloat())
            o[l] = ref::convert<T>(cumo_ops::seq_double(g.a.asDouble(),
                                                        g.b.asDouble(), i));
          else
            o[l] = T(cumo_ops::seq_int(g.a.i, g.b.i, i));
        } else {
          unsigned long long ctr = g.counter + (unsigned long long)i;
          if constexpr (std::is_same_v<T, float> || kIsNarrowFloatC<T>)
            // The sixteen-bit floats draw in single precision and round.
            o[l] = T(cumo_ops::rand_float(float(g.a.asDouble()),
                                          float(g.b.asDouble()), ctr, g.seed));
          else if constexpr (std::is_same_v<T, double>)
            o[l] = cumo_ops::rand_double(g.a.asDouble(), g.b.asDouble(), ctr,
                                         g.seed);
          else
            o[l] = T(cumo_ops::rand_int(g.a.as<long long>(),
                                        g.b.as<long long>(), ctr, g.seed));
        }
      }
    });
  }

  template <class T> static T seqComplex(const Generator &g, long long i) {
    if constexpr (std::is_same_v<T, cumo_ops::scomplex>)
      return cumo_ops::seq_scomplex(g.a.asDouble(), g.a.im, g.b.asDouble(),
                                    g.b.im, i);
    else
      return cumo_ops::seq_dcomplex(g.a.asDouble(), g.a.im, g.b.asDouble(),
                                    g.b.im, i);
  }
  template <class T>
  static T randComplex(const Generator &g, unsigned long long i) {
    unsigned long long ctr = g.counter + i;
    if constexpr (std::is_same_v<T, cumo_ops::scomplex>)
      return cumo_ops::rand_scomplex(g.a.asDouble(), g.a.im, g.b.asDouble(),
                                     g.b.im, ctr, g.seed);
    else
      return cumo_ops::rand_dcomplex(g.a.asDouble(), g.a.im, g.b.asDouble(),
                                     g.b.im, ctr, g.seed);
  }

  void applyOp(const Value &v, Tile &out) {
    const Value &a = k_.values[v.args[0]];
    Tile &ta = values_[v.args[0]];
    switch (opCategory(v.op)) {
    case OpCategory::Unary:
      if (v.op == OpKind::Cast) {
        convertTile(a.dtype, ta.bytes, v.dtype, out.bytes, lanes_);
        return;
      }
      if (isComplex(a.dtype) && !isComplex(v.dtype)) {
        // abs, real, imag, arg: a complex operand, its real class out.
        dispatchDType(a.dtype, [&]<DType D, class C>() {
          if constexpr (kIsComplexC<C>) {
            using R = typename RealPartOf<C>::type;
            const C *x = ta.as<C>();
            R *o = out.as<R>();
            for (int64_t l = 0; l < lanes_; ++l)
              o[l] = ref::unaryToReal(v.op, x[l]);
          }
        });
        return;
      }
      dispatchDType(v.dtype, [&]<DType D, class T>() {
        const T *x = ta.as<T>();
        T *o = out.as<T>();
        for (int64_t l = 0; l < lanes_; ++l)
          o[l] = ref::unary(v.op, x[l]);
      });
      return;
    case OpCategory::Binary:
      if (v.op == OpKind::MakeComplex) {
        // Two operands of the real class, a complex answer.
        dispatchDType(v.dtype, [&]<DType D, class C>() {
          if constexpr (kIsComplexC<C>) {
            using R = typename RealPartOf<C>::type;
            const R *x = ta.as<R>();
            const R *y = values_[v.args[1]].as<R>();
            C *o = out.as<C>();
            for (int64_t l = 0; l < lanes_; ++l)
              o[l] = ref::makeComplex<C>(x[l], y[l]);
          }
        });
        return;
      }
      dispatchDType(v.dtype, [&]<DType D, class T>() {
        const T *x = ta.as<T>();
        const T *y = values_[v.args[1]].as<T>();
        T *o = out.as<T>();
        for (int64_t l = 0; l < lanes_; ++l)
          o[l] = ref::binary(v.op, x[l], y[l]);
        if constexpr (std::is_integral_v<T>) {
          if (v.op == OpKind::Div || v.op == OpKind::Mod) {
            // As the CUDA kernels do: flag a zero divisor for the next read.
            const uint8_t *pred = pred_[v.basis].data();
            for (int64_t l = 0; l < lanes_; ++l)
              if (pred[l] && y[l] == 0)
                *static_cast<uint32_t *>(hostDevice()->errorWord()) |=
                    kErrorDivisionByZero;
          }
        }
      });
      return;
    case OpCategory::Compare:
      dispatchDType(a.dtype, [&]<DType D, class T>() {
        const T *x = ta.as<T>();
        uint8_t *o = out.as<uint8_t>();
        if (v.args.size() == 1) { // a predicate (isnan)
          for (int64_t l = 0; l < lanes_; ++l)
            o[l] = ref::predicate(v.op, x[l]);
          return;
        }
        const T *y = values_[v.args[1]].as<T>();
        for (int64_t l = 0; l < lanes_; ++l)
          o[l] = ref::compare(v.op, x[l], y[l]);
      });
      return;
    default:
      throw Error(ErrorKind::Internal, "[cpu] unexpected op in a kernel");
    }
  }

  void store(const Store &s) {
    if (s.optional && !buffers_[s.buffer])
      return; // an optional output nobody holds any more
    char *base = static_cast<char *>(buffers_[s.buffer]->data());
    size_t size = sizeOf(s.dtype);
    const Tile &t = values_[s.value];
    if (s.through) {
      for (int64_t l = 0; l < lanes_; ++l)
        if (int64_t q = throughPosition(*s.through, start_ + l); q >= 0)
          std::memcpy(base + (s.index.offset + q) * size, t.bytes + l * size, size);
      return;
    }
    const uint8_t *pred = pred_[s.index.basis].data();
    for (int64_t l = 0; l < lanes_; ++l) {
      bool write = pred[l];
      for (int32_t axis : s.zeroAxes)
        write &= coords(0, axis)[l] == 0;
      if (write)
        std::memcpy(base + indexAt(s.index, l) * size, t.bytes + l * size, size);
    }
  }

  /// Where a store through a table writes the element at the domain's flat
  /// index e, as the CUDA kernel finds it (emitTableStore); -1 where it
  /// writes nothing: e is none of the write's values, or the table's
  /// position is outside the array (which a device table flags).
  int64_t throughPosition(const TableWrite &t, int64_t e) {
    int64_t rest = e - t.offset, at = t.tableOffset;
    bool inside = rest >= 0;
    for (size_t a = 0; a < t.extents.size(); ++a) {
      int64_t c = rest / t.viewStrides[a];
      inside = inside && c < t.extents[a];
      rest -= c * t.viewStrides[a];
      at += c * t.tableStrides[a];
    }
    if (!inside || rest != 0)
      return -1;
    int64_t q = static_cast<const int64_t *>(buffers_[t.table]->data())[at];
    if (q >= 0 && q < t.size)
      return q;
    if (t.checked)
      flagIndexOutOfRange(static_cast<uint32_t *>(hostDevice()->errorWord()), k_.checkTag);
    return -1;
  }

  // Reductions accumulate in the accumulator dtype, one slot per output.
  void initReductions(int64_t outputs) {
    acc_.resize(k_.reduces.size());
    for (size_t i = 0; i < k_.reduces.size(); ++i) {
      const Reduce &r = k_.reduces[i];
      acc_[i].resize(size_t(outputs) * sizeOf(r.accumulator));
      dispatchDType(r.accumulator, [&]<DType D, class A>() {
        A *a = reinterpret_cast<A *>(acc_[i].data());
        std::fill(a, a + outputs, ref::reduceIdentity<A>(r.op));
      });
    }
  }

  /// The accumulator lane `l` of the tile folds into: its output's first
  /// slot plus the thread of the CUDA kernel that folds it (ReduceOrder).
  int64_t slotOf(int64_t l) {
    if (order_.kind == ReduceOrder::Kind::Grid)
      return (start_ + l) % slots_;
    if (k_.kind != Kernel::Kind::AxisReduce)
      return 0;
    int64_t out = 0, within = 0;
    for (size_t d = 0; d < k_.domain.size(); ++d) {
      if (llvm::is_contained(k_.reduceAxes, int32_t(d)))
        within = within * k_.domain[d] + coords(0, d)[l];
      else
        out = out * k_.domain[d] + coords(0, d)[l];
    }
    return out * slots_ + within % slots_;
  }

  void accumulate(const Reduce &r) {
    size_t i = &r - k_.reduces.data();
    Tile converted;
    const Value &v = k_.values[r.value];
    convertTile(v.dtype, values_[r.value].bytes, r.accumulator, converted.bytes,
                lanes_);
    dispatchDType(r.accumulator, [&]<DType D, class A>() {
      A *acc = reinterpret_cast<A *>(acc_[i].data());
      const A *x = converted.as<A>();
      for (int64_t l = 0; l < lanes_; ++l) {
        int64_t o = slotOf(l);
        acc[o] = ref::reduceStep(r.op, acc[o], x[l]);
      }
    });
  }

  /// Folds each output's slots into its first, in the CUDA kernel's tree.
  template <class A> void foldSlots(const Reduce &r, A *acc, int64_t outputs) {
    if (slots_ == 1)
      return;
    A identity = ref::reduceIdentity<A>(r.op);
    auto op = [&](A a, A b) { return ref::reduceStep(r.op, a, b); };
    for (int64_t o = 0; o < outputs; ++o) {
      A *v = acc + o * slots_;
      if (order_.kind == ReduceOrder::Kind::Lanes) {
        v[0] = slots_ == 32 ? warpTree(v, op) : blockTree(v, slots_, identity, op);
        acc[o] = v[0];
        continue;
      }
      // Grid: each block's partial, then the last block's fold of them.
      std::vector<A> partials(size_t(order_.blocks));
      for (int64_t b = 0; b < order_.blocks; ++b)
        partials[b] = blockTree(v + b * order_.block, order_.block, identity, op);
      std::vector<A> last(size_t(order_.block), identity);
      for (int64_t b = 0; b < order_.blocks; ++b)
        last[b % order_.block] = op(last[b % order_.block], partials[b]);
      acc[o] = blockTree(last.data(), order_.block, identity, op);
    }
  }

  void finishReductions() {
    int64_t outputs = k_.kind == Kernel::Kind::AxisReduce ? k_.reduceOutputs() : 1;
    for (size_t i = 0; i < k_.reduces.size(); ++i) {
      const Reduce &r = k_.reduces[i];
      dispatchDType(r.accumulator, [&]<DType D, class A>() {
        foldSlots(r, reinterpret_cast<A *>(acc_[i].data()), outputs);
      });
      dispatchDType(r.accumulator, [&]<DType D, class A>() {
        A *acc = reinterpret_cast<A *>(acc_[i].data());
        for (int64_t o = 0; o < outputs; ++o)
          acc[o] = finishFold(r.op, acc[o], r.count);
      });
      convertTile(r.accumulator, acc_[i].data(), r.dtype,
                  buffers_[r.buffer]->data(), outputs);
    }
  }

  const Kernel &k_;
  llvm::ArrayRef<Ref<Buffer>> buffers_;
  const char *result_;
  std::unique_ptr<Tile[]> values_;
  std::vector<std::vector<int64_t>> coords_;
  std::vector<std::vector<uint8_t>> pred_;
  std::vector<std::vector<unsigned char>> acc_;
  /// Rowwise: per RowReduce value, the current row's result.
  std::vector<std::array<unsigned char, kMaxElementBytes>> rowValue_;
  ReduceOrder order_;
  int64_t slots_ = 1; ///< accumulators per output
  int64_t lanes_ = 0;
  int64_t start_ = 0; ///< the tile's first flat index
};

/// CUMO_CPU_SKIP_KERNELS=1, a measuring aid: plans are made, cached and
/// given their buffers as ever, but no kernel computes, so a benchmark's
/// time is the host's own (recording, planning, the GC) at sizes whose
/// kernels would swamp it on this executor. Every value read is garbage
/// (zeros where it is a scalar).
bool skipKernels() {
  static const bool on = envFlag("CUMO_CPU_SKIP_KERNELS", false);
  return on;
}

class CpuExecutor final : public Executor {
  /// Runs `k`'s prologue into its store, or into a buffer of its own when
  /// it has none (returned, to live as long as the product's call), and
  /// points `operand` at the rows.
  Ref<Buffer> runPrologue(const Kernel &k, llvm::ArrayRef<void *> pointers,
                          OpaqueOperand &operand) {
    OpaqueCall rows = prologueCallOf(k, pointers);
    Ref<Buffer> own;
    if (!rows.out) {
      own = hostDevice()->pool().allocateInternal(
          std::max<size_t>(size_t(numElements(rows.outShape)) * sizeOf(rows.outDtype), 1));
      rows.out = own->data();
    }
    runOpaqueReference(rows);
    operand.data = rows.out;
    operand.strides = contiguousStrides(rows.outShape);
    operand.offset = 0;
    return own;
  }

public:
  const char *name() const override { return "cpu"; }
  Device &device() override { return *hostDevice(); }

  void run(const Plan &plan, llvm::ArrayRef<Ref<Buffer>> given) override {
    llvm::SmallVector<Ref<Buffer>, 8> buffers(given.begin(), given.end());
    for (size_t i = 0; i < plan.buffers.size(); ++i)
      if (!buffers[i])
        buffers[i] = hostDevice()->pool().allocateInternal(
            size_t(plan.buffers[i].elements) * sizeOf(plan.buffers[i].dtype));
    if (skipKernels()) {
      // Small outputs (the scalars a loop reads back) read as zeros rather
      // than whatever the pool held, so a host-side check of them (a
      // square root of a residual) sees a valid number.
      for (size_t i = 0; i < plan.buffers.size(); ++i) {
        size_t bytes = size_t(plan.buffers[i].elements) * sizeOf(plan.buffers[i].dtype);
        if (buffers[i] && bytes <= 64)
          std::memset(buffers[i]->data(), 0, bytes);
      }
      Stats::get().kernels_launched += plan.kernels.size();
      return;
    }
    llvm::SmallVector<void *, 8> pointers;
    for (const Ref<Buffer> &b : buffers)
      pointers.push_back(b ? b->data() : nullptr);
    for (const Kernel &k : plan.kernels) {
      if (k.kind == Kernel::Kind::Opaque) {
        // Sibling index writes are one call per array they write.
        for (size_t part = 0; part < opaqueParts(k); ++part) {
          OpaqueCall call = opaqueCallOf(k, pointers, part);
          call.errorWord = static_cast<uint32_t *>(device().errorWord());
          // A prologue's row op first, as its own kernel would have run
          // (the GPU's prologue folds in the same order), and the product
          // reads its rows.
          Ref<Buffer> normalized;
          if (k.hasPrologue())
            normalized = runPrologue(k, pointers, call.operands[0]);
          // An epilogue reads the result as the op stores it (rounded to
          // its dtype), as the separate elementwise kernel would have: the
          // op writes it aside, and the epilogue runs over it.
          Ref<Buffer> result;
          if (k.hasEpilogue()) {
            result = hostDevice()->pool().allocateInternal(
                std::max<size_t>(size_t(k.domainSize()) * sizeOf(k.opaqueDtype), 1));
            call.out = result->data();
          }
          runOpaqueReference(call);
          if (result)
            KernelRun(k, buffers, device().model(), result->data()).run();
        }
      } else {
        KernelRun(k, buffers, device().model()).run();
      }
      ++Stats::get().kernels_launched;
    }
  }
};

} // namespace

Executor *cpuExecutor() {
  static CpuExecutor *executor = new CpuExecutor();
  return executor;
}

} // namespace cumo
