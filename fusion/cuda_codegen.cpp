// CUDA source for plan kernels: the parameter struct, the per-element body
// (boxes, SSA values, stores) and the grid-stride entry of elementwise and
// scatter kernels. Reductions are emitted in cuda_reduce_codegen.cpp, the
// parameter block is described in cuda_params.cpp. Every emitter reads a
// KernelShape, never the Kernel: values reach the kernel only through its
// parameter block.
//
// The element semantics are graph/cpu_executor.cpp's, spelled with the
// same cumo_ops functions, so a kernel answers what the CPU reference
// answers (up to the order of a reduction and the last bit of exp/log).
#include "fusion/cuda_codegen.h"

#include "fusion/cuda_kernel_shape.h"
#include "ops/element_fn.h"

#include "llvm/Support/ErrorHandling.h"

#include <cinttypes>
#include <cstdio>

namespace cumo {

// The text of ops/portable_ops.h, generated at build time (embed_text.py).
extern const char kPortableOpsHeaderText[];
extern const size_t kPortableOpsHeaderTextSize;

namespace cudagen {

namespace {

bool isSigned(DType t) { return info(t).kind == DTypeKind::SInt; }

} // namespace

std::string convertExpr(DType from, DType to, const std::string &e) {
  // ref::convert on the C types: Bit is unsigned char here, like UInt8.
  // The structs of core/element_types.h convert through their explicit
  // constructors and conversion operators, so a C cast spells every
  // conversion but those of a float to an integer (truncated as
  // cumo_ops::float_to_int does) and of a complex value to a real one (its
  // real part, which the ops never ask for).
  if (cType(from) == cType(to))
    return e;
  std::string t = cType(to).str();
  if (isComplex(from) && !isComplex(to))
    return convertExpr(realTypeOf(from), to, "(" + e + ").re");
  if (isFloat(from) && !isFloat(to) && !isComplex(to))
    return "(" + t + ")cumo_ops::" +
           (isSigned(to) ? "float_to_int" : "float_to_uint") +
           (from == DType::DFloat ? "((double)(" : "((float)(") + e + "))";
  return "(" + t + ")(" + e + ")";
}

std::string castExpr(DType from, DType to, const std::string &e) {
  // convertTile: a conversion to Bit is a test against zero.
  if (to == DType::Bit) {
    if (isStructType(from))
      return "(unsigned char)cumo_ops::nonzero(" + e + ")";
    return "(unsigned char)((" + e + ") != (" + cType(from).str() + ")0)";
  }
  return convertExpr(from, to, e);
}

std::string zeroExpr(DType t) {
  if (isStructType(t))
    return cType(t).str() + "{}";
  return "(" + cType(t).str() + ")0";
}

namespace {

/// `cumo_ops::f(args)` for an op of the element function table: the same
/// function the CPU reference calls.
std::string elementCall(OpKind op, const std::string &args) {
  std::string_view f = elementFunction(op);
  if (f.empty())
    llvm_unreachable("an elementwise op without an element function");
  return "cumo_ops::" + std::string(f) + "(" + args + ")";
}

const char *compareOperator(OpKind op) {
  switch (op) {
  case OpKind::Eq: return "==";
  case OpKind::Ne: return "!=";
  case OpKind::Gt: return ">";
  case OpKind::Ge: return ">=";
  case OpKind::Lt: return "<";
  case OpKind::Le: return "<=";
  default: break;
  }
  llvm_unreachable("not a comparison");
}

/// Which of the elements a thread computes at once a name belongs to
/// (emitGridStrideEntry): "" for the first, "_1" for the second.
thread_local const char *elementSuffix = "";

struct ElementNames {
  explicit ElementNames(const char *suffix) : saved(elementSuffix) {
    elementSuffix = suffix;
  }
  ~ElementNames() { elementSuffix = saved; }
  const char *saved;
};

std::string var(uint32_t v) { return "v" + std::to_string(v) + elementSuffix; }
std::string coord(int32_t basis, int64_t d) {
  return "c" + std::to_string(basis) + "_" + std::to_string(d) + elementSuffix;
}
std::string pred(int32_t basis) { return "p" + std::to_string(basis) + elementSuffix; }
std::string flatIndex() { return std::string("idx") + elementSuffix; }

/// The element index `prefix` (a load, store or generator) addresses, in
/// the index type I.
std::string addressExpr(const std::string &prefix, const IndexShape &i) {
  std::string off = indexParam(prefix + "_off");
  switch (i.cls) {
  case AddressClass::Scalar:
    return off;
  case AddressClass::Linear:
    return "(" + off + " + " + flatIndex() + ")";
  case AddressClass::General:
    break;
  }
  std::string e = "(" + off;
  for (int32_t d = 0; d < i.rank; ++d)
    e += " + " + coord(i.basis, d) + " * " +
         indexParam(prefix + "_s[" + std::to_string(d) + "]");
  return e + ")";
}

/// Whether the cast of `a` to `to` may take cumo_ops::quantized_to_int: a
/// quantized float element (an integer of at most 127 in magnitude, or
/// NaN) to a signed integer class, where float_to_int would convert to 64
/// bits first (an eighth of an addition's rate on sm_90).
bool castsQuantized(const Value &a, DType to) {
  return a.kind == Value::Kind::Op && a.op == OpKind::Quantize && a.dtype == DType::SFloat &&
         isSigned(to);
}

std::string unaryExpr(const Value &v, const Value &a) {
  std::string x = var(v.args[0]);
  switch (v.op) {
  case OpKind::Copy: return x;
  case OpKind::Cast:
    if (castsQuantized(a, v.dtype))
      return "(" + cType(v.dtype).str() + ")cumo_ops::quantized_to_int(" + x + ")";
    return castExpr(a.dtype, v.dtype, x);
  default: return elementCall(v.op, x);
  }
}

std::string generatorExpr(const GenShape &g, size_t id) {
  std::string p = "P.g" + std::to_string(id);
  std::string i = addressExpr("g" + std::to_string(id), g.index);
  std::string t = cType(g.dtype).str();
  std::string ctr = p + "_ctr + (unsigned long long)" + i + ", " + p + "_seed";
  switch (g.mode) {
  case GenMode::SeqFloat: // a sixteen-bit float rounds once, from double
    return "(" + t + ")cumo_ops::seq_double(" + p + "_a, " + p + "_b, " + i + ")";
  case GenMode::SeqIntViaDouble:
    return convertExpr(DType::DFloat, g.dtype,
                       "cumo_ops::seq_double(" + p + "_a, " + p + "_b, " + i +
                           ")");
  case GenMode::SeqInt:
    return "(" + t + ")cumo_ops::seq_int(" + p + "_a, " + p + "_b, " + i + ")";
  case GenMode::RandFloat:
    // The sixteen-bit floats draw in single precision and round.
    return convertExpr(DType::SFloat, g.dtype,
                       "cumo_ops::rand_float((float)" + p + "_a, (float)" + p +
                           "_b, " + ctr + ")");
  case GenMode::SeqComplex:
    return std::string("cumo_ops::seq_") +
           (g.dtype == DType::SComplex ? "scomplex" : "dcomplex") + "(" + p +
           "_a, " + p + "_ai, " + p + "_b, " + p + "_bi, " + i + ")";
  case GenMode::RandComplex:
    return std::string("cumo_ops::rand_") +
           (g.dtype == DType::SComplex ? "scomplex" : "dcomplex") + "(" + p +
           "_a, " + p + "_ai, " + p + "_b, " + p + "_bi, " + ctr + ")";
  case GenMode::RandDouble:
    return "cumo_ops::rand_double(" + p + "_a, " + p + "_b, " + ctr + ")";
  case GenMode::RandInt:
    return "(" + t + ")cumo_ops::rand_int(" + p + "_a, " + p + "_b, " + ctr +
           ")";
  }
  llvm_unreachable("unknown generator mode");
}

std::string valueExpr(const KernelShape &s, uint32_t id) {
  const Value &v = s.values[id];
  switch (v.kind) {
  case Value::Kind::Load: {
    if (s.loads[v.ref].fold >= 0)
      return "fold" + std::to_string(s.loads[v.ref].fold);
    std::string ld = "ld" + std::to_string(v.ref);
    return "P." + ld + "[" + addressExpr(ld, s.loads[v.ref].index) + "]";
  }
  case Value::Kind::Param:
    return "P.p" + std::to_string(v.ref);
  case Value::Kind::Generator:
    return generatorExpr(s.generators[v.ref], v.ref);
  case Value::Kind::Select:
    return pred(int32_t(v.ref)) + " ? " + var(v.args[0]) + " : " +
           var(v.args[1]);
  case Value::Kind::RowReduce:
    llvm_unreachable("a row's fold is declared by its pass (cuda_rowwise_codegen.cpp)");
  case Value::Kind::Result:
    return kResultName;
  case Value::Kind::Gather:
    llvm_unreachable("a gather read is declared by emitGatherRead");
  case Value::Kind::Op:
    break;
  }
  const Value &a = s.values[v.args[0]];
  switch (opCategory(v.op)) {
  case OpCategory::Unary:
    return unaryExpr(v, a);
  case OpCategory::Binary:
    return elementCall(v.op, var(v.args[0]) + ", " + var(v.args[1]));
  case OpCategory::Compare:
    if (v.args.size() == 1) // a predicate (isnan)
      return "(unsigned char)" + elementCall(v.op, var(v.args[0]));
    return "(unsigned char)(" + var(v.args[0]) + " " + compareOperator(v.op) +
           " " + var(v.args[1]) + ")";
  default:
    break;
  }
  llvm_unreachable("analyzeKernel admits only elementwise ops");
}

/// Coordinates and predicate of box `b` from its parent's (computeBox).
void emitBox(const KernelShape &s, int32_t b, std::string &os, int indent) {
  const BasisShape &bs = s.bases[b];
  std::string p = pred(b), field = "b" + std::to_string(b);
  line(os, indent, "bool " + p + " = " + pred(bs.parent) + ";");
  for (int32_t d = 0; d < bs.rank; ++d)
    line(os, indent, "I " + coord(b, d) + " = 0;");
  if (bs.inRank == 0)
    return;
  line(os, indent, "if (" + p + ") {");
  int in = indent + 2;
  size_t entry = 0, nonzeroSeen = 0;
  for (int32_t r = 0; r < bs.inRank; ++r) {
    std::string rs = std::to_string(r);
    std::string u = indexParam(field + "_off[" + rs + "]");
    for (int32_t d = 0; d < bs.parentRank; ++d, ++entry)
      if (bs.nonzero[entry])
        u += " + " + indexParam(field + "_m[" + std::to_string(nonzeroSeen++) + "]") +
             " * " + coord(bs.parent, d);
    line(os, in, "{");
    line(os, in + 2, "const I q = " + u + " - " +
                         indexParam(field + "_start[" + rs + "]") + ";");
    int32_t axis = bs.axisOf[r];
    if (axis < 0) {
      line(os, in + 2, p + " = " + p + " && q == 0;");
    } else {
      std::string count = indexParam(field + "_cnt[" + std::to_string(axis) + "]");
      if (bs.unitStep[r]) {
        line(os, in + 2, "const I j = q;");
        line(os, in + 2, p + " = " + p + " && j >= 0 && j < " + count + ";");
      } else {
        line(os, in + 2, "const I st = " + indexParam(field + "_step[" + rs + "]") + ";");
        line(os, in + 2, "const I j = q / st;");
        line(os, in + 2, p + " = " + p + " && q % st == 0 && j >= 0 && j < " + count + ";");
      }
      line(os, in + 2, coord(b, axis) + " = j;");
    }
    line(os, in, "}");
  }
  line(os, indent, "}");
}

} // namespace

void emitBoxes(const KernelShape &s, std::string &os, int indent) {
  if (s.bases.size() > 1)
    line(os, indent, "const bool " + pred(0) + " = true; // the domain holds everywhere");
  for (int32_t b = 1; b < int32_t(s.bases.size()); ++b)
    emitBox(s, b, os, indent);
}

std::string valueName(uint32_t id) { return var(id); }

namespace {

/// A gather read (GatherRead): 0 unless the position lies in the array
/// (and the element's box holds), else the element it names, found by
/// unravelling the position over the extents where the array is not
/// dense. A checked position outside flags the error word and the tag.
void emitGatherRead(const KernelShape &s, uint32_t id, std::string &os, int indent) {
  const Value &v = s.values[id];
  const GatherShape &g = s.gathers[v.ref];
  std::string a = "P.ga" + std::to_string(v.ref), q = "q_" + var(id);
  line(os, indent, cType(v.dtype).str() + " " + var(id) + " = " + zeroExpr(v.dtype) + ";");
  line(os, indent, "if (" + (v.basis != 0 ? pred(v.basis) : std::string("true")) + ") {");
  int in = indent + 2;
  line(os, in, "const long long " + q + " = (long long)" + var(v.args[0]) + ";");
  line(os, in, "if (" + q + " >= 0 && " + q + " < " + a + "_n) {");
  if (g.dense) {
    line(os, in + 2, var(id) + " = " + a + "[" + a + "_off + " + q + "];");
  } else {
    line(os, in + 2, "long long at = " + a + "_off, rest = " + q + ";");
    for (int32_t d = g.rank; d-- > 0;) {
      std::string D = "[" + std::to_string(d) + "]";
      line(os, in + 2, "at += (rest % " + a + "_ext" + D + ") * " + a + "_s" + D + ";");
      if (d > 0)
        line(os, in + 2, "rest /= " + a + "_ext" + D + ";");
    }
    line(os, in + 2, var(id) + " = " + a + "[at];");
  }
  if (g.checked) {
    line(os, in, "} else {");
    emitFlagIndex(os, in + 2);
  }
  line(os, in, "}");
  line(os, indent, "}");
}

} // namespace

void emitValue(const KernelShape &s, uint32_t id, std::string &os, int indent,
               llvm::function_ref<std::string(uint32_t)> loadExpr) {
  const Value &v = s.values[id];
  if (v.kind == Value::Kind::Gather)
    return emitGatherRead(s, id, os, indent);
  std::string t = cType(v.dtype).str();
  std::string e = v.kind == Value::Kind::Load && loadExpr ? loadExpr(v.ref) : "";
  if (e.empty())
    e = valueExpr(s, id);
  // A value of a box exists only inside it: guard it, loads above all,
  // which would read out of bounds elsewhere.
  if (v.basis != 0 && v.kind != Value::Kind::Param)
    e = pred(v.basis) + " ? (" + t + ")(" + e + ") : " + zeroExpr(v.dtype);
  line(os, indent, "const " + t + " " + var(id) + " = " + e + ";");
  if (v.kind == Value::Kind::Op && (v.op == OpKind::Div || v.op == OpKind::Mod) &&
      isInteger(v.dtype)) {
    // Numo raises ZeroDivisionError; a kernel flags it for the next read.
    std::string cond = var(v.args[1]) + " == 0";
    if (v.basis != 0)
      cond = pred(v.basis) + " && " + cond;
    line(os, indent, "if (" + cond + ") atomicOr(P.err, 1u);");
  }
}

void emitFlagIndex(std::string &os, int indent) {
  line(os, indent, "atomicOr(P.err, " + std::to_string(kErrorIndexOutOfRange) + "u);");
  line(os, indent, "atomicMin(P.err + 1, (unsigned int)P.tag);");
}

namespace {

/// A store through a table (TableWrite), at the epilogue's element `idx`:
/// its coordinates in the write's values by division, axis by axis (each
/// stride exceeds the span of the axes after it; a last axis of stride one
/// takes the remainder), then the table's position, checked against the
/// written array.
void emitTableStore(const KernelShape &s, size_t i, std::string &os, int indent) {
  const StoreShape &st = s.stores[i];
  std::string p = "P.st" + std::to_string(i);
  line(os, indent, "{");
  int in = indent + 2;
  line(os, in, "long long rest = (long long)idx - " + p + "_voff;");
  line(os, in, "long long at = " + p + "_toff;");
  line(os, in, "bool inside = rest >= 0;");
  for (int32_t a = 0; a < st.throughAxes; ++a) {
    std::string ax = "[" + std::to_string(a) + "]";
    if (a == st.throughAxes - 1 && st.throughUnitLast) {
      line(os, in, "inside = inside && rest < " + p + "_ve" + ax + ";");
      line(os, in, "at += rest * " + p + "_ts" + ax + ";");
      line(os, in, "rest = 0;");
      continue;
    }
    line(os, in, "{");
    line(os, in + 2, "const long long c = rest / " + p + "_vs" + ax + ";");
    line(os, in + 2, "inside = inside && c < " + p + "_ve" + ax + ";");
    line(os, in + 2, "rest -= c * " + p + "_vs" + ax + ";");
    line(os, in + 2, "at += c * " + p + "_ts" + ax + ";");
    line(os, in, "}");
  }
  line(os, in, "if (inside && rest == 0) {");
  line(os, in + 2, "const long long q = " + p + "_t[at];");
  line(os, in + 2, "if (q >= 0 && q < " + p + "_n) {");
  line(os, in + 4, p + "[" + p + "_off + q] = " + var(st.value) + ";");
  line(os, in + 2, "}" + std::string(st.throughChecked ? " else {" : ""));
  if (st.throughChecked) {
    emitFlagIndex(os, in + 4);
    line(os, in + 2, "}");
  }
  line(os, in, "}");
  line(os, indent, "}");
}

} // namespace

void emitStore(const KernelShape &s, size_t i, std::string &os, int indent) {
  const StoreShape &st = s.stores[i];
  if (st.throughAxes >= 0)
    return emitTableStore(s, i, os, indent);
  std::string name = "st" + std::to_string(i);
  // A store in a box writes where the box holds (each element once).
  std::string cond = st.index.basis != 0 ? pred(st.index.basis) : "";
  // An optional output Ruby dropped before the plan ran has no memory.
  if (st.optional)
    cond += (cond.empty() ? "" : " && ") + std::string("P.") + name;
  for (int32_t a : st.zeroAxes)
    cond += (cond.empty() ? "" : " && ") + coord(0, a) + " == 0";
  std::string write =
      "P." + name + "[" + addressExpr(name, st.index) + "] = " + var(st.value) + ";";
  line(os, indent, cond.empty() ? write : "if (" + cond + ") " + write);
}

namespace {

/// The boxes and values of one element: every load, and nothing written
/// but the error word.
void emitElementValues(const KernelShape &s, std::string &os, int indent,
                       llvm::function_ref<std::string(uint32_t)> loadExpr) {
  emitBoxes(s, os, indent);
  for (uint32_t id = 0; id < s.values.size(); ++id)
    emitValue(s, id, os, indent, loadExpr);
}

/// The stores of one element and its folds into the accumulators.
void emitElementWrites(const KernelShape &s, std::string &os, int indent) {
  for (size_t i = 0; i < s.stores.size(); ++i)
    emitStore(s, i, os, indent);
  for (size_t i = 0; i < s.reduces.size(); ++i) {
    const ReduceShape &r = s.reduces[i];
    std::string acc = "acc" + std::to_string(i);
    std::string x = castExpr(s.values[r.value].dtype, r.accumulator,
                             var(r.value));
    line(os, indent, acc + " = " + reduceStepExpr(r.op, acc, x) + ";");
  }
}

} // namespace

void emitElementBody(const KernelShape &s, std::string &os, int indent,
                     llvm::function_ref<std::string(uint32_t)> loadExpr) {
  emitElementValues(s, os, indent, loadExpr);
  emitElementWrites(s, os, indent);
}

void emitUnravel(std::string &os, int indent, const std::string &flat,
                 llvm::ArrayRef<int32_t> axes) {
  if (axes.empty())
    return;
  if (axes.size() == 1) {
    line(os, indent, coord(0, axes[0]) + " = " + flat + ";");
    return;
  }
  line(os, indent, "{");
  line(os, indent + 2, "I rest = " + flat + ";");
  for (size_t k = axes.size(); k-- > 1;)
    line(os, indent + 2, "rest = cumo_k::divmod(rest, " +
                             indexParam("ext[" + std::to_string(axes[k]) + "]") +
                             ", " + coord(0, axes[k]) + ");");
  line(os, indent + 2, coord(0, axes[0]) + " = rest;");
  line(os, indent, "}");
}

void emitDomainCoords(const KernelShape &s, std::string &os, int indent) {
  if (s.rank == 0)
    return;
  std::string decl = "I ";
  for (int32_t d = 0; d < s.rank; ++d)
    decl += (d ? ", " : "") + coord(0, d) + " = 0";
  line(os, indent, decl + ";");
}

void emitEntryHead(llvm::StringRef entry, std::string &os, uint32_t block,
                   uint32_t minBlocks) {
  std::string bounds = std::to_string(block);
  if (minBlocks)
    bounds += ", " + std::to_string(minBlocks);
  os += "extern \"C\" __global__ void __launch_bounds__(" + bounds + ") " + entry.str() +
        "(const unsigned char *__restrict__ params) {\n";
  // The block's threads copy the parameters into shared memory and read
  // them from there. A copy in registers (a local `CumoParams P`) took a
  // register or a spill slot per field: the CG stencil kernel spilled 380
  // bytes a thread at 64 registers, local-memory traffic that made it
  // several times slower than its loads and stores (ptxas -v, sm_90). From
  // shared memory it needs 56 registers and spills nothing.
  line(os, 2, "__shared__ CumoParams P_shared;");
  line(os, 2, "for (unsigned int i = threadIdx.x; i < sizeof(CumoParams) / 8; "
              "i += blockDim.x)");
  line(os, 4, "reinterpret_cast<unsigned long long *>(&P_shared)[i] ="
              " reinterpret_cast<const unsigned long long *>(params)[i];");
  line(os, 2, "__syncthreads();");
  line(os, 2, "const CumoParams &P = P_shared;");
  line(os, 2, kWaitForPriorGrids);
}

void emitKernelOpening(const std::string &bounds, const std::string &entry,
                       std::string &os, bool wait) {
  os += "extern \"C\" __global__ void __launch_bounds__(" + bounds + ") " + entry +
        "(const unsigned char *__restrict__ params) {\n";
  line(os, 2, "const CumoParams &P = *reinterpret_cast<const CumoParams *>(params);");
  if (wait)
    line(os, 2, kWaitForPriorGrids);
}

void emitIndexDispatch(llvm::StringRef loop, const std::string &args,
                       std::string &os) {
  // 32-bit index arithmetic is two to three times cheaper; the host says
  // when every index of this launch fits it.
  line(os, 2, "if (P.narrow)");
  line(os, 4, loop.str() + "<int>(" + args + ");");
  line(os, 2, "else");
  line(os, 4, loop.str() + "<long long>(" + args + ");");
}

namespace {

void emitParamStruct(const KernelShape &s, std::string &os) {
  // The host packs the block at these offsets (cuda_params.cpp, natural
  // alignment, as here). NVRTC has no offsetof, so the compile checks the
  // size, and the offsets are written out for readers and tests.
  ParamLayout layout = layoutParams(s);
  os += "struct CumoParams {\n";
  for (const PlacedField &f : layout.fields)
    os += "  " + f.ctype + " " + f.name +
          (f.array ? "[" + std::to_string(f.count) + "]" : "") +
          "; // offset " + std::to_string(f.offset) + "\n";
  os += "};\n";
  os += "static_assert(sizeof(CumoParams) == " + std::to_string(layout.bytes) +
        ", \"parameter block size\");\n\n";
}

/// The vector loop of an elementwise kernel with s.vector (V) set: each
/// thread takes two chunks of V consecutive elements a round (as the
/// scalar loop takes two elements), reads every Linear load of a chunk as
/// one V-element vector, computes the V elements, and writes every Linear
/// store as one vector. The elements past the last whole chunk go through
/// the scalar body. Only launched when every Linear access starts on a
/// vector boundary (P.vec) and indices are 32-bit.
void emitVectorLoop(const KernelShape &s, std::string &os) {
  int32_t v = s.vector;
  std::string V = std::to_string(v);
  os += vectorTypeDecl();
  os += "__device__ __forceinline__ void cumo_vloop(const CumoParams &P) {\n";
  line(os, 2, "typedef int I;");
  line(os, 2, "const I stride = (I)gridDim.x * (I)blockDim.x;");
  line(os, 2, "const I first = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;");
  line(os, 2, "const I chunks = (I)P.n / " + V + ";");
  line(os, 2, "for (I c = first; c < chunks; c += 2 * stride) {");
  line(os, 4, "const bool has_1 = stride < chunks - c;");
  line(os, 4, "const I cs[2] = {c, has_1 ? c + stride : c};");
  // Loads of both chunks first, then the values, then the writes.
  auto vecName = [](size_t load, int chunk) {
    return "ld" + std::to_string(load) + "_v" + std::to_string(chunk);
  };
  // Element e of chunk c: the values' names of the scalar body, suffixed.
  auto suffixOf = [](int chunk, int32_t e) {
    return "_" + std::to_string(chunk) + "_" + std::to_string(e);
  };
  for (int chunk = 0; chunk < 2; ++chunk)
    for (size_t i = 0; i < s.loads.size(); ++i) {
      const LoadShape &l = s.loads[i];
      if (l.index.cls != AddressClass::Linear)
        continue;
      std::string t = cType(l.dtype).str();
      std::string ld = "ld" + std::to_string(i);
      line(os, 4, "const cumo_vec<" + t + ", " + V + "> " + vecName(i, chunk) +
                      " = *reinterpret_cast<const cumo_vec<" + t + ", " + V + "> *>(P." + ld + " + (I)P." +
                      ld + "_off + cs[" + std::to_string(chunk) + "] * " + V + ");");
    }
  for (int chunk = 0; chunk < 2; ++chunk)
    for (int32_t e = 0; e < v; ++e) {
      std::string suffix = suffixOf(chunk, e);
      ElementNames names(suffix.c_str());
      // A Linear load is the vector's element; a Scalar one reads as ever.
      for (uint32_t id = 0; id < s.values.size(); ++id)
        emitValue(s, id, os, 4, [&](uint32_t ref) -> std::string {
          if (s.loads[ref].index.cls != AddressClass::Linear)
            return "";
          return vecName(ref, chunk) + ".e[" + std::to_string(e) + "]";
        });
    }
  for (int chunk = 0; chunk < 2; ++chunk) {
    int indent = chunk ? 6 : 4;
    if (chunk)
      line(os, 4, "if (has_1) {");
    for (size_t i = 0; i < s.stores.size(); ++i) {
      const StoreShape &st = s.stores[i];
      if (st.index.cls == AddressClass::Scalar) {
        // Every element writes the same place: the last one's value, as
        // the scalar body's store of it.
        std::string last = suffixOf(chunk, v - 1);
        ElementNames names(last.c_str());
        emitStore(s, i, os, indent);
        continue;
      }
      std::string name = "st" + std::to_string(i);
      std::string t = cType(st.dtype).str();
      std::string guard = st.optional ? "if (P." + name + ") " : "";
      std::string init;
      for (int32_t e = 0; e < v; ++e) {
        std::string suffix = suffixOf(chunk, e);
        ElementNames names(suffix.c_str());
        init += (e ? ", " : "") + var(st.value);
      }
      line(os, indent, guard + "*reinterpret_cast<cumo_vec<" + t + ", " + V + "> *>(P." + name + " + (I)P." +
                           name + "_off + cs[" + std::to_string(chunk) + "] * " + V +
                           ") = cumo_vec<" + t + ", " + V + ">{{" + init + "}};");
    }
    if (chunk)
      line(os, 4, "}");
  }
  line(os, 2, "}");
  // The tail: elements past the last whole chunk, one a thread.
  line(os, 2, "for (I idx = chunks * " + V + " + first; idx < (I)P.n; idx += stride) {");
  emitElementBody(s, os, 4);
  line(os, 2, "}");
  os += "}\n\n";
}

void emitGridStrideEntry(const KernelShape &s, const std::string &entry,
                         std::string &os) {
  emitFoldValues(s, os);
  std::string accParams, accArgs;
  for (size_t i = 0; i < s.reduces.size(); ++i) {
    std::string n = std::to_string(i);
    accParams += ", " + cType(s.reduces[i].accumulator).str() + " &acc" + n;
    accArgs += ", acc" + n;
  }
  os += "template <class I>\n__device__ __forceinline__ void cumo_loop("
        "const CumoParams &P" + accParams + ") {\n";
  // Each thread takes the elements idx and idx + stride of a round
  // together: both elements' loads are issued before either's stores,
  // which the compiler may not reorder itself (it cannot tell that no
  // element of a fused kernel reads what another writes), so one memory
  // latency is paid for two elements. The elements a thread folds, and
  // their order, are those of a loop over one element at a time
  // (ReduceOrder::Grid). Only with 32-bit indices: the CG stencil kernel
  // fits 64 registers so, and with 64-bit ones spills 360 bytes a thread.
  line(os, 2, "const I stride = (I)gridDim.x * (I)blockDim.x;");
  line(os, 2, "const I first = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;");
  llvm::SmallVector<int32_t, 4> all;
  for (int32_t d = 0; d < s.rank; ++d)
    all.push_back(d);
  line(os, 2, "if constexpr (sizeof(I) == 4) {");
  static_assert(kElementsPerThread == 2, "the loop below takes two elements");
  line(os, 2, "for (I idx = first; idx < (I)P.n; idx += 2 * stride) {");
  line(os, 4, "const bool has_1 = stride < (I)P.n - idx;");
  line(os, 4, "// Past the end, the second element is the first again: its "
              "loads stay in bounds and its writes are skipped.");
  line(os, 4, "const I idx_1 = has_1 ? idx + stride : idx;");
  for (const char *suffix : {"", "_1"}) {
    ElementNames names(suffix);
    emitDomainCoords(s, os, 4);
    emitUnravel(os, 4, flatIndex(), all);
    emitElementValues(s, os, 4, nullptr);
  }
  emitElementWrites(s, os, 4);
  line(os, 4, "if (has_1) {");
  {
    ElementNames names("_1");
    emitElementWrites(s, os, 6);
  }
  line(os, 4, "}");
  line(os, 2, "}");
  line(os, 2, "} else {");
  line(os, 2, "for (I idx = first; idx < (I)P.n; idx += stride) {");
  emitDomainCoords(s, os, 4);
  emitUnravel(os, 4, "idx", all);
  emitElementBody(s, os, 4);
  line(os, 2, "}");
  line(os, 2, "}");
  os += "}\n\n";
  if (s.vector)
    emitVectorLoop(s, os);

  emitEntryHead(entry, os);
  emitFolds(s, os);
  for (size_t i = 0; i < s.reduces.size(); ++i) {
    const ReduceShape &r = s.reduces[i];
    line(os, 2, cType(r.accumulator).str() + " acc" + std::to_string(i) +
                    " = " + reduceIdentityExpr(r.op, r.accumulator) + ";");
  }
  if (s.vector) {
    line(os, 2, "if (P.vec && P.narrow) {");
    line(os, 4, "cumo_vloop(P);");
    line(os, 4, "return;");
    line(os, 2, "}");
  }
  emitIndexDispatch("cumo_loop", "P" + accArgs, os);
  if (s.strategy == ReduceStrategy::Grid)
    emitGridReduceTail(s, os);
  os += "}\n";
}

const char *kindTag(Kernel::Kind k) {
  switch (k) {
  case Kernel::Kind::Elementwise: return "ew";
  case Kernel::Kind::AxisReduce: return "red";
  case Kernel::Kind::Scatter: return "scat";
  case Kernel::Kind::Opaque: return "op";
  case Kernel::Kind::Rowwise: return "row";
  }
  llvm_unreachable("unknown kernel kind");
}

std::string entryName(const KernelShape &s, uint64_t key) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016" PRIx64, key);
  return std::string("cumo_") + kindTag(s.kind) + "_" + hex;
}

uint32_t gridFor(int64_t work, uint32_t perBlock, const DeviceModel &model,
                 uint32_t blocksPerSm = kMaxBlocksPerSm) {
  if (work <= 0)
    return 0;
  int64_t cap = int64_t(std::max(model.smCount, 1)) * blocksPerSm;
  int64_t blocks = (work + perBlock - 1) / perBlock;
  return uint32_t(std::min(blocks, cap));
}

} // namespace

} // namespace cudagen

