// What CUDA code generation may depend on: the structure of a plan kernel
// with every run-time value (extents, offsets, strides, slice boxes,
// scalars, pointers) taken out. The emitters read only a KernelShape, never
// the Kernel, so a source cannot depend on a value by accident; kernelKey
// hashes the same KernelShape, so equal keys mean equal sources. Values
// reach the kernel through its parameter block, laid out by
// describeParams, which generation and packing both call.
//
// Internal to fusion/cuda_*.cpp.
#pragma once

#include "core/device.h"
#include "fusion/cuda_codegen.h"
#include "fusion/plan.h"
#include "fusion/row_program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cumo::cudagen {

/// Threads per block of every kernel.
constexpr uint32_t kBlockSize = 256;
constexpr uint32_t kWarpSize = 32;
/// Blocks per SM every kernel must fit (__launch_bounds__), which caps it
/// at 64 registers: fused kernels hoist their parameters into registers,
/// and without a cap a stencil took 80 and ran at 3 blocks per SM, 25%
/// slower than at 64 (H200).
constexpr uint32_t kMinBlocksPerSm = 4;
/// Grid-stride kernels launch at most this many blocks per SM: the blocks
/// every kernel fits, so that the whole grid is resident at once. A second
/// wave waits for the first blocks' arrival at a full reduction's counter;
/// the CG stencil kernel (64 registers) ran 1024 blocks in two waves at 8
/// a SM. At 4 the CG loop's device time fell from 17.6 to 15.1 us an
/// iteration at 512x512, and held at 2048x2048 (108.8 and 110.1 us; H200).
constexpr uint32_t kMaxBlocksPerSm = kMinBlocksPerSm;
/// Elementwise kernels without a reduction (nothing waits for the whole
/// grid) launch up to this many: more, shorter blocks in several waves moved
/// a 67-134 MB x.dup 3-6% faster than 4 a SM (SFloat 4096 x 4096: 50.7 ->
/// 47.6 us, 32768 x 1024: 98.4 -> 93.4; H100, 2026-12-05).
constexpr uint32_t kMaxStreamingBlocksPerSm = 32;
/// Elements a thread of an elementwise kernel takes in one round of its
/// grid-stride loop (emitGridStrideEntry), when its indices are 32-bit.
constexpr uint32_t kElementsPerThread = 2;
/// Axis reductions: one thread folds each output up to this many elements
/// (in the CPU's order, so the answer is bit-identical)...
constexpr int64_t kThreadReduceMaxLength = 32;
/// ...or when the innermost axis is kept and there are at least this many
/// outputs (adjacent threads then read adjacent addresses)...
constexpr int64_t kThreadReduceMinColumns = 4096;
/// ...one warp per output up to this many elements, one block beyond.
constexpr int64_t kWarpReduceMaxLength = 4096;
/// Scratch: the arrival counter of a full reduction's blocks comes first,
/// then one partial per reduction per block, 8 bytes each, or 16 when some
/// reduction of the kernel accumulates in DComplex (partialBytes).
constexpr size_t kScratchCounterBytes = 16;
constexpr size_t kPartialBytes = 8;
constexpr size_t kWidePartialBytes = 16;

/// How a load, store or generator addresses its buffer.
enum class AddressClass : uint8_t {
  Linear,  ///< basis 0, contiguous over the domain: offset + flat index
  Scalar,  ///< every stride zero: offset
  General, ///< offset + sum(coord * stride)
};

struct IndexShape {
  int32_t basis = 0;
  int32_t rank = 0; ///< strides (the basis's rank)
  AddressClass cls = AddressClass::General;
};

struct BasisShape {
  int32_t parent = -1;
  int32_t rank = 0;       ///< coordinates of this basis
  int32_t inRank = 0;     ///< fromParent rows (axes of the updated array)
  int32_t parentRank = 0; ///< fromParent columns
  llvm::SmallVector<int32_t, 4> axisOf;
  /// fromParent entries that are nonzero, row-major; only these are read.
  llvm::SmallVector<uint8_t, 16> nonzero;
  /// Per row: the box steps by one along it (most slices do), so the code
  /// takes no division. Structural: plan keys hold the update's target.
  llvm::SmallVector<uint8_t, 4> unitStep;
};

