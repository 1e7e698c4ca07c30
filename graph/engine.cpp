#include "graph/engine.h"

#include "core/env_flag.h"
#include "core/error.h"
#include "core/host_hooks.h"
#include "core/pending.h"
#include "core/profile.h"
#include "core/release_queue.h"
#include "core/stats.h"
#include "core/sync_warnings.h"
#include "fusion/lower.h"
#include "fusion/schedule.h"
#include "graph/device_select.h"
#include "graph/plan_cache.h"
#include "graph/stored_set.h"
#include "ops/fancy_index.h"

#ifdef CUMO_HAVE_CUDA
#include "graph/cuda/open_cuda_executor.h"
#endif


#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

namespace cumo {

namespace {

StoredSets &storedSets() {
  static StoredSets sets;
  return sets;
}

std::string lowercase(const char *s) {
  std::string out(s ? s : "");
  for (char &c : out)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Copies what `layout` addresses out of `host` (the buffer's elements
/// from `lo` on) into `dst`, densely in row-major order.
void gather(const char *host, int64_t lo, const Layout &layout, size_t size,
            char *dst) {
  int64_t n = layout.size();
  int64_t rank = layout.ndim();
  llvm::SmallVector<int64_t, 4> c(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = layout.offset - lo;
    for (int64_t d = 0; d < rank; ++d)
      off += c[d] * layout.strides[d];
    std::memcpy(dst + i * size, host + off * size, size);
    for (int64_t d = rank; d-- > 0;) {
      if (++c[d] < layout.shape[d])
        break;
      c[d] = 0;
    }
  }
}

struct FlushGuard {
  bool &flag;
  explicit FlushGuard(bool &f) : flag(f) { flag = true; }
  ~FlushGuard() { flag = false; }
};

} // namespace

namespace {
bool engineStarted = false;
} // namespace

Engine &Engine::get() {
  static Engine *engine = [] {
    Engine *e = new Engine(); // outlives every buffer
    engineStarted = true;
    return e;
  }();
  return *engine;
}

bool Engine::started() { return engineStarted; }

Engine::Engine() {
  std::string want = lowercase(std::getenv("CUMO_DEVICE"));
  if (want != "cpu") {
#ifdef CUMO_HAVE_CUDA
    applyChosenDevice(); // Cumo::CUDA::Runtime.cudaSetDevice, maybe from another thread
    executor_ = openCudaExecutor(noGpuReason_);
#else
    noGpuReason_ = "this build has no CUDA executor";
#endif
    if (executor_)
      gpu_ = true;
    else if (want == "cuda")
      throw Error(ErrorKind::Cuda, "[Cumo] CUMO_DEVICE=cuda, but " + noGpuReason_);
  } else {
    noGpuReason_ = "CUMO_DEVICE=cpu";
  }
  if (!executor_)
    executor_ = cpuExecutor();
  setCurrentDevice(&executor_->device());
  // Before the pool grows, and on out of memory, let the GC return the
  // buffers of wrappers nobody holds any more.
  device().pool().setPressureCallback([] {
    if (HostHooks::get().collectGarbage)
      HostHooks::get().collectGarbage();
  });
  // Which temporaries a flush stores depends on when Ruby's GC last ran:
  // a wrapper the GC has not reached yet keeps its node wrapped. The plan
  // must not depend on that (StoredSets settles it), but the memory and
  // the writes can: an output that no kernel reads back is optional, and
  // a minor GC just before the plan runs tells which of them Ruby still
  // holds. In the CG loop that drops `p * alpha`, the slice differences
  // and the like, and the kernels write x, r, p and ap. A minor GC costs
  // about 50 us of host time (measured in the CG loop), so by default it
  // runs once the optional outputs of the plans since the last one add up
  // to CUMO_GC_MIN_BYTES (64 MiB); CUMO_GC_BEFORE_FLUSH=on collects before
  // every plan that has any, off never.
  if (const char *v = std::getenv("CUMO_GC_BEFORE_FLUSH"); v && *v)
    gcBeforeFlush_ = std::strcmp(v, "auto") == 0 ? GcBeforeFlush::Auto
                     : envFlag("CUMO_GC_BEFORE_FLUSH", false) ? GcBeforeFlush::Always
                                                              : GcBeforeFlush::Never;
  if (const char *v = std::getenv("CUMO_GC_MIN_BYTES"))
    if (long long n = std::strtoll(v, nullptr, 10); n >= 0)
      gcMinOptionalBytes_ = size_t(n);
  if (const char *v = std::getenv("CUMO_GC_STORE_BYTES_PER_NS"))
    if (double d = std::strtod(v, nullptr); d >= 0)
      gcCost_.setStoreBytesPerNs(d);
  if (const char *v = std::getenv("CUMO_GC_GROWTH_BYTES"))
    if (long long n = std::strtoll(v, nullptr, 10); n >= 0)
      device().pool().setGrowthBudget(size_t(n));
  // The pending budget: how many recorded nodes a loop that never reads
  // runs ahead before it flushes (at its next repeat). Each such flush
  // runs the minor GC above first, at a fixed cost a longer segment
  // shares, so on a device of 32 GiB or more (where twice the bytes of
  // pending results are a small share of its memory) the budget is 2048
  // nodes and 2 GiB rather than 1024 and 1 GiB. The 512x512 CG loop that
  // never reads, cut every ~34 iterations at 1 GiB: 116.3k -> 108.5k host
  // instructions an iteration with a GC before every flush, its GCs' 22.6k
  // -> 15.4k (bench/host_cost.rb, 2026-12-07); at 2048x2048, 22.8 -> 12.2
  // MB stored an iteration (CPU executor, kernels skipped). On a lent H100
  // (the default GC rule, which at 1 GiB had collected before every other
  // flush and stored 7 MB an iteration between): 0.07 MB stored, 1-2%
  // faster, within the host's swing (README, CG).
  if (device().model().memoryBytes >= (int64_t(32) << 30)) {
    PendingList::get().limits().nodes = 2048;
    PendingList::get().limits().bytes = size_t(2) << 30;
  }
  if (const char *v = std::getenv("CUMO_PENDING_NODES"))
    if (long n = std::strtol(v, nullptr, 10); n > 0)
      PendingList::get().limits().nodes = size_t(n);
  // And in bytes of pending results (most never exist: fused away).
  if (const char *v = std::getenv("CUMO_PENDING_BYTES"))
    if (long long n = std::strtoll(v, nullptr, 10); n > 0)
      PendingList::get().limits().bytes = size_t(n);
  // The chunks a loop that reads every R nodes flushes in (R / chunks
  // each): smaller ones shorten what a read waits for and what the device
  // waits for after it, at a flush's host cost each.
  if (const char *v = std::getenv("CUMO_READ_CHUNKS"))
    if (long n = std::strtol(v, nullptr, 10); n > 0)
      PendingList::get().limits().readChunks = size_t(n);
  PendingList::get().setFlushHook([this] {
    ++Stats::get().budget_flushes;
    flush();
  });
}

void Engine::releaseDead() {
  if (!ReleaseQueue::get().empty())
    ReleaseQueue::get().drain();
}

uint64_t Engine::collectForFlush(llvm::SmallVectorImpl<NodeRef> &nodes) {
  PendingList::get().collect(nodes);
  uint64_t epoch = ++flushEpoch_;
  auto number = [&] {
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      nodes[i]->flushEpoch = epoch;
      nodes[i]->flushPos = i;
    }
  };
  number();
  // The pending list holds every pending node in recording order, which is
  // an order inputs come first in. Should a pending input be missing (it
  // fell out of the list), walk the graph instead.
  for (const NodeRef &n : nodes)
    for (const NodeRef &in : n->inputs())
      if (in->isPending() && in->flushEpoch != epoch) {
        llvm::SmallVector<NodeRef, 64> roots(nodes.begin(), nodes.end());
        nodes.clear();
        collectPending(roots, nodes);
        epoch = ++flushEpoch_;
        number();
        return epoch;
      }
  return epoch;
}

void Engine::flush() {
  if (flushing_)
    return;
  FlushGuard guard(flushing_);
  releaseDead();
  PendingList &pending = PendingList::get();
  if (pending.empty())
    return;
  std::optional<ProfileScope> planning(std::in_place, &Profile::planNs);
  llvm::SmallVector<NodeRef, 64> nodes;
  uint64_t epoch = collectForFlush(nodes);
  llvm::BitVector stored(nodes.size()), inPlace(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]->isWrapped())
      stored.set(i);
    if (canWriteInPlace(*nodes[i]))
      inPlace.set(i);
  }