uint64_t kernelKey(const Kernel &k, const DeviceModel &model) {
  return cudagen::hashShape(cudagen::analyzeKernel(k, model));
}

KernelSource generateCuda(const Kernel &k, const DeviceModel &model) {
  using namespace cudagen;
  KernelShape s = analyzeKernel(k, model);
  KernelSource out;
  out.entry = entryName(s, hashShape(s));
  std::string &os = out.source;
  os += "// Generated by Cumo: one fused kernel. Structure only: every extent,\n"
        "// offset, stride, scalar and pointer is read from CumoParams.\n";
  os += "#include \"cumo_portable_ops.h\"\n\n";
  os += devicePreamble();
  emitParamStruct(s, os);
  if (s.kind == Kernel::Kind::Opaque)
    emitOpaqueEntry(s, out.entry, os);
  else if (s.kind == Kernel::Kind::Rowwise)
    emitRowwiseEntry(s, out.entry, os);
  else if (s.kind == Kernel::Kind::AxisReduce)
    emitAxisReduceEntry(s, out.entry, os);
  else
    emitGridStrideEntry(s, out.entry, os);
  return out;
}

LaunchConfig launchConfig(const Kernel &k, const DeviceModel &model) {
  cudagen::ReduceStrategy strategy = cudagen::ReduceStrategy::None;
  if (k.kind == Kernel::Kind::AxisReduce)
    strategy = cudagen::analyzeKernel(k, model).strategy;
  return cudagen::launchFor(k, strategy, model);
}