/// How a generator computes element i (the CPU executor's cases).
enum class GenMode : uint8_t {
  SeqFloat,        ///< float dtypes: (T)seq_double(a, b, i)
  SeqIntViaDouble, ///< integer dtype, a or b a Float: convert(seq_double)
  SeqInt,          ///< integer dtype, a and b Integers: (T)seq_int
  RandFloat,       ///< SFloat, HFloat, BFloat: rand_float, rounded to T
  RandDouble,
  RandInt,
  SeqComplex,      ///< seq_scomplex / seq_dcomplex over a, ai, b, bi
  RandComplex,     ///< rand_scomplex / rand_dcomplex over a, ai, b, bi
};

struct LoadShape {
  DType dtype = DType::DFloat;
  IndexShape index;
  RowRead row = RowRead::None; ///< Rowwise kernels (fusion/row_program.h)
  /// The Fold whose value this load reads (fold<N> in shared memory), or -1.
  int32_t fold = -1;
};

struct GenShape {
  GenMode mode = GenMode::SeqFloat;
  DType dtype = DType::DFloat;
  IndexShape index;
};

/// A GatherRead (fusion/plan.h): its element class, rank, and whether it
/// is dense (element p at offset + p) and checked.
struct GatherShape {
  DType dtype = DType::DFloat;
  int32_t rank = 0;
  bool dense = true;
  bool checked = false;
};

struct StoreShape {
  uint32_t value = 0;
  DType dtype = DType::DFloat;
  IndexShape index;
  llvm::SmallVector<int32_t, 4> zeroAxes;
  bool optional = false; ///< Store::optional: a null pointer skips it
  /// Store::through: the axes of the write's view (-1: a plain store),
  /// whether its table was computed on the device (TableWrite), and
  /// whether its last axis steps by one element (then its coordinate is
  /// the remainder itself: no division, where a decode's cache write has
  /// one axis of stride one and no other). Structural: plan keys hold the
  /// views' layouts.
  int32_t throughAxes = -1;
  bool throughChecked = false;
  bool throughUnitLast = false;
};

struct ReduceShape {
  uint32_t value = 0;
  OpKind op = OpKind::Sum;
  DType accumulator = DType::DFloat;
  DType dtype = DType::DFloat;
  /// Reduce::partials: the blocks leave their partials for a later kernel
  /// to fold, and the last block does not fold this one.
  bool deferred = false;
};

/// An earlier kernel's full reduction folded before this kernel's elements
/// (Fold in plan.h).
struct FoldShape {
  OpKind op = OpKind::Sum;
  DType accumulator = DType::DFloat;
  DType dtype = DType::DFloat;
};

enum class ReduceStrategy : uint8_t {
  None,   ///< no reductions
  Grid,   ///< full reductions: per-block partials, the last block folds
  Thread, ///< axis reduction, one thread per output
  Warp,   ///< axis reduction, one warp per output
  Block,  ///< axis reduction, one block per output
};

