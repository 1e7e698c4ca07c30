// CUDA kernels of row programs (Kernel::Kind::Rowwise, fusion/row_groups.h):
// a warp per short row, a block per long one (fusion/row_program.h decides,
// and the CPU executor folds in the same order). Per row:
//
//   - the loads that vary along the row and between rows are read once
//     into registers where the row fits (the "cache"),
//   - values that are the same along the row (per-row loads, parameters,
//     and anything computed from folds) are computed once per row, as soon
//     as the folds they read are known,
//   - each fold (RowReduce) is a pass over the lane's elements computing
//     just what it reads, then a warp (shuffles) or block (shared memory)
//     tree, handed to every lane of the row,
//   - a last pass computes and writes the stores.
//
// Element j of a row is taken by lane (j / G) % L, which folds its groups in
// order: the order the CPU reference folds in.
#include "fusion/cuda_kernel_shape.h"
#include "fusion/cuda_row_codegen.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <vector>

namespace cumo::cudagen {

namespace {

/// Rows a block takes in the warp-per-row layout (launchRows).
constexpr uint32_t kRowsPerWarpBlock = kRowsBlock / kWarpSize;

/// Where each value of the program is computed.
struct ValuePlan {
  /// Differs from element to element of a row (computed in the passes).
  std::vector<bool> varies;
  /// For the others: -1 to compute at the row's start, or the ordinal of
  /// the last fold they read (computed right after it).
  std::vector<int> level;
  /// The RowReduce values, in order.
  std::vector<uint32_t> folds;
  /// The scales a varying value quantizes by (quantizesByRowDivisor): each
  /// builds its cumo_ops::divisor<float> once a row, beside it
  /// (emitRowValues).
  std::vector<bool> rowDivisor;
};

bool quantizesByRowDivisor(const KernelShape &s, const ValuePlan &p, uint32_t id);

ValuePlan planValues(const KernelShape &s) {
  ValuePlan p;
  size_t count = s.values.size();
  p.varies.assign(count, false);
  p.level.assign(count, -1);
  for (uint32_t id = 0; id < count; ++id) {
    const Value &v = s.values[id];
    switch (v.kind) {
    case Value::Kind::Load:
      p.varies[id] = s.loads[v.ref].row != RowRead::PerRow;
      break;
    case Value::Kind::Param:
      break;
    case Value::Kind::Generator:
    case Value::Kind::Select:
    case Value::Kind::Result: // only in an opaque kernel's epilogue
      p.varies[id] = true;
      break;
    case Value::Kind::RowReduce:
      p.level[id] = int(p.folds.size());
      p.folds.push_back(id);
      break;
    case Value::Kind::Op:
    case Value::Kind::Gather:
      for (uint32_t a : v.args) {
        p.varies[id] = p.varies[id] || p.varies[a];
        p.level[id] = std::max(p.level[id], p.level[a]);
      }
      break;
    }
    // A value inside a slice box exists only where the box holds.
    if (v.basis != 0)
      p.varies[id] = true;
  }
  p.rowDivisor.assign(count, false);
  for (uint32_t id = 0; id < count; ++id)
    if (quantizesByRowDivisor(s, p, id))
      p.rowDivisor[s.values[id].args[1]] = true;
  return p;
}

/// The varying values `roots` need, in value order. A value `leaves` marks
/// is taken as it is, not computed from its arguments (a kept value).
std::vector<uint32_t> varyingCone(const KernelShape &s, const ValuePlan &p,
                                  llvm::ArrayRef<uint32_t> roots,
                                  const std::vector<bool> *leaves = nullptr) {
  std::vector<bool> need(s.values.size(), false);
  std::vector<uint32_t> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    uint32_t id = stack.back();
    stack.pop_back();
    if (!p.varies[id] || need[id])
      continue;
    need[id] = true;
    if (leaves && (*leaves)[id])
      continue;
    for (uint32_t a : s.values[id].args)
      stack.push_back(a);
  }
  std::vector<uint32_t> out;
  for (uint32_t id = 0; id < s.values.size(); ++id)
    if (need[id])
      out.push_back(id);
  return out;
}

std::string lastCoord(const KernelShape &s) { return "c0_" + std::to_string(s.rank - 1); }

bool cachesLoads(const KernelShape &s) {
  return s.rowCachedGroups > 0 &&
         llvm::any_of(s.loads, [](const LoadShape &l) { return l.row == RowRead::Cached; });
}

std::string cacheName(uint32_t load) { return "rc" + std::to_string(load); }

/// The loop over the lane's elements of the row, with `body` run at each:
/// in it, j is the element's position, and the domain coordinates and
/// the flat index `idx` are the element's. Over the cached groups when the
/// row is held in registers (k, e index the cache), else strided.
///
/// `wholeGroups`: the caller has tested that the row length is a multiple
/// of G, so a group that starts in the row ends in it and its elements need
/// no test of their own.
void emitRowLoop(const KernelShape &s, const std::string &body, std::string &os,
                 const std::string &beforeGroup = "", const std::string &afterGroup = "",
                 bool wholeGroups = false) {
  std::string elementTest = wholeGroups ? "" : "        if (j >= n) break;\n";
  std::string element = "        const I " + lastCoord(s) + " = j;\n" +
                        "        const I idx = row * n + j;\n";
  if (s.bases.size() > 1) {
    std::string boxes;
    emitBoxes(s, boxes, 8);
    element += boxes;
  }
  if (s.rowCachedGroups > 0) {
    os += "    #pragma unroll\n    for (int k = 0; k < CACHED; ++k) {\n";
    os += "      const I g = lane + (I)k * L;\n      if (g * G >= n) break;\n";
    os += beforeGroup;
    os += "      #pragma unroll\n      for (int e = 0; e < G; ++e) {\n";
    os += "        const I j = g * G + (I)e;\n" + elementTest;
  } else {
    os += "    for (I g = lane; g * G < n; g += L) {\n";
    os += beforeGroup;
    os += "      for (int e = 0; e < G; ++e) {\n";
    os += "        const I j = g * G + (I)e;\n" + elementTest;
  }
  os += element + body;
  os += "      }\n" + afterGroup + "    }\n";
}

/// Whether store `st` writes a group of G elements as one vector where its
/// rows start on a group boundary: an element's own (not the row's, not in
/// a box), contiguous over the domain.
bool storesByVector(const StoreShape &st) {
  return st.index.cls == AddressClass::Linear && st.index.basis == 0 && st.zeroAxes.empty();
}

/// Whether store `st` writes one element a row (the last axis among its
/// zero axes) of a value the same along the row: the row's scale of
/// quantize_symmetric, a kept-dims mean. It is written once, before the
/// pass, by the row's first lane, rather than tested at every element.
bool storesOncePerRow(const KernelShape &s, const ValuePlan &p, const StoreShape &st) {
  return !p.varies[st.value] && st.index.basis == 0 &&
         std::find(st.zeroAxes.begin(), st.zeroAxes.end(), s.rank - 1) != st.zeroAxes.end();
}

std::string alongVectorName(uint32_t load) { return "al" + std::to_string(load); }

/// Whether load `l`, the same in every row (gamma, beta), may be read a
/// group of G at a time where the store pass writes by vectors: addressed
/// by the domain's coordinates. Where its stride along the row is 1 and
/// the row's first element starts a group (tested at run time), the pass
/// loads each group's elements as one vector. Measured on a lent H100
/// (2026-12-06 17:18 UTC, bench/kernel_times, the edit as a variant):
/// written-out layer_norm 4-8% faster in BFloat and SFloat (BFloat
/// 32768x1024 110.01 -> 101.40 us, SFloat 104.84 -> 100.41), rms_norm
/// 2.5-5% in BFloat (70.06 -> 68.33), level in SFloat.
bool loadsAlongByVector(const KernelShape &s, const LoadShape &l) {
  return l.row == RowRead::Along && l.index.cls == AddressClass::General &&
         l.index.basis == 0 && l.index.rank == s.rank;
}

/// The vector branch's test and declarations for the along-row loads
/// `loads` (indices into s.loads) read a vector a group.
void alongVectorLoads(const KernelShape &s, llvm::ArrayRef<uint32_t> loads, std::string &aligned,
                      std::string &before) {
  for (uint32_t i : loads) {
    std::string name = "ld" + std::to_string(i);
    std::string rowStart = indexParam(name + "_off");
    for (int32_t d = 0; d + 1 < s.rank; ++d)
      rowStart += " + c0_" + std::to_string(d) + " * " +
                  indexParam(name + "_s[" + std::to_string(d) + "]");
    aligned += " && " + indexParam(name + "_s[" + std::to_string(s.rank - 1) + "]") +
               " == 1 && (" + rowStart + ") % G == 0";
    std::string vt = "cumo_vec<" + cType(s.loads[i].dtype).str() + ", G>";
    before += "      const " + vt + " " + alongVectorName(i) + " = *reinterpret_cast<const " + vt +
              " *>(P." + name + " + (" + rowStart + " + g * G));\n";
  }
}

/// The last pass: every store of the row. Where the rows of every
/// contiguous store start on a group boundary (the row length and each
/// offset a multiple of G), each such store writes a group at a time from
/// a vector the group's elements fill; the others, and every store
/// otherwise, an element at a time.
///
/// Why: quantize_symmetric's Int8 rows, written a byte a lane at a stride
/// of a group, ran at 27-42% of a copy's bandwidth (H100, 2026-12-05), and
/// a written-out row op stores each intermediate Ruby still holds so.
void emitStorePass(const KernelShape &s, const ValuePlan &p, const std::string &values,
                   const std::string &vectorValues, llvm::ArrayRef<uint32_t> alongLoads,
                   std::string &os) {
  std::string scalar = values, vector = vectorValues, aligned = "n % G == 0", before, after,
              once;
  bool any = false;
  for (size_t i = 0; i < s.stores.size(); ++i) {
    const StoreShape &st = s.stores[i];
    if (storesOncePerRow(s, p, st)) {
      emitStore(s, i, once, 6);
      continue;
    }
    emitStore(s, i, scalar, 8);
    if (!storesByVector(st)) {
      emitStore(s, i, vector, 8);
      continue;
    }
    any = true;
    std::string name = "st" + std::to_string(i), sv = "sv" + std::to_string(i);
    std::string vt = "cumo_vec<" + cType(st.dtype).str() + ", G>";
    aligned += " && (I)P." + name + "_off % G == 0";
    before += "      " + vt + " " + sv + ";\n";
    vector += "        " + sv + ".e[e] = " + valueName(st.value) + ";\n";
    after += std::string("      ") + (st.optional ? "if (P." + name + ") " : "") +
             "*reinterpret_cast<" + vt + " *>(P." + name + " + ((I)P." + name +
             "_off + row * n + g * G)) = " + sv + ";\n";
  }
  if (!once.empty())
    os += "    if (lane == 0) {\n" + once + "    }\n";
  if (!any) {
    emitRowLoop(s, scalar, os);
    return;
  }
  alongVectorLoads(s, alongLoads, aligned, before);
  os += "    if (" + aligned + ") {\n";
  emitRowLoop(s, vector, os, before, after, /*wholeGroups=*/true);
  os += "    } else {\n";
  emitRowLoop(s, scalar, os);
  os += "    }\n";
}

std::string keptName(uint32_t id) { return "kv" + std::to_string(id); }

std::string rowDivisorName(uint32_t id) { return valueName(id) + "_q"; }

/// Whether value `id` is a float quantize (quantize_symmetric's quotient)
/// by a scale that is the same along the row: its division then takes the
/// scale's divisor, refined once a row (emitRowValues), where the
/// compiler had computed a reciprocal for each element (its inline
/// assembly is not merged).
///
/// Other divisions by a row's value stay as they are: written-out
/// softmax, layer_norm and rms_norm through the divisor took the same time
/// or up to 3% longer (H100, 2026-12-08, bench/kernel_times, variant set
/// row_divisor of c0ec376: BFloat layer_norm 32768 x 1024 75.5 us against
/// 73.2, eight more registers). quantize_symmetric's own divisor made no
/// difference either (85.6 us with it, 85.0 with a division an element)
/// and stays.
bool quantizesByRowDivisor(const KernelShape &s, const ValuePlan &p, uint32_t id) {
  const Value &v = s.values[id];
  return v.kind == Value::Kind::Op && v.op == OpKind::Quantize && v.dtype == DType::SFloat &&
         v.basis == 0 && p.varies[id] && !p.varies[v.args[1]];
}

/// Declares the varying values in `cone` (loads held in registers read
/// from there). A value `kept` marks is read from its registers where
/// `reads`, else computed and written there for the passes after.
std::string coneValues(const KernelShape &s, const ValuePlan &p, llvm::ArrayRef<uint32_t> cone,
                       bool cached, const std::vector<bool> &kept = {},
                       const std::vector<bool> &reads = {},
                       llvm::ArrayRef<uint32_t> alongVectors = {}) {
  std::string body;
  // Where a load is read from registers: the row's cache, or the group's
  // vector of an along-row operand; empty, from memory.
  auto fromRegisters = [&](uint32_t load) -> std::string {
    if (llvm::is_contained(alongVectors, load))
      return alongVectorName(load) + ".e[e]";
    if (cached && s.loads[load].row == RowRead::Cached)
      return cacheName(load) + "[k * G + e]";
    return "";
  };
  for (uint32_t id : cone) {
    const Value &v = s.values[id];
    if (id < reads.size() && reads[id]) {
      body += "        const " + cType(v.dtype).str() + " " + valueName(id) + " = " +
              keptName(id) + "[k * G + e];\n";
      continue;
    }
    if (quantizesByRowDivisor(s, p, id))
      body += "        const float " + valueName(id) + " = cumo_ops::quantize_symmetric_by(" +
              valueName(v.args[0]) + ", " + valueName(v.args[1]) + ", " +
              rowDivisorName(v.args[1]) + ");\n";
    else
      emitValue(s, id, body, 8, fromRegisters);
    if (id < kept.size() && kept[id])
      body += "        " + keptName(id) + "[k * G + e] = " + valueName(id) + ";\n";
  }
  return body;
}

/// The passes over a held row (the folds', then the stores') and what each
/// computes. A value a pass computes that a later pass needs again (the
/// centred x of layer_norm, softmax's exp(x - max)) is kept in registers
/// beside the row's cache rather than computed again from it: in BFloat
/// every op widens, computes and rounds, and softmax's exp ran twice an
/// element. Only the frontier is kept (what the later pass reads directly),
/// at most kMaxKept arrays a row, each as many elements as the cache.
struct RowPasses {
  std::vector<std::vector<uint32_t>> cones; ///< per pass, the values it declares
  std::vector<bool> kept;                   ///< values held for later passes
  std::vector<std::vector<bool>> reads;     ///< per pass, the kept values it reads
};

constexpr size_t kMaxKept = 2;

/// Whether computing `id` again from the row's cache is worth the
/// registers that keeping it takes: somewhere in its varying cone an op of
/// a sixteen-bit class computes (widens, computes and rounds: the row
/// program is then bound by its instructions). Measured on a lent H100
/// (2026-12-06 17:03 UTC, bench/kernel_times, generated kernels as
/// variants), us: BFloat written-out softmax 127.9 -> 101.1 at 32768x1024
/// and 18.9 -> 15.2 at 4096x768 with its exp(x - max) kept; BFloat
/// layer_norm 113.3 -> 110.1 and 16.6 -> 16.1 with its x - mean kept,
/// level at 4096x4096. SFloat softmax, bound by memory, lost with its exp
/// kept (97.3 -> 101.9 at 32768x1024), and SFloat layer_norm's x - mean
/// had cost ptxas ten registers for no instruction saved: a wide class
/// keeps nothing.
bool costlyAgain(const KernelShape &s, const ValuePlan &p, uint32_t id) {
  std::vector<uint32_t> stack{id};
  std::vector<bool> seen(s.values.size(), false);
  while (!stack.empty()) {
    uint32_t at = stack.back();
    stack.pop_back();
    if (seen[at] || !p.varies[at])
      continue;
    seen[at] = true;
    const Value &v = s.values[at];
    if (v.kind != Value::Kind::Op)
      continue;
    if (isNarrowFloat(v.dtype) && v.op != OpKind::Copy)
      return true;
    for (uint32_t a : v.args)
      stack.push_back(a);
  }
  return false;
}

RowPasses planPasses(const KernelShape &s, const ValuePlan &p, bool cached,
                     const std::vector<std::vector<uint32_t>> &roots) {
  size_t count = s.values.size();
  RowPasses r;
  r.kept.assign(count, false);
  std::vector<bool> before(count, false); // computed by an earlier pass
  size_t kept = 0;
  for (size_t pass = 0; pass < roots.size(); ++pass) {
    std::vector<bool> reads(count, false);
    if (cached && pass > 0) {
      // What the pass would read of the earlier passes' values.
      for (uint32_t id : varyingCone(s, p, roots[pass], &before)) {
        const Value &v = s.values[id];
        // Not a load (the cache holds it) nor a load's cast (one
        // instruction to widen again, where keeping it could double the
        // registers: quantize_symmetric's float of a BFloat x).
        bool castOfLoad = v.kind == Value::Kind::Op && v.op == OpKind::Cast &&
                          s.values[v.args[0]].kind == Value::Kind::Load;
        bool worth = before[id] && v.kind != Value::Kind::Load && !castOfLoad && v.basis == 0 &&
                     costlyAgain(s, p, id);
        if (!worth || (!r.kept[id] && kept == kMaxKept))
          continue;
        if (!r.kept[id])
          ++kept;
        r.kept[id] = reads[id] = true;
      }
    }
    std::vector<uint32_t> cone = varyingCone(s, p, roots[pass], &reads);
    for (uint32_t id : cone)
      before[id] = true;
    r.cones.push_back(std::move(cone));
    r.reads.push_back(std::move(reads));
  }
  return r;
}

void emitRowValues(const KernelShape &s, const ValuePlan &p, int level, std::string &os) {
  for (uint32_t id = 0; id < s.values.size(); ++id) {
    if (p.varies[id] || p.level[id] != level)
      continue;
    // A fold's value is emitted by emitFold, just before.
    if (s.values[id].kind != Value::Kind::RowReduce)
      emitValue(s, id, os, 4);
    if (p.rowDivisor[id])
      os += "    const cumo_ops::divisor<float> " + rowDivisorName(id) + "(" + valueName(id) +
            ");\n";
  }
}

/// Whether every load held in registers is Linear (contiguous over the
/// domain, so along each row): then a row whose loads all start on a group
/// boundary is read a group, one vector, at a time.
bool cacheFillsByVector(const KernelShape &s) {
  bool any = false;
  for (const LoadShape &l : s.loads)
    if (l.row == RowRead::Cached) {
      if (l.index.cls != AddressClass::Linear)
        return false;
      any = true;
    }
  return any;
}

/// Threads an SM of a row program that reads ahead: one wave of them, each
/// block looping over its rows. Fewer than the row ops' kernels take
/// (kReadAheadThreadsPerSm, 1024, 64 registers a thread): held to 64,
/// ptxas sm_90 spilled 56 bytes a thread of written-out BFloat layer_norm
/// of 1024-element rows and 24 of softmax; at 768 (85 registers) they
/// take 80 and 79 and spill nothing, and quantize_symmetric 64.
constexpr int64_t kAheadThreadsPerSm = 768;

/// Blocks of `lanes` threads an SM in that wave (at least one).
uint32_t aheadBlocksPerSm(int64_t lanes) {
  return uint32_t(std::max<int64_t>(1, kAheadThreadsPerSm / lanes));
}

std::string aheadName(uint32_t load) { return "nx" + std::to_string(load); }

/// The test that every held load's rows start on a group boundary (the
/// row length and each offset a multiple of G; buffers are 256-byte
/// aligned), so that a group is read as one vector.
std::string heldRowsAligned(const KernelShape &s) {
  std::string aligned = "n % G == 0";
  for (uint32_t i = 0; i < s.loads.size(); ++i)
    if (s.loads[i].row == RowRead::Cached)
      aligned += " && (I)P.ld" + std::to_string(i) + "_off % G == 0";
  return aligned;
}

std::string heldGroupType(const KernelShape &s, uint32_t load) {
  return "cumo_vec<" + cType(s.loads[load].dtype).str() + ", G>";
}

/// Group g of row `row` of held load `load`, read as one vector.
std::string heldGroupRead(const KernelShape &s, uint32_t load, const std::string &row) {
  std::string ld = "P.ld" + std::to_string(load);
  return "*reinterpret_cast<const " + heldGroupType(s, load) + " *>(" + ld + " + ((I)" + ld +
         "_off + " + row + " * n + g * G))";
}

/// Declares the next row's registers and fetch(r), which reads row r's
/// groups of every held load into them, and reads the block's first row
/// where the rows allow vectors (`ahead`: heldRowsAligned).
void emitReadAhead(const KernelShape &s, std::string &os) {
  std::string fetch;
  for (uint32_t i = 0; i < s.loads.size(); ++i) {
    if (s.loads[i].row != RowRead::Cached)
      continue;
    os += "  " + heldGroupType(s, i) + " " + aheadName(i) + "[CACHED];\n";
    fetch += "      " + aheadName(i) + "[k] = " + heldGroupRead(s, i, "r") + ";\n";
  }
  os += "  const bool ahead = " + heldRowsAligned(s) + ";\n";
  os += "  auto fetch = [&](I r) {\n    #pragma unroll\n    for (int k = 0; k < CACHED; ++k) {\n";
  os += "      const I g = lane + (I)k * L;\n      if (g * G >= n) break;\n";
  os += fetch + "    }\n  };\n";
  os += "  if (ahead && first < rows) fetch(first);\n";
}

/// Reads the cached loads of the row into registers: by groups of G as one
/// vector each where every cached load's rows start on a group boundary
/// (the row length and each offset a multiple of G; buffers are 256-byte
/// aligned), else element by element.
void emitCacheFill(const KernelShape &s, std::string &os) {
  for (uint32_t i = 0; i < s.loads.size(); ++i)
    if (s.loads[i].row == RowRead::Cached)
      os += "    " + cType(s.loads[i].dtype).str() + " " + cacheName(i) + "[CACHED * G];\n";
  bool byVector = cacheFillsByVector(s);
  if (s.rowReadsAhead) {
    // The row fetched ahead (emitReadAhead), then the block's next one.
    os += "    if (ahead) {\n";
    os += "      #pragma unroll\n      for (int k = 0; k < CACHED; ++k) {\n";
    os += "        const I g = lane + (I)k * L;\n        if (g * G >= n) break;\n";
    for (uint32_t i = 0; i < s.loads.size(); ++i)
      if (s.loads[i].row == RowRead::Cached)
        os += "        #pragma unroll\n        for (int e = 0; e < G; ++e) " + cacheName(i) +
              "[k * G + e] = " + aheadName(i) + "[k].e[e];\n";
    os += "      }\n      if (row + stride < rows) fetch(row + stride);\n";
    os += "    } else {\n";
  } else if (byVector) {
    std::string fill;
    for (uint32_t i = 0; i < s.loads.size(); ++i) {
      if (s.loads[i].row != RowRead::Cached)
        continue;
      fill += "        {\n          const " + heldGroupType(s, i) +
              " w = " + heldGroupRead(s, i, "row") + ";\n";
      fill += "          #pragma unroll\n          for (int e = 0; e < G; ++e) " + cacheName(i) +
              "[k * G + e] = w.e[e];\n        }\n";
    }
    os += "    if (" + heldRowsAligned(s) + ") {\n";
    os += "      #pragma unroll\n      for (int k = 0; k < CACHED; ++k) {\n";
    os += "        const I g = lane + (I)k * L;\n        if (g * G >= n) break;\n";
    os += fill;
    os += "      }\n    } else {\n";
  }
  std::string body;
  for (uint32_t i = 0; i < s.loads.size(); ++i) {
    if (s.loads[i].row != RowRead::Cached)
      continue;
    for (uint32_t id = 0; id < s.values.size(); ++id)
      if (s.values[id].kind == Value::Kind::Load && s.values[id].ref == i) {
        emitValue(s, id, body, 8);
        body += "        " + cacheName(i) + "[k * G + e] = " + valueName(id) + ";\n";
        break;
      }
  }
  emitRowLoop(s, body, os);
  if (byVector || s.rowReadsAhead)
    os += "    }\n";
}

/// The fold of RowReduce `id` over the row, handed to every lane; `values`
/// declares what its pass computes.
void emitFold(const KernelShape &s, uint32_t id, const std::string &values, std::string &os) {
  const Value &v = s.values[id];
  std::string a = cType(v.accumulator).str(), acc = "acc" + std::to_string(id);
  std::string identity = reduceIdentityExpr(v.op, v.accumulator);
  os += "    " + a + " " + acc + " = " + identity + ";\n";
  uint32_t arg = v.args[0];
  std::string body = values;
  body += "        " + acc + " = " +
          reduceStepExpr(v.op, acc, castExpr(s.values[arg].dtype, v.accumulator, valueName(arg))) +
          ";\n";
  emitRowLoop(s, body, os);
  std::string functor = reduceFunctor(v.op).str();
  if (s.rowWarp) {
    os += "    " + acc + " = cumo_k::shfl_first(cumo_k::warp_reduce(" + acc + ", " + functor +
          "));\n";
  } else {
    // One barrier (block_allreduce): each fold has its own slots, in two
    // sets that alternate from row to row.
    os += "    " + acc + " = cumo_k::block_allreduce(" + acc + ", " + functor + ", " + identity +
          ", red" + std::to_string(id) + "[parity]);\n";
  }
  std::string total = foldFinishExpr(v.op, v.accumulator, acc, "n");
  os += "    const " + cType(v.dtype).str() + " " + valueName(id) + " = " +
        castExpr(v.accumulator, v.dtype, total) + ";\n";
}

} // namespace