  // The same structure as an earlier flush runs that flush's plan.
  llvm::SmallVector<const Node *, 16> leaves;
  PlanCache::Keys keys = PlanCache::keys(nodes, epoch, leaves);
  storedSets().settle(keys.structure, stored);
  uint64_t key = PlanCache::withStored(keys.exact, stored);
  if (inPlace.any())
    key = PlanCache::withStored(key, inPlace);
  PlanTemplate *t = planCache_.find(key, nodes.size(), leaves.size());
  if (t) {
    ++Stats::get().plan_cache_hits;
  } else {
    ++Stats::get().plan_cache_misses;
    auto at = [&](const llvm::BitVector &bits) {
      return [&bits, epoch](const Node *n) {
        return n->flushEpoch == epoch && bits.test(n->flushPos);
      };
    };
    Schedule s = schedule(nodes, at(stored), at(inPlace));
    Plan fresh = lower(s);
    // Before the template drops its nodes.
    dumper_.dump(
        fresh, nodes, [&](size_t i) { return stored.test(unsigned(i)); }, device().model());
    t = &planCache_.insert(key, std::move(fresh), nodes, leaves);
  }
  PlanCache::bind(*t, nodes);

  const Plan &plan = t->plan;
  if (collectBefore(*t, nodes)) {
    // The nodes are held by `nodes`: only their wrappers can go.
    uint64_t ns = timeYoungGc();
    device().pool().noteCollected();
    noteGcTime(ns);
    // Now and then a second GC at once, with nothing left to free: what
    // any GC costs whatever the garbage (GcCostModel::noteBareGc).
    if (gcCost_.wantsBareGc())
      noteBareGcTime(timeYoungGc());
  }
  llvm::SmallVector<Ref<Buffer>, 8> buffers(plan.buffers.size());
  MemoryPool &pool = device().pool();
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer &b = plan.buffers[i];
    if (b.role == PlanBuffer::Role::Input)
      buffers[i] = leaves[t->bufferSource[i]]->buffer();
    else if (b.role == PlanBuffer::Role::Output && b.donor < 0) {
      bool held = nodes[t->bufferSource[i]]->isWrapped();
      if (b.optional && !held)
        continue; // nobody can read it: no memory, and its writes skip
      size_t bytes = size_t(b.elements) * sizeOf(b.dtype);
      buffers[i] = pool.allocate(bytes);
      // One Ruby dropped but a later kernel reads is a temporary of this
      // plan: its buffer goes back to the pool with `buffers` (stream
      // order keeps it until those kernels ran).
      if (held)
        Stats::get().stored_bytes += bytes;
    }
  }
  // In-place index writes take their base's memory (an Input, set above).
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].donor >= 0)
      buffers[i] = buffers[size_t(plan.buffers[i].donor)];
  if (t->firstIntegerDivision >= 0 && !checkDivision_) {
    const Node *n = nodes[t->firstIntegerDivision].get();
    checkDivision_ = true;
    divisionOp_ = std::string(opName(n->op()));
    divisionAt_ = n->hasExtra() ? n->extra().recordedAt : "";
  }
  tagIndexChecks(*t, nodes);
  planning.reset();
  if (!plan.empty()) {
    ProfileScope executing(&Profile::executeNs);
    executor_->run(plan, buffers);
  }
  for (auto [position, buffer] : t->stored) {
    Node *n = nodes[position].get();
    if (buffers[buffer] && n->isWrapped())
      n->materializeContiguous(buffers[buffer]);
  }
  pending.clearAfterFlush();
  // A plan reads views in place and leaves them pending. One that outlives
  // the flush (the cut fell between it and its consumer) would be a
  // pending node outside the next flush's list, found only by walking the
  // graph: it becomes a view of its base's buffer now. Latest first, every
  // node only this list still holds is dropped (dropping its hold on its
  // inputs): a view whose consumers all went with it dies unsettled, and
  // most do.
  for (size_t i = nodes.size(); i-- > 0;) {
    if (nodes[i]->useCount() == 1) {
      nodes[i].reset();
      continue;
    }
    settleView(*nodes[i]);
  }
  ++Stats::get().plans_run;
}