struct KernelShape {
  Kernel::Kind kind = Kernel::Kind::Elementwise;
  /// Elementwise kernels whose every load and store is Linear or Scalar
  /// (a copy, an axpy, a cast): elements per vector access, so that each
  /// Linear access moves up to 16 bytes at once (vectorWidth); 0 when the
  /// kernel has no such path. Whether a launch takes it is P.vec.
  int32_t vector = 0;
  int32_t rank = 0; ///< of the domain
  /// Entry 0 stands for the domain (only rank is set).
  llvm::SmallVector<BasisShape, 2> bases;
  llvm::SmallVector<LoadShape, 4> loads;
  llvm::SmallVector<DType, 2> params;
  llvm::SmallVector<GenShape, 1> generators;
  llvm::SmallVector<GatherShape, 1> gathers;
  /// Values carry no run-time numbers, so they are copied as they are.
  llvm::SmallVector<Value, 8> values;
  llvm::SmallVector<StoreShape, 2> stores;
  llvm::SmallVector<ReduceShape, 1> reduces;
  llvm::SmallVector<FoldShape, 1> folds;
  llvm::SmallVector<int32_t, 2> reduceAxes;
  ReduceStrategy strategy = ReduceStrategy::None;
  /// Divides or takes the remainder of integers: a divisor of zero sets a
  /// bit in the device's error word (the `err` parameter).
  bool checksDivision = false;
  /// A gather or index write whose table was computed on the device: a
  /// position out of range sets a bit in the error word too, and a write
  /// resolves repeated positions itself.
  bool checksIndex = false;
  /// A GatherRead at positions computed on the device: a position out of
  /// range sets the error word's bit and the kernel's tag (the `err` and
  /// `tag` parameters, which a checked index op's have already).
  bool checksGather = false;
  /// An index write whose positions cannot repeat (positionsAreDistinct):
  /// no thread looks for a later write of its position.
  bool distinctPositions = false;
  /// Index writes: how many arrays the kernel writes at its table's
  /// positions (sibling writes, Scheduler::mergeSiblingWrites), each from
  /// its own values operand (in1, in2, ...) into out, out1, ...
  int32_t writes = 1;
  /// Opaque kernels: the op, its operands' dtypes and ranks, the result's
  /// dtype, and its structural attributes (a scan over every element, or
  /// along an axis).
  OpKind opaqueOp = OpKind::Copy;
  llvm::SmallVector<DType, 2> operandDtypes;
  llvm::SmallVector<int32_t, 2> operandRanks;
  DType outDtype = DType::DFloat;
  bool flat = false;
  /// Row operations (cuda_row_codegen.cpp): the accumulator, a warp per
  /// row or a block, the group and the register cache of ops/row_layout.h,
  /// whether a group is one 16-byte load, and whether gamma's and beta's
  /// group beside it is one too.
  DType rowAccumulator = DType::SFloat;
  bool rowWarp = false;
  bool rowVector = false;
  bool rowParamsVector = false;
  /// Every index of the row kernel fits 32 bits (rowIndicesFit): its
  /// index type IX is int, else long long.
  bool rowNarrow = false;
  /// Each warp (a warp a row) or block (a block a row) loads its next row
  /// while it works on this one (readsNextRow; Rowwise kernels:
  /// rowProgramReadsAhead).
  bool rowReadsAhead = false;
  int32_t rowGroup = 0;
  int32_t rowCachedGroups = 0;
  /// Rowwise kernels: threads per row (32: a warp; more: a block).
  int32_t rowLanes = 0;
  /// Small products (cuda_gemv_codegen.cpp): the rows of the small operand
  /// rounded up to a power of two (0: not one), and whether the matrix is
  /// unit-strided along k.
  int32_t gemvRows = 0;
  bool gemvAlongK = false;
  /// The thread-per-column layout: columns a thread takes, read as one
  /// vector (gemvColumnVector).
  int32_t gemvColumns = 1;
  /// The first vectors of the matrix (a thread's run in the thread-per-
  /// column layout, a warp's first column along k) are read before the
  /// wait for the kernels before it: the matrix is memory no kernel of the
  /// plan writes (Kernel::operandsUnwritten).
  bool gemvEarlyLoads = false;
  /// Bit i: the epilogue's loads[i] (a bias) is read before the wait too,
  /// and gemvEarlyAffine: the prologue's gamma and beta (their first
  /// elements a thread): memory no kernel of the plan writes
  /// (Kernel::loadsUnwritten, operandsUnwritten), read by a thread that
  /// knows before the wait which element it will need (gemvEarlyOperands).
  uint32_t gemvEarlyEpilogueLoads = 0;
  bool gemvEarlyAffine = false;
  /// Every element index the product computes (its operands', its
  /// result's, its prologue's rows') fits 32 bits: its index arithmetic is
  /// in int (IX), which halved the registers 64-bit arithmetic took (126 to
  /// 80 a thread with a layer_norm prologue: three blocks an SM, not two).
  bool gemvNarrow = false;
  /// Small products with a prologue (fusion/prologue.h): the row op
  /// (LayerNorm or RmsNorm; Copy: none), laid out as its own kernel would
  /// lay a row (the row fields above, a warp a row), and whether its rows
  /// are stored (P.pro_out, which may still be null: optional).
  OpKind prologueOp = OpKind::Copy;
  bool prologueStored = false;
  /// The prologue's last pass folds terms every thread computed into shared
  /// memory (gemvPrologueTerms: softmax's exponentials).
  bool prologueTerms = false;

  int32_t basisRank(int32_t b) const { return bases[b].rank; }
  /// An opaque kernel computing elementwise consumers of its result
  /// (values[0], the Result) where it writes each element.
  bool hasEpilogue() const { return kind == Kernel::Kind::Opaque && !values.empty(); }
};

/// Extracts the structure of `k` (throws Error(Internal) for a kernel the
/// generator cannot express).
KernelShape analyzeKernel(const Kernel &k, const DeviceModel &model);

