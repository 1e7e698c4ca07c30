// A plan: what one flush runs, as kernels over buffers. Fusion builds it
// from the pending DAG (fusion/schedule.h, fusion/lower.h); both executors
// run it (graph/), and Cumo.explain prints it.
//
// A kernel iterates over a domain (a shape). Every value it computes is an
// SSA value evaluated per element at the coordinates of a basis: basis 0 is
// the domain itself; a box basis is the slice an Update writes, with its
// own coordinates and a predicate (the element lies in the slice). Loads
// address their buffer with an offset plus strides over the coordinates of
// their basis, so views, broadcasts and slices cost nothing at run time.
#pragma once

#include "core/device.h"
#include "core/dtype.h"
#include "core/node.h"
#include "core/op_kind.h"
#include "core/scalar.h"
#include "core/shape.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cumo {

/// A buffer one plan touches.
struct PlanBuffer {
  enum class Role : uint8_t {
    Input,  ///< a materialized node's buffer, read only
    Output, ///< a node the plan stores (it escapes the plan)
    Temp,   ///< lives only inside the plan (arena memory)
  };
  Role role = Role::Temp;
  DType dtype = DType::DFloat;
  int64_t elements = 0; ///< Output/Temp: how many to allocate
  NodeRef node;         ///< Input: whose buffer; Output: which node gets it
  /// Output that no kernel of the plan reads back: it exists only for
  /// Ruby. When the GC finds its wrapper dead by the time the plan runs,
  /// the flush gives it no memory and its kernels skip the writes (their
  /// stores of it are Store::optional).
  bool optional = false;
  /// Output or Temp of an in-place index write: the memory is that of this
  /// Input buffer (the write's base), not a new allocation.
  int32_t donor = -1;
};

/// The coordinates a value is computed at. Basis 0 is the kernel's domain.
/// A box basis is the slice an Update writes: its coordinates j index the
/// slice, and it holds where parent coordinate u lies in it.
struct Basis {
  int32_t parent = -1; ///< -1 for the domain
  /// Parent coordinates -> coordinates of the updated array.
  AffineMap fromParent;
  /// For each axis of the updated array: the slice axis that steps along
  /// it (-1 when the slice fixes it), the start and the step.
  llvm::SmallVector<int32_t, 4> axisOf;
  llvm::SmallVector<int64_t, 4> start;
  llvm::SmallVector<int64_t, 4> step;
  /// The slice's shape (the rank of this basis).
  Shape count;
  int64_t rank() const { return int64_t(count.size()); }
};

/// An affine index over a basis: offset + sum(coord[d] * strides[d]).
struct IndexExpr {
  int32_t basis = 0;
  int64_t offset = 0;
  Strides strides;
};

/// A read of a plan buffer.
struct Load {
  uint32_t buffer = 0;
  DType dtype = DType::DFloat;
  IndexExpr index;
};

/// A constant handed to the kernel as a parameter (never baked into its
/// source, so that a loop's Ruby Floats do not change the kernel).
struct Param {
  DType dtype = DType::DFloat;
  Scalar value;
  /// The constant it comes from (null in a cached plan template, where a
  /// flush sets `value` from the node at the same position instead).
  const Node *node = nullptr;
};

/// A generated sequence: seq (start + step * i) or rand (Philox at counter
/// + i), where i is the element's flat index inside its own array.
struct Generator {
  OpKind op = OpKind::Seq;
  DType dtype = DType::DFloat;
  IndexExpr flatIndex;
  Scalar a, b; ///< seq: start, step; rand: low, high
  uint64_t seed = 0, counter = 0;
  /// The Seq or Rand node it comes from (see Param::node).
  const Node *node = nullptr;
};

/// An element read at a position computed in the kernel (a gather whose
/// array is settled, fusion/schedule.h): element `p` of the array in
/// row-major order, p the Int64 value the Value's args[0] names, lies at
/// offset + sum(c[d] * strides[d]) where c unravels p over `extents`.
/// A position outside [0, size) reads 0; where the positions were computed
/// on the device (`checked`) it also flags the error word with the
/// kernel's checkTag, as the index kernels do.
struct GatherRead {
  uint32_t buffer = 0;
  DType dtype = DType::DFloat;
  int64_t offset = 0;
  Shape extents;
  Strides strides;
  bool checked = false;
  int64_t size() const { return numElements(extents); }
  /// Row-major and dense: element p lies at offset + p.
  bool dense() const;
};

/// One SSA value of a kernel.
struct Value {
  enum class Kind : uint8_t {
    Load,      ///< ref: index into Kernel::loads
    Param,     ///< ref: index into Kernel::params
    Generator, ///< ref: index into Kernel::generators
    Op,        ///< op applied to args, result in dtype
    Select,    ///< ref: box basis; args: {inside, outside}
    /// Rowwise kernels: `op` (a reduction) of args[0] over the row the
    /// element lies in (the domain's last axis), accumulated in
    /// `accumulator`, answered in `dtype`: one value per row.
    RowReduce,
    /// Opaque kernels with an epilogue: the op's own result at the
    /// element (the domain is the result's shape), in `dtype`, as the op
    /// rounds it. It is value 0 of such a kernel.
    Result,
    /// ref: index into Kernel::gathers; args[0]: the Int64 position.
    Gather,
  };
  Kind kind = Kind::Op;
  OpKind op = OpKind::Copy;
  DType dtype = DType::DFloat;
  DType accumulator = DType::DFloat; ///< RowReduce only
  int32_t basis = 0; ///< where it is valid (the box it is computed in)
  uint32_t ref = 0;
  llvm::SmallVector<uint32_t, 2> args;
};