bool Engine::collectBefore(const PlanTemplate &t, llvm::ArrayRef<NodeRef> nodes) {
  if (gcBeforeFlush_ == GcBeforeFlush::Never || !HostHooks::get().collectYoungGarbage)
    return false;
  // Only the optional outputs this flush would write count (a template's
  // stored set only grows, StoredSets: one whose wrapper went in an
  // earlier GC is skipped at no cost). In the CG loop at 512x512 they are
  // all still wrapped: about 7 MB an iteration, so a GC every plan of the
  // loop that never reads (~47 iterations) and every ~9 iterations of the
  // one that reads every 20th (plans of ~7), ~21 us a GC on the
  // development machine (CUMO_CPU_SKIP_KERNELS=1).
  const Plan &plan = t.plan;
  size_t optional = 0;
  llvm::SmallVector<size_t, 8> allocations;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer &b = plan.buffers[i];
    if (b.role != PlanBuffer::Role::Output || b.donor >= 0)
      continue;
    bool held = nodes[t.bufferSource[i]]->isWrapped();
    size_t bytes = size_t(b.elements) * sizeOf(b.dtype);
    if (b.optional && held)
      optional += bytes;
    if (!b.optional || held)
      allocations.push_back(bytes);
  }
  // Results that died at once (a loop of large ops, each result dropped
  // by the next) return their memory only through a GC: the pool asks for
  // one where it would grow otherwise (MemoryPool::collectionDue).
  bool poolDue = device().pool().collectionDue(allocations);
  // A plan that runs without the GC gives its optional outputs memory until
  // Ruby's own GC frees their wrappers: bounded by the threshold.
  optionalSinceGc_ += optional;
  bool optionalDue =
      optional > 0 && (gcBeforeFlush_ == GcBeforeFlush::Always ||
                       optionalSinceGc_ >= gcCost_.thresholdBytes(gcMinOptionalBytes_));
  if (!poolDue && !optionalDue)
    return false;
  optionalSinceGc_ = 0;
  return true;
}