/// The element part of `k`'s structure: the domain's rank, bases, loads,
/// parameters, generators, values, stores and reductions (every kernel's
/// but an opaque one's without an epilogue).
void analyzeElements(const Kernel &k, KernelShape &s);

/// How an AxisReduce kernel spreads its outputs over threads.
ReduceStrategy axisStrategy(const Kernel &k);

/// A 64-bit hash of every field of `s`.
uint64_t hashShape(const KernelShape &s);

/// The launch of `k` now, for its reduction strategy (launchConfig without
/// analyzing the kernel again).
LaunchConfig launchFor(const Kernel &k, ReduceStrategy strategy,
                       const DeviceModel &model);

/// packParams for a kernel whose shape is already known.
void packWithShape(const KernelShape &s, const Kernel &k, const LaunchConfig &launch,
                   llvm::ArrayRef<void *> buffers, void *scratch, void *errorWord,
                   llvm::SmallVectorImpl<char> &out,
                   std::vector<ParamPatch> *patches = nullptr);

/// The C spelling of one element of `t`.
llvm::StringRef cType(DType t);

// Opaque kernels with a generated implementation (cuda_opaque_codegen.cpp).
/// The structure of opaque kernel `k`; Error(Internal) when no CUDA
/// implementation of its op is generated.
KernelShape analyzeOpaque(const Kernel &k);
/// The kernel's entry function (after the parameter struct).
void emitOpaqueEntry(const KernelShape &s, const std::string &entry, std::string &os);
LaunchConfig opaqueLaunch(const Kernel &k, const DeviceModel &model);

/// The run-time values a parameter block is filled from.
/// A field of a packed block that changes between flushes of the same plan
/// (pointers, Ruby scalars, seq and rand parameters): packing records where
/// each lies, so a repeated flush patches them into the last block instead
/// of describing the whole block again.
struct ParamPatch {
  enum class Kind : uint8_t {
    Buffer,     ///< index: plan buffer
    Scratch,    ///< index: byte offset into the kernel's scratch
    ErrorWord,
    CheckTag,   ///< Kernel::checkTag
    Param,      ///< index: kernel parameter (in its dtype)
    GenInt,     ///< index: generator; which: 0 a, 1 b (Scalar::i)
    GenIntConv, ///< likewise, converted to long long (Scalar::as)
    GenDouble,  ///< likewise, as a double; which 2 and 3: the imaginary
                ///< parts of a and b
    GenSeed,
    GenCounter,
  };
  Kind kind;
  uint8_t which = 0;
  uint32_t offset = 0; ///< from the start of the kernel's block
  uint32_t index = 0;
};

struct PackInputs {
  const Kernel &kernel;
  const LaunchConfig &launch;
  llvm::ArrayRef<void *> buffers;
  void *scratch = nullptr;
  void *errorWord = nullptr;
  /// When given, receives every field that changes between flushes.
  std::vector<ParamPatch> *patches = nullptr;
};

/// Writes the changing fields of a block packed for `k` (at `block`, as
/// recorded by packing) with this flush's values.
void applyPatches(const KernelShape &s, const Kernel &k,
                  llvm::ArrayRef<ParamPatch> patches,
                  llvm::ArrayRef<void *> buffers, void *scratch, void *errorWord,
                  char *block);

/// Receives the fields of a parameter block in order. In layout mode
/// (generation) the value callbacks are never called.
class ParamSink {
public:
  virtual ~ParamSink() = default;
  /// A field of C type `ctype`, `size` bytes (aligned to `size`); an array
  /// of `count` such when `array`. `value(i, dst)` writes element i.
  virtual void field(llvm::StringRef name, llvm::StringRef ctype, size_t size,
                     size_t count, bool array,
                     llvm::function_ref<void(size_t, void *)> value) = 0;
  /// While `value` runs: the offset it writes at, from the block's start.
  virtual size_t currentOffset() const { return 0; }
};

/// Lists the parameter block's fields for `s`, with their values from `in`
/// when it is given. The one definition of the block's layout.
void describeParams(const KernelShape &s, const PackInputs *in, ParamSink &sink);

/// A field placed in the block.
struct PlacedField {
  std::string name;
  std::string ctype;
  size_t size = 0, count = 0, offset = 0;
  bool array = false;
};

/// Field offsets with natural alignment, as a C compiler lays out a struct.
struct ParamLayout {
  llvm::SmallVector<PlacedField, 16> fields;
  size_t bytes = 0;
};
ParamLayout layoutParams(const KernelShape &s);