/// An index write an epilogue computes (fusion/epilogue.h): the write's
/// values are elements of the kernel's domain, and each is written at the
/// position its selection names in a table. The element at the domain's
/// flat index e is value c of the write when e = offset + sum(c[a] *
/// viewStrides[a]) with 0 <= c[a] < extents[a]; it is then written at
/// element table[tableOffset + sum(c[a] * tableStrides[a])] of the store's
/// buffer, and every other element of the domain writes nothing. The axes
/// are ordered so that each stride exceeds what all the later axes span
/// (the view is one to one): c is found by dividing in that order.
struct TableWrite {
  uint32_t table = 0; ///< plan buffer of the Int64 positions
  int64_t tableOffset = 0;
  int64_t offset = 0;
  Shape extents;
  Strides viewStrides;
  Strides tableStrides;
  /// Elements of the written array: a position outside [0, size) writes
  /// nothing (a host table marks a position written again later with -1).
  int64_t size = 0;
  /// The table was computed on the device: such a position also flags the
  /// error word with the kernel's checkTag, as the index kernels do.
  bool checked = false;
};

/// A write of a value into an output buffer, addressed over the coordinates
/// of a basis (index.basis). A value of lower rank than the domain (a 0-dim
/// alpha inside an axpy's kernel) is written only where the domain
/// coordinates in `zeroAxes` are 0. A store in a box basis (the value a
/// slice update writes, kept because Ruby still holds it) is written only
/// where the box's predicate holds, which covers each element once.
struct Store {
  uint32_t value = 0;
  uint32_t buffer = 0;
  DType dtype = DType::DFloat;
  IndexExpr index;
  llvm::SmallVector<int32_t, 4> zeroAxes;
  /// Its buffer is PlanBuffer::optional: a null pointer skips the write.
  bool optional = false;
  /// A write through a position table (an epilogue's index write): then
  /// `index` is the written array's start (its strides all zero), and the
  /// element's position comes from the table.
  std::optional<TableWrite> through;
};

/// A reduction of a value. In an elementwise kernel it reduces the whole
/// domain to one element; in an axis-reduce kernel it reduces the axes in
/// Kernel::reduceAxes.
struct Reduce {
  uint32_t value = 0;
  OpKind op = OpKind::Sum;
  DType accumulator = DType::DFloat; ///< the dtype it accumulates in
  DType dtype = DType::DFloat;       ///< the dtype it stores
  uint32_t buffer = 0;
  int64_t count = 0;                 ///< elements per output (for mean)
  /// A full reduction whose first reader is a later elementwise kernel
  /// (a Fold of that kernel): a Temp buffer of `slots` accumulators that
  /// this kernel's blocks leave their partials in, one each (block 0 fills
  /// the slots past the grid with the identity); the reader folds them,
  /// not this kernel's last block. -1: folded here as ever. The CPU
  /// executor folds here regardless.
  int32_t partials = -1;
  int64_t slots = 0;
};

/// A full reduction of an earlier kernel (its Reduce::partials) that this
/// kernel folds before its elements, every block the same way, in the
/// order the earlier kernel's last block would (ReduceOrder::Grid), and
/// whose result block 0 stores into `buffer`: what this kernel loads from
/// `buffer` is the folded value. The earlier kernel then ends with its
/// blocks' partials, without a counter and a last block, which took 1.2
/// us of a 4.7 us CG-sized kernel (bench/probes/reduce_tail.cu, H100).
struct Fold {
  uint32_t partials = 0; ///< the Temp buffer of accumulators
  int64_t slots = 0;
  uint32_t buffer = 0;   ///< the reduction's own 0-dim buffer
  OpKind op = OpKind::Sum;
  DType accumulator = DType::DFloat;
  DType dtype = DType::DFloat;
  int64_t count = 0;     ///< for mean
};

/// A small product's prologue (fusion/prologue.h): the row operation whose
/// result is the product's first operand, computed by the product's kernel.
/// The kernel's operands are then the row op's input, the matrix, and the
/// row op's gamma (and beta): the product reads the normalized rows as the
/// row op rounds them.
struct Prologue {
  OpKind op = OpKind::Copy; ///< LayerNorm or RmsNorm; Copy: none
  Scalar eps;
  /// The normalized rows' store, contiguous, when something needs them
  /// (Ruby holds them): `stored` says whether `out` is one.
  bool stored = false;
  Store out;
};