void emitRowwiseEntry(const KernelShape &s, const std::string &entry, std::string &os) {
  ValuePlan p = planValues(s);
  bool cached = cachesLoads(s);
  int32_t rank = s.rank;
  if ((cached && cacheFillsByVector(s)) ||
      std::any_of(s.stores.begin(), s.stores.end(), storesByVector))
    os += vectorTypeDecl();
  os += "template <class I>\n__device__ __forceinline__ void cumo_loop(const CumoParams &P) {\n";
  os += "  constexpr int G = " + std::to_string(s.rowGroup) + ";\n";
  if (s.rowCachedGroups > 0)
    os += "  constexpr int CACHED = " + std::to_string(s.rowCachedGroups) + ";\n";
  os += "  const I n = (I)P.ext[" + std::to_string(rank - 1) + "];\n";
  os += "  const I rows = n ? (I)P.n / n : (I)0;\n";
  if (s.rowWarp) {
    std::string per = std::to_string(kRowsPerWarpBlock);
    os += "  const I L = 32, lane = (I)(threadIdx.x & 31u);\n";
    os += "  const I first = (I)blockIdx.x * " + per + " + (I)(threadIdx.x >> 5);\n";
    os += "  const I stride = (I)gridDim.x * " + per + ";\n";
  } else {
    os += "  const I L = (I)blockDim.x, lane = (I)threadIdx.x;\n";
    os += "  const I first = (I)blockIdx.x, stride = (I)gridDim.x;\n";
    for (uint32_t id : p.folds)
      os += "  __shared__ " + cType(s.values[id].accumulator).str() + " red" + std::to_string(id) +
            "[2][32];\n";
    os += "  unsigned int parity = 0;\n";
  }
  if (s.rowReadsAhead)
    emitReadAhead(s, os);
  os += s.rowWarp ? "  for (I row = first; row < rows; row += stride) {\n"
                  : "  for (I row = first; row < rows; row += stride, parity ^= 1u) {\n";
  // The row's coordinates, and the row's first element for what is the
  // same along it.
  llvm::SmallVector<int32_t, 4> rowAxes;
  std::string decl = "    I ";
  for (int32_t d = 0; d + 1 < rank; ++d) {
    rowAxes.push_back(d);
    decl += (d ? ", " : "") + std::string("c0_") + std::to_string(d) + " = 0";
  }
  os += decl + ";\n";
  emitUnravel(os, 4, "row", rowAxes);
  os += "    const I " + lastCoord(s) + " = 0;\n";
  os += "    const I idx = row * n;\n";
  emitBoxes(s, os, 4);
  emitRowValues(s, p, -1, os);
  if (cached)
    emitCacheFill(s, os);
  std::vector<std::vector<uint32_t>> roots;
  for (uint32_t id : p.folds)
    roots.push_back({s.values[id].args[0]});
  roots.emplace_back();
  for (const StoreShape &st : s.stores)
    roots.back().push_back(st.value);
  RowPasses passes = planPasses(s, p, cached, roots);
  for (uint32_t id = 0; id < s.values.size(); ++id)
    if (passes.kept[id])
      os += "    " + cType(s.values[id].dtype).str() + " " + keptName(id) + "[CACHED * G];\n";
  auto values = [&](size_t pass) {
    return coneValues(s, p, passes.cones[pass], cached, passes.kept, passes.reads[pass]);
  };
  for (size_t f = 0; f < p.folds.size(); ++f) {
    emitFold(s, p.folds[f], values(f), os);
    emitRowValues(s, p, int(f), os);
  }
  // The store pass's along-row loads, read a vector a group where it
  // stores by vectors.
  size_t last = p.folds.size();
  llvm::SmallVector<uint32_t, 2> alongLoads;
  for (uint32_t id : passes.cones[last]) {
    const Value &v = s.values[id];
    if (v.kind == Value::Kind::Load && loadsAlongByVector(s, s.loads[v.ref]))
      alongLoads.push_back(v.ref);
  }
  emitStorePass(s, p, values(last),
                coneValues(s, p, passes.cones[last], cached, passes.kept, passes.reads[last],
                           alongLoads),
                alongLoads, os);
  os += "  }\n}\n\n";

  uint32_t block = s.rowWarp ? kRowsBlock : uint32_t(s.rowLanes);
  // Reading ahead, the launch is one wave (rowwiseLaunch): bounds that
  // keep every block of it resident at once.
  emitEntryHead(entry, os, block, s.rowReadsAhead ? aheadBlocksPerSm(s.rowLanes) : 0);
  emitIndexDispatch("cumo_loop", "P", os);
  os += "}\n";
}

LaunchConfig rowwiseLaunch(const Kernel &k, const DeviceModel &model) {
  int64_t n = k.domain.back();
  int64_t rows = n ? k.domainSize() / n : 0;
  cumo::RowProgram p = rowProgram(k);
  LaunchConfig c = launchRows(p.layout, rows, model);
  // Reading ahead: one wave of blocks, each looping over its rows, as the
  // BFloat row ops' kernels launch.
  if (rowProgramReadsAhead(k, p))
    c.grid = uint32_t(std::min<int64_t>(
        rows, std::max(model.smCount, 1) * int64_t(aheadBlocksPerSm(p.layout.lanes))));
  return c;
}

} // namespace cumo::cudagen