/// Places a field of `count` elements of `size` bytes after `cursor`,
/// returns its offset and advances `cursor`; tracks the widest alignment.
size_t placeField(size_t &cursor, size_t &maxAlign, size_t size, size_t count);

// Source emission (cuda_codegen.cpp, cuda_reduce_codegen.cpp).

/// Text helpers shared by the emitters.
std::string castExpr(DType from, DType to, const std::string &e);
std::string convertExpr(DType from, DType to, const std::string &e);
/// A zero of `t` as a C expression.
std::string zeroExpr(DType t);
/// The bytes of one block's partial of a full reduction in a kernel whose
/// reductions accumulate in `accumulators`.
size_t partialBytes(llvm::ArrayRef<DType> accumulators);
/// The expression that folds `b` into `a` for reduction `op`.
std::string reduceStepExpr(OpKind op, const std::string &a,
                           const std::string &b);
/// The functor type that applies reduceStepExpr (for shuffles).
llvm::StringRef reduceFunctor(OpKind op);
/// A fold's last step as a C expression: `total` (in `accumulator`)
/// divided by `count` for a mean, by the int8 grid's levels for
/// quantize_scale; `total` itself otherwise.
std::string foldFinishExpr(OpKind op, DType accumulator, const std::string &total,
                           const std::string &count);
/// The identity of `op` in accumulator dtype `acc`, as a C expression.
std::string reduceIdentityExpr(OpKind op, DType acc);

/// The name an opaque kernel gives its result at the element where an
/// epilogue reads it: a Result value is spelled so.
constexpr const char *kResultName = "res";

/// Emits the per-element work: boxes, values, stores and the folding of
/// every reduction into `acc<i>`. Needs in scope: `P`, the index type `I`,
/// the domain coordinates `c0_<d>`, the flat domain index `idx`, and in an
/// epilogue the op's result `res` (kResultName).
void emitElementBody(const KernelShape &s, std::string &os, int indent,
                     llvm::function_ref<std::string(uint32_t)> loadExpr = nullptr);

/// An integer field of the parameter block read in the index type `I`:
/// every generated loop is a template over I (int when the host found all
/// indices small, else long long; see describeParams' "narrow").
inline std::string indexParam(const std::string &field) {
  return "(I)P." + field;
}

/// Elements per vector access of an elementwise kernel of shape `s` (see
/// KernelShape::vector), or 0.
int32_t vectorWidth(const KernelShape &s);

/// The source of `cumo_vec<T, V>`: V elements of T aligned as one access
/// of V * sizeof(T) bytes, which the compiler loads and stores whole.
std::string vectorTypeDecl();

/// Declares the domain coordinates `c0_<d>` (zero).
void emitDomainCoords(const KernelShape &s, std::string &os, int indent);
/// Assigns the domain coordinates of `axes` from `flat`, a row-major index
/// over just those axes.
void emitUnravel(std::string &os, int indent, const std::string &flat,
                 llvm::ArrayRef<int32_t> axes);

/// Opens the extern "C" entry `entry` (launched with at most `block`
/// threads, at least `minBlocks` of them resident per SM when nonzero),
/// copies its parameter block to shared memory as P, and waits for the
/// kernels before it (wait_for_prior_grids: the copy overlaps their end).
void emitEntryHead(llvm::StringRef entry, std::string &os, uint32_t block = kBlockSize,
                   uint32_t minBlocks = kMinBlocksPerSm);
/// Opens the extern "C" entry `entry` with launch bounds `bounds`, reading
/// its parameters as P where the host left them, and waits for the kernels
/// before it (unless `wait` is false: the caller then emits the wait
/// itself, kWaitForPriorGrids, before it touches memory other kernels of
/// the plan write): the opening of the kernels with few parameter reads.
void emitKernelOpening(const std::string &bounds, const std::string &entry, std::string &os,
                       bool wait = true);

/// One element's pieces, for emitters that order them themselves (the
/// Rowwise kernels): the boxes' coordinates and predicates; the
/// declaration of value `id` as valueName(id) (`loadExpr`, when given,
/// spells the loads it answers a non-empty expression for); store `i` of
/// the element.
void emitBoxes(const KernelShape &s, std::string &os, int indent);
std::string valueName(uint32_t id);
void emitValue(const KernelShape &s, uint32_t id, std::string &os, int indent,
               llvm::function_ref<std::string(uint32_t)> loadExpr = nullptr);