struct Kernel {
  enum class Kind : uint8_t {
    Elementwise, ///< stores per element, and full reductions
    AxisReduce,  ///< one reduction over some axes of the domain
    Scatter,     ///< stores into a strided target (writes that no box fits)
    Opaque,      ///< one opaque op: each executor's own implementation
    /// A row program: elementwise values and RowReduce values over the
    /// rows of the domain (its last axis), each row folded by one warp or
    /// block (fusion/row_program.h). Stores of values that do not vary
    /// along the row are written once per row (zeroAxes holds the last
    /// axis).
    Rowwise,
  };
  Kind kind = Kind::Elementwise;
  int stage = 0;
  Shape domain;
  llvm::SmallVector<Basis, 1> bases;
  llvm::SmallVector<Load, 4> loads;
  llvm::SmallVector<Param, 2> params;
  llvm::SmallVector<Generator, 1> generators;
  llvm::SmallVector<GatherRead, 1> gathers;
  llvm::SmallVector<Value, 8> values;
  llvm::SmallVector<Store, 2> stores;
  llvm::SmallVector<Reduce, 1> reduces;
  /// Elementwise kernels: earlier full reductions folded here (Fold).
  llvm::SmallVector<Fold, 1> folds;
  llvm::SmallVector<int32_t, 2> reduceAxes; ///< AxisReduce: sorted axes
  /// Opaque: the op, its attributes, the dtype of its result, its
  /// operands' shapes, and each operand where it lies: a load over the
  /// operand's own coordinates (offset and strides, so a view goes in as
  /// it is). The domain is the result's shape.
  ///
  /// Without an epilogue, `values` and `loads` are empty and stores[0]
  /// writes the result, contiguous. With one (fusion/epilogue.h: a small
  /// product's elementwise consumers), values[0] is the Result, the values
  /// after it are the consumers' expression over the domain, as in an
  /// elementwise kernel, and `stores` write those that something reads,
  /// the Result itself only when something reads the product.
  OpKind opaqueOp = OpKind::Copy;
  DType opaqueDtype = DType::DFloat;
  Scalar opaqueScalar;
  llvm::SmallVector<int64_t, 4> opaqueInts;
  llvm::SmallVector<Shape, 2> operandShapes;
  llvm::SmallVector<Load, 2> operands;
  /// Bit i: operand i lies in memory no kernel of the plan writes (an
  /// Input no in-place write takes), so the kernel may read it before the
  /// kernels before it have finished (the graph's early starts).
  uint32_t operandsUnwritten = 0;
  /// Bit i: loads[i] (an epilogue's operand: a bias, a residual) lies in
  /// memory no kernel of the plan writes, as operandsUnwritten says of the
  /// operands.
  uint32_t loadsUnwritten = 0;
  /// Small products: the row op computed before the product (none when
  /// prologue.op is Copy).
  Prologue prologue;
  /// A kernel that checks values only the device knows (a gather or
  /// write at device positions, or a GatherRead computed inline): this
  /// flush's tag for it, which a failed check leaves in the error word's
  /// second word (Device::errorWord), so the engine can name the op that
  /// failed. Set per flush, like params.
  uint32_t checkTag = kNoCheckTag;
  /// The ops fused here, in recording order (for explain and dumps).
  llvm::SmallVector<const Node *, 8> nodes;
  /// Their kinds, which a cached template keeps when it drops `nodes`.
  llvm::SmallVector<OpKind, 8> ops;
  /// Why this kernel is separate from an earlier one, when fusion split.
  std::string why;

  int64_t domainSize() const { return numElements(domain); }
  /// An opaque kernel that computes elementwise consumers of its result.
  bool hasEpilogue() const { return kind == Kind::Opaque && !values.empty(); }
  /// A small product that computes its first operand (a row op) itself.
  bool hasPrologue() const { return kind == Kind::Opaque && prologue.op != OpKind::Copy; }
  /// Output elements of an AxisReduce kernel.
  int64_t reduceOutputs() const;
  /// Elements folded into each output of an AxisReduce kernel.
  int64_t reduceLength() const;
};

/// The whole of one flush.
struct Plan {
  /// Nonzero when this plan is a cached template (graph/plan_cache.h): the
  /// same key means the same kernels, buffers and layouts, so an executor
  /// may cache whatever it derives from them under this key.
  uint64_t templateKey = 0;
  llvm::SmallVector<PlanBuffer, 8> buffers;
  llvm::SmallVector<Kernel, 4> kernels;
  /// Every pending node the plan computes, in recording order.
  llvm::SmallVector<NodeRef, 16> nodes;
  /// For each stored node: the Output buffer it gets, row-major from its
  /// start. Parallel arrays. A held reshape no kernel writes shares the
  /// buffer of the value it reshapes (Schedule::Facts::aliasesInput).
  llvm::SmallVector<NodeRef, 8> storedNodes;
  llvm::SmallVector<uint32_t, 8> storedBuffers;
  /// With CUMO_DUMP_GRAPH: the path stem this plan was dumped under, where
  /// an executor adds what it derives (the CUDA graph); empty otherwise.
  std::string dumpStem;

  bool empty() const { return kernels.empty(); }
};

} // namespace cumo