LaunchConfig cudagen::launchFor(const Kernel &k, ReduceStrategy strategy,
                                const DeviceModel &model) {
  using namespace cudagen;
  LaunchConfig c;
  c.block = kBlockSize;
  switch (k.kind) {
  case Kernel::Kind::Opaque:
    return opaqueLaunch(k, model);
  case Kernel::Kind::Rowwise:
    return rowwiseLaunch(k, model);
  case Kernel::Kind::Elementwise:
  case Kernel::Kind::Scatter:
    c.grid = gridFor(k.domainSize(), kBlockSize * kElementsPerThread, model,
                     k.reduces.empty() ? kMaxStreamingBlocksPerSm : kMaxBlocksPerSm);
    // A full reduction of nothing still writes its identity, and a fold
    // still stores its result.
    if ((!k.reduces.empty() || !k.folds.empty()) && c.grid == 0)
      c.grid = 1;
    // Deferred partials have a slot a block.
    for (const Reduce &r : k.reduces)
      if (r.partials >= 0)
        c.grid = uint32_t(std::min<int64_t>(c.grid, r.slots));
    return c;
  case Kernel::Kind::AxisReduce:
    break;
  }
  int64_t outputs = k.reduceOutputs();
  switch (strategy) {
  case ReduceStrategy::Thread:
    c.grid = gridFor(outputs, kBlockSize, model);
    break;
  case ReduceStrategy::Warp:
    c.grid = gridFor(outputs, kBlockSize / kWarpSize, model);
    break;
  default:
    c.grid = gridFor(outputs, 1, model);
    break;
  }
  return c;
}

size_t scratchBytes(const Kernel &k, const LaunchConfig &launch) {
  using namespace cudagen;
  if (isSmallProduct(k))
    return gemvScratchBytes(k, launch);
  if (k.kind != Kernel::Kind::Elementwise || k.reduces.empty())
    return 0;
  llvm::SmallVector<DType, 2> accs;
  for (const Reduce &r : k.reduces)
    accs.push_back(r.accumulator);
  size_t bytes = kScratchCounterBytes +
                 k.reduces.size() * size_t(launch.grid) * partialBytes(accs);
  return (bytes + 15) / 16 * 16;
}

llvm::ArrayRef<const char *> nvrtcOptions() {
  // IEEE division and square root and no flush to zero are NVRTC's
  // defaults; they are spelled out because fusion must not change an
  // answer. No FMA contraction, for the same reason.
  static const char *const options[] = {
      "--std=c++17",     "--fmad=false",     "--prec-div=true",
      "--prec-sqrt=true", "--ftz=false",     "-default-device",
  };
  return options;
}

std::string_view portableOpsHeader() {
  return std::string_view(kPortableOpsHeaderText, kPortableOpsHeaderTextSize);
}

} // namespace cumo