void emitStore(const KernelShape &s, size_t i, std::string &os, int indent);
/// Flags a position out of range: the bit, and this kernel's tag if it is
/// the smallest a failed check left (Kernel::checkTag).
void emitFlagIndex(std::string &os, int indent);

// Small products (cuda_gemv_codegen.cpp).
void analyzeGemv(const Kernel &k, KernelShape &s);
void emitGemv(const KernelShape &s, const std::string &entry, std::string &os);
LaunchConfig gemvLaunch(const Kernel &k, const DeviceModel &model);
/// The along-k layout reads the matrix in vectors of this many elements
/// (16 bytes), when gemvColumnsAligned: every column's start (the
/// operand's offset and its strides but along k) is a multiple of it. A
/// prologue stages its rows in vectors of as many (emitRowStaging).
int32_t gemvVector(DType matrix);
bool gemvColumnsAligned(const Kernel &k);
/// The thread-per-column layout's columns a thread (1, 2, 4 or 8): where
/// the matrix's rows are unit-strided and every row starts on a boundary
/// of that many elements, as many as make 16 bytes, fewer where the rows
/// of the small operand would leave a thread more than 32 sums in
/// registers; else 1.
int32_t gemvColumnVector(const Kernel &k);
/// Whether small product `k`'s prologue computes its last pass's terms
/// with every thread, into shared memory after the rows (its row op's
/// result is a function of that term, RowProgram::elementOfTerm, and rows
/// and terms fit kPrologueBytes).
bool gemvPrologueTerms(const Kernel &k);
/// The thread-per-column layout's scratch when its launch splits k: a
/// counter per column tile, then every block's partials (0 when unsplit).
size_t gemvScratchBytes(const Kernel &k, const LaunchConfig &launch);

// Rowwise kernels (cuda_rowwise_codegen.cpp).
/// Whether Rowwise kernel `k`, laid out as `p`, loads each next row of a
/// block into registers while it works on this one (KernelShape::
/// rowReadsAhead, and its launch: one wave of blocks looping over the
/// rows): a block a row, held in registers, every held load a sixteen-bit
/// float read contiguously (a group a vector where the rows start on one).
/// Why: quantize_symmetric of BFloat 32768 x 1024 took 79.7 us, against
/// 47.2 for a copy of twice its stores' bytes, and making its instructions
/// fewer changed nothing (H100, 2026-12-08): a block's row loads, fold and
/// stores ran one after another. The BFloat row ops' kernels read ahead
/// so (fusion/cuda_row_codegen.cpp).
bool rowProgramReadsAhead(const Kernel &k, const RowProgram &p);
void emitRowwiseEntry(const KernelShape &s, const std::string &entry, std::string &os);
LaunchConfig rowwiseLaunch(const Kernel &k, const DeviceModel &model);
/// Calls `loop<int>(args)` or `loop<long long>(args)` as P.narrow says.
void emitIndexDispatch(llvm::StringRef loop, const std::string &args,
                       std::string &os);

/// Emits the whole entry of an axis reduction, and the block reduction
/// tail of an elementwise kernel with full reductions.
void emitAxisReduceEntry(const KernelShape &s, llvm::StringRef entry,
                         std::string &os);
void emitGridReduceTail(const KernelShape &s, std::string &os);
/// The folds of earlier kernels' reductions (KernelShape::folds): their
/// values' shared declarations (before the element loops that read them),
/// and the folds themselves, at the start of an elementwise kernel's
/// entry, after the wait for the kernels before it.
void emitFoldValues(const KernelShape &s, std::string &os);
void emitFolds(const KernelShape &s, std::string &os);

/// Helpers every source carries after the portable ops header.
llvm::StringRef devicePreamble();

/// Opaque kernels (small products, row operations) whose every index stays
/// within this magnitude take 32-bit indices (room for the sums that step
/// past an end).
constexpr double kNarrowIndexLimit = double(int64_t(1) << 30);

/// The largest magnitude an index of `e` over `shape` reaches: its offset
/// plus each stride over its extent.
double indexMagnitude(const IndexExpr &e, const Shape &shape);

/// Appends `text` as one line indented by `indent` spaces.
inline void line(std::string &os, int indent, const std::string &text) {
  os.append(size_t(indent), ' ');
  os += text;
  os += '\n';
}

} // namespace cumo::cudagen