uint64_t Engine::timeYoungGc() {
  auto started = std::chrono::steady_clock::now();
  HostHooks::get().collectYoungGarbage();
  releaseDead();
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count());
}

void Engine::noteGcTime(uint64_t ns) {
  Stats &stats = Stats::get();
  ++stats.gcs_before_flush;
  stats.gc_before_flush_ns += ns;
  gcCost_.noteGc(ns);
}

void Engine::noteBareGcTime(uint64_t ns) {
  Stats &stats = Stats::get();
  ++stats.gc_bare_samples;
  stats.gc_bare_ns += ns;
  stats.gc_before_flush_ns += ns;
  gcCost_.noteBareGc(ns);
}

void Engine::tagIndexChecks(PlanTemplate &t, llvm::ArrayRef<NodeRef> nodes) {
  for (auto [kernel, position] : t.indexChecks) {
    // Tags count up from the last read, so the smallest a failure leaves
    // is the first op that failed.
    uint32_t tag = uint32_t(indexChecks_.size());
    t.plan.kernels[kernel].checkTag = tag;
    const Node &n = *nodes[position];
    if (tag == kMaxIndexChecks) {
      // Past the named checks all share one tag: keep which ops they were.
      (n.op() == OpKind::IndexWrite ? uncountedWrites_ : uncountedReads_) = true;
      continue;
    }
    indexChecks_.push_back({std::string(fancyIndexOpName(n.op())),
                            n.hasExtra() ? n.extra().recordedAt : ""});
  }
}

void Engine::raiseDeviceErrors() {
  if (!checkDivision_ && indexChecks_.empty())
    return;
  bool division = std::exchange(checkDivision_, false);
  std::vector<IndexCheck> checks = std::move(indexChecks_);
  indexChecks_.clear();
  bool uncountedWrites = std::exchange(uncountedWrites_, false);
  bool uncountedReads = std::exchange(uncountedReads_, false);
  DeviceErrors errors = device().takeErrors();
  auto where = [](const std::string &at) {
    return "(error in NArray operation" +
           (at.empty() ? std::string(")") : ", recorded at " + at + ")");
  };
  if (division && (errors.bits & kErrorDivisionByZero))
    opError(ErrorKind::ZeroDivision, divisionOp_, "divided by zero " + where(divisionAt_));
  if (errors.bits & kErrorIndexOutOfRange) {
    if (errors.firstTag < checks.size()) {
      const IndexCheck &c = checks[errors.firstTag];
      opError(ErrorKind::Index, c.op, "index out of range " + where(c.at));
    }
    // A check past the named ones failed: say which ops they were.
    opError(ErrorKind::Index,
            uncountedWrites && uncountedReads ? "[] or []="
            : uncountedWrites                 ? "[]="
                                              : "[]",
            "index out of range (error in NArray operation)");
  }
}

void Engine::sync() {
  SyncWarnings::get().note();
  PendingList::get().noteRead();
  flush();
  {
    ProfileScope waiting(&Profile::waitNs);
    device().synchronize();
  }
  if (Profile::enabled())
    executor_->harvestProfile();
  ++Stats::get().host_syncs;
  raiseDeviceErrors();
}

Plan Engine::explain(llvm::ArrayRef<NodeRef> roots) {
  releaseDead();
  return planForRoots(roots, [](const Node *n) { return canWriteInPlace(*n); });
}

void Engine::read(const ArrayHandle &h, void *dst) {
  SyncWarnings::get().note();
  PendingList::get().noteRead();
  flush();
  NodeRef v = h.value();
  if (!v->isMaterialized())
    throw Error(ErrorKind::Internal, "[read] a value still pending after a flush");
  const Layout &l = v->layout();
  size_t size = sizeOf(v->dtype());
  ++Stats::get().host_syncs;
  if (l.size() == 0) {
    raiseDeviceErrors();
    return;
  }
  auto [lo, hi] = l.extent();
  ProfileScope waiting(&Profile::waitNs);
  if (l.isContiguous() && hi - lo == l.size()) {
    device().download(*v->buffer(), size_t(lo) * size, size_t(hi - lo) * size, dst);
  } else {
    std::vector<char> host(size_t(hi - lo) * size);
    device().download(*v->buffer(), size_t(lo) * size, host.size(), host.data());
    gather(host.data(), lo, l, size, static_cast<char *>(dst));
  }
  raiseDeviceErrors();
}

} // namespace cumo
