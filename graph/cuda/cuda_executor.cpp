// The CUDA executor: runs a plan as one CUDA graph. Each kernel reads its
// parameters (pointers, extents, strides, scalars) from one device block,
// so a cached graph is replayed with a single upload of that block and no
// per-node patching; only a changed launch shape (new extents) updates a
// node in place. Buffers that live only inside the plan come from an arena
// that belongs to the cached graph, so their addresses never change. A
// matrix product of a float class is a cuBLAS call (cublas_matmul.h): a
// child graph node, captured again only when its pointers or extents move.
#include "graph/cuda/open_cuda_executor.h"

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#include "core/env_flag.h"
#include "core/host_hooks.h"
#include "core/profile.h"
#include "core/stats.h"
#include "fusion/cuda_codegen.h"
#include "fusion/kernel_order.h"
#include "fusion/plan_print.h"
#include "graph/cuda/cublas_matmul.h"
#include "graph/cuda/early_start_edge.h"
#include "graph/cuda/kernel_loader.h"
#include "graph/cuda/launch_profiler.h"
#include "graph/executor.h"

#include "llvm/ADT/Hashing.h"

#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

namespace cumo {

namespace {

constexpr size_t kArenaAlign = 256;
/// Cached graphs kept; past this the least recently used is dropped.
constexpr size_t kMaxCachedGraphs = 256;
/// Pinned slots for parameter uploads: an upload waits only if the slot it
/// reuses is still being copied from, which takes this many replays in
/// flight.
constexpr size_t kParamSlots = 16;

size_t alignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

/// One plan structure's graph, arena and parameter block.
struct CachedPlan {
  /// Active kernels, in order; null where cuBLAS computes the kernel.
  std::vector<const LoadedKernel *> kernels;
  /// For the cuBLAS kernels: the work of this run, and the work the graph's
  /// child node was captured with.
  std::vector<MatmulWork> libraryWork, libraryCaptured;
  std::vector<uint32_t> planIndex;           ///< their index in the plan
  std::vector<LaunchConfig> launches;
  std::vector<size_t> paramOffsets;
  size_t paramBytes = 0;
  Ref<Buffer> params;
  Ref<Buffer> arena;
  size_t arenaBytes = 0;
  std::vector<std::pair<size_t, size_t>> scratch; ///< offset, bytes per kernel
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaGraphNode_t> nodes;
  bool eager = false; ///< the graph failed: launch kernel by kernel
  std::vector<char> lastUploaded;
  uint64_t lastUse = 0;
  /// CUMO_PROFILE=kernels: the events the graph records around its
  /// kernels, and each kernel's row of the table.
  std::vector<cudaEvent_t> kernelEvents;
  std::vector<LaunchProfiler::KernelRecord *> kernelRecords;
  /// CUMO_PROFILE=1: the graph's first and last nodes, event records
  /// whose events each replay sets (LaunchProfiler::beginInGraph).
  cudaGraphNode_t profileStart = nullptr, profileEnd = nullptr;

  ~CachedPlan() {
    if (exec)
      cudaGraphExecDestroy(exec);
    if (graph)
      cudaGraphDestroy(graph);
  }
};

struct ParamSlot {
  void *host = nullptr;
  size_t capacity = 0;
  cudaEvent_t copied = nullptr;
};

class CudaExecutor final : public Executor {
public:
  explicit CudaExecutor(CudaDevice *device)
      : device_(device),
        earlyStarts_(device->model().ccMajor >= 9 && envFlag("CUMO_EARLY_START", true)),
        branches_(envFlag("CUMO_GRAPH_BRANCHES", false)) {
    for (ParamSlot &s : slots_)
      cudaCheck(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming),
                "cudaEventCreate");
  }
  const char *name() const override { return "cuda"; }
  Device &device() override { return *device_; }
  void run(const Plan &plan, llvm::ArrayRef<Ref<Buffer>> buffers) override;
  void harvestProfile() override { profiler_.harvest(); }

private:
  CachedPlan &lookup(const Plan &plan, llvm::ArrayRef<uint64_t> keys,
                     llvm::ArrayRef<LaunchConfig> launches,
                     llvm::ArrayRef<uint32_t> active, bool &hit);
  void layoutArena(CachedPlan &cp, const Plan &plan,
                   llvm::SmallVectorImpl<size_t> &tempOffsets);
  void buildGraph(CachedPlan &cp, const Plan &plan);
  bool addEarlyStartEdge(cudaGraph_t graph, cudaGraphNode_t from, cudaGraphNode_t to);
  void updateLibraryNodes(CachedPlan &cp, const Plan &plan);
  void updateLaunches(CachedPlan &cp, llvm::ArrayRef<LaunchConfig> launches);
  void upload(CachedPlan &cp, const llvm::SmallVectorImpl<char> &block);
  void launch(CachedPlan &cp);
  cudaKernelNodeParams nodeParams(const CachedPlan &cp, size_t i,
                                  void **argStorage) const;

  /// The kernels of a cached plan template, analyzed once: their keys,
  /// launch rules and parameter packing.
  struct PreparedPlan {
    std::vector<PreparedKernel> kernels;
  };
  PreparedPlan &prepare(const Plan &plan);

  CudaDevice *device_;
  KernelLoader loader_;
  CublasMatmul matmul_;
  std::unordered_map<uint64_t, std::unique_ptr<PreparedPlan>> prepared_;
  std::unordered_map<uint64_t, std::unique_ptr<CachedPlan>> cache_;
  uint64_t clock_ = 0;
  bool warnedThrash_ = false;
  ParamSlot slots_[kParamSlots];
  size_t nextSlot_ = 0;
  LaunchProfiler profiler_;
  /// Kernels of a graph start while the one before them finishes
  /// (programmatic dependent launch, compute capability 9.0 on);
  /// CUMO_EARLY_START=0 chains them plainly, to measure what it saves.
  bool earlyStarts_ = false;
  /// CUMO_GRAPH_BRANCHES=1: a graph's kernels wait only for those they
  /// share a buffer with (fusion/kernel_order.h). Off by default: on a
  /// lent H100 (2026-12-07 16:33 UTC) the GPT-2 decode took 0.559-0.599
  /// ms a BFloat token so against 0.470-0.485 chained (the same build,
  /// alternating), which the three prefix kernels it takes off the
  /// critical path cannot explain (not yet understood; the branched graphs
  /// keep all but 4-6 of some 165 early-start edges, 19:34 UTC, so not the
  /// edges). Every kernel then waits for the one before it.
  bool branches_ = false;
};

CachedPlan &CudaExecutor::lookup(const Plan &plan, llvm::ArrayRef<uint64_t> keys,
                                 llvm::ArrayRef<LaunchConfig> launches,
                                 llvm::ArrayRef<uint32_t> active, bool &hit) {
  // The structure: kernel identities and block shapes, and which plan
  // buffers each role is (not pointers, not extents, not grid sizes, not
  // dynamic shared memory: a small product's prologue takes its rows'
  // bytes, which grow with a decode's context; updateLaunches patches
  // those as it patches grids).
  llvm::hash_code h = llvm::hash_value(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    h = llvm::hash_combine(h, keys[i], launches[i].block, active[i]);
  h = llvm::hash_combine(h, plan.buffers.size());
  for (const PlanBuffer &b : plan.buffers)
    h = llvm::hash_combine(h, int(b.role), int(b.dtype));
  uint64_t key = h;
  auto it = cache_.find(key);
  hit = it != cache_.end();
  if (hit) {
    it->second->lastUse = ++clock_;
    ++Stats::get().graph_cache_hits;
    return *it->second;
  }
  ++Stats::get().graph_cache_misses;
  if (cache_.size() >= kMaxCachedGraphs) {
    auto lru = cache_.begin();
    for (auto i = cache_.begin(); i != cache_.end(); ++i)
      if (i->second->lastUse < lru->second->lastUse)
        lru = i;
    cache_.erase(lru);
    if (!warnedThrash_ && HostHooks::get().warn) {
      warnedThrash_ = true;
      HostHooks::get().warn("Cumo: more than " + std::to_string(kMaxCachedGraphs) +
                            " distinct plans; the CUDA graph cache now evicts "
                            "(each new plan structure is captured again)");
    }
  }
  auto cp = std::make_unique<CachedPlan>();
  cp->lastUse = ++clock_;
  return *cache_.emplace(key, std::move(cp)).first->second;
}

void CudaExecutor::layoutArena(CachedPlan &cp, const Plan &plan,
                               llvm::SmallVectorImpl<size_t> &tempOffsets) {
  // Scratch first (its counters must read zero), then the plan's temps.
  size_t at = 0;
  std::vector<std::pair<size_t, size_t>> scratch;
  for (size_t i = 0; i < cp.kernels.size(); ++i) {
    const Kernel &k = plan.kernels[cp.planIndex[i]];
    size_t bytes = scratchBytes(k, cp.launches[i]);
    scratch.push_back({at, bytes});
    at = alignUp(at + bytes, kArenaAlign);
  }
  tempOffsets.assign(plan.buffers.size(), 0);
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const PlanBuffer &pb = plan.buffers[b];
    if (pb.role != PlanBuffer::Role::Temp)
      continue;
    tempOffsets[b] = at;
    at = alignUp(at + size_t(pb.elements) * sizeOf(pb.dtype), kArenaAlign);
  }
  cudaStream_t stream = device_->stream();
  if (at > cp.arenaBytes) {
    // Grows geometrically, so extents growing by one a step reallocate
    // O(log n) times.
    size_t want = std::max(at, cp.arenaBytes + cp.arenaBytes / 2);
    cp.arena = device_->pool().allocateInternal(want);
    cp.arenaBytes = want;
    cudaCheck(cudaMemsetAsync(cp.arena->data(), 0, want, stream), "cudaMemsetAsync");
  } else if (scratch != cp.scratch) {
    for (auto [off, bytes] : scratch)
      if (bytes)
        cudaCheck(cudaMemsetAsync(static_cast<char *>(cp.arena->data()) + off, 0,
                                  bytes, stream),
                  "cudaMemsetAsync");
  }
  cp.scratch = std::move(scratch);
}

cudaKernelNodeParams CudaExecutor::nodeParams(const CachedPlan &cp, size_t i,
                                              void **argStorage) const {
  *argStorage = static_cast<char *>(cp.params->data()) + cp.paramOffsets[i];
  cudaKernelNodeParams p = {};
  p.func = cp.kernels[i]->function();
  p.gridDim = dim3(cp.launches[i].grid);
  p.blockDim = dim3(cp.launches[i].block);
  p.sharedMemBytes = cp.launches[i].sharedBytes;
  p.kernelParams = argStorage;
  return p;
}

void CudaExecutor::buildGraph(CachedPlan &cp, const Plan &plan) {
  cudaCheck(cudaGraphCreate(&cp.graph, 0), "cudaGraphCreate");
  cp.nodes.assign(cp.kernels.size(), nullptr);
  bool timeKernels = Profile::kernels();
  cudaGraphNode_t last = nullptr;
  auto addEvent = [&](cudaEvent_t e) {
    cudaGraphNode_t node;
    cudaCheck(cudaGraphAddEventRecordNode(&node, cp.graph, last ? &last : nullptr,
                                          last ? 1 : 0, e),
              "cudaGraphAddEventRecordNode");
    last = node;
  };
  if (timeKernels && cp.kernelEvents.empty()) {
    for (size_t i = 0; i <= cp.kernels.size(); ++i)
      cp.kernelEvents.push_back(profiler_.newEvent());
    for (size_t i = 0; i < cp.kernels.size(); ++i) {
      std::string ops;
      for (const std::string &op : kernelOpNames(plan.kernels[cp.planIndex[i]]))
        ops += (ops.empty() ? "" : ",") + op;
      cp.kernelRecords.push_back(
          profiler_.record(cp.kernels[i] ? cp.kernels[i]->entry : "cublas_matmul", ops));
    }
  }
  // The replay's own bracket (CUMO_PROFILE=1): placeholder events until
  // each launch sets a pair.
  bool bracket = Profile::enabled() && !timeKernels;
  cudaEvent_t placeholder = bracket ? profiler_.placeholderEvent() : nullptr;
  cudaGraphNode_t start = nullptr;
  if (bracket) {
    addEvent(placeholder);
    cp.profileStart = start = last;
  }
  // With branches_, each node waits for the kernels it shares a buffer
  // with (fusion/kernel_order.h), so kernels that share none run side by
  // side; else, and with CUMO_PROFILE=kernels (an event between every two
  // kernels), the graph is one chain.
  std::vector<llvm::SmallVector<uint32_t, 2>> waits;
  if (!timeKernels && branches_) {
    waits = kernelWaits(plan, cp.planIndex, [&](uint32_t i) { return !cp.kernels[i]; });
  } else if (!timeKernels) {
    waits.resize(cp.kernels.size());
    for (uint32_t i = 1; i < waits.size(); ++i)
      waits[i].push_back(i - 1);
  }
  llvm::SmallVector<bool, 16> waitedFor(cp.kernels.size(), false);
  // The nodes node i follows: the kernels it waits for, or in a chain the
  // node before it (the first node after the start event, which then
  // starts every node that waits for no kernel).
  auto predecessors = [&](size_t i) {
    llvm::SmallVector<cudaGraphNode_t, 2> from;
    if (timeKernels) {
      if (last)
        from.push_back(last);
      return from;
    }
    for (uint32_t j : waits[i]) {
      from.push_back(cp.nodes[j]);
      waitedFor[j] = true;
    }
    if (from.empty() && start)
      from.push_back(start);
    return from;
  };
  size_t earlyEdges = 0;
  for (size_t i = 0; i < cp.kernels.size(); ++i) {
    if (timeKernels)
      addEvent(cp.kernelEvents[i]);
    llvm::SmallVector<cudaGraphNode_t, 2> from = predecessors(i);
    if (!cp.kernels[i]) {
      // cuBLAS: its calls captured as a child graph (the node clones it).
      cudaGraph_t child = matmul_.capture(cp.libraryWork[i]);
      cudaError_t err = cudaGraphAddChildGraphNode(&cp.nodes[i], cp.graph, from.data(),
                                                   from.size(), child);
      cudaCheck(err, "cudaGraphAddChildGraphNode");
      cp.libraryCaptured[i] = cp.libraryWork[i];
      last = cp.nodes[i];
      continue;
    }
    void *arg = nullptr;
    void *args[1] = {nullptr};
    cudaKernelNodeParams p = nodeParams(cp, i, &arg);
    args[0] = &arg;
    p.kernelParams = args;
    cudaCheck(cudaGraphAddKernelNode(&cp.nodes[i], cp.graph, nullptr, 0, &p),
              "cudaGraphAddKernelNode");
    // Where the latest kernel it waits for is a generated one (and no
    // profiling event lies between them), it may start early
    // (addEarlyStartEdge: from that kernel's start); every other edge is
    // from a node's end.
    bool early = !timeKernels && earlyStarts_ && cp.kernels[i]->waitsForPriorGrids &&
                 !waits[i].empty() && cp.kernels[waits[i].back()];
    if (early && addEarlyStartEdge(cp.graph, from.back(), cp.nodes[i])) {
      ++earlyEdges;
      from.pop_back();
    }
    // (Edge k runs from from[k] to to[k]: one target per edge.)
    llvm::SmallVector<cudaGraphNode_t, 2> to(from.size(), cp.nodes[i]);
    if (!from.empty())
      cudaCheck(cudaGraphAddDependencies(cp.graph, from.data(), to.data(), nullptr, from.size()),
                "cudaGraphAddDependencies");
    last = cp.nodes[i];
  }
  if (!timeKernels) {
    // The graph ends when every node no other waits for has.
    llvm::SmallVector<cudaGraphNode_t, 4> ends;
    for (size_t i = 0; i < cp.kernels.size(); ++i)
      if (!waitedFor[i])
        ends.push_back(cp.nodes[i]);
    if (bracket) {
      cudaGraphNode_t node;
      cudaCheck(cudaGraphAddEventRecordNode(&node, cp.graph, ends.data(), ends.size(),
                                            placeholder),
                "cudaGraphAddEventRecordNode");
      cp.profileEnd = node;
    }
  }
  if (timeKernels)
    addEvent(cp.kernelEvents.back());
  ++Stats::get().graphs_built;
  if (!plan.dumpStem.empty()) {
    // CUMO_DUMP_GRAPH: the graph as CUDA sees it; a failure only loses the file.
    std::string path = plan.dumpStem + "-cuda-graph.dot";
    if (cudaGraphDebugDotPrint(cp.graph, path.c_str(), cudaGraphDebugDotFlagsVerbose) !=
        cudaSuccess)
      cudaGetLastError();
  }
  cudaError_t err = cudaGraphInstantiate(&cp.exec, cp.graph, 0);
  if (err != cudaSuccess && earlyEdges) {
    // A runtime that takes the edges but not the graph: plain edges from
    // now on, and this graph again.
    cudaGetLastError();
    earlyStarts_ = false;
    cudaGraphDestroy(cp.graph);
    cp.graph = nullptr;
    cp.exec = nullptr;
    buildGraph(cp, plan);
    return;
  }
  if (err != cudaSuccess) {
    // Run kernel by kernel instead, and say so in the stats.
    cudaGetLastError();
    cp.eager = true;
    cp.exec = nullptr;
    ++Stats::get().graph_fallbacks;
    return;
  }
  ++Stats::get().graph_instantiations;
  Stats::get().early_starts += earlyEdges;
}

bool CudaExecutor::addEarlyStartEdge(cudaGraph_t graph, cudaGraphNode_t from,
                                     cudaGraphNode_t to) {
  cudaGraphEdgeData edge = earlyStartEdge();
  if (cudaGraphAddDependencies(graph, &from, &to, &edge, 1) == cudaSuccess)
    return true;
  // A driver without it: plain edges from now on.
  cudaGetLastError();
  earlyStarts_ = false;
  return false;
}

void CudaExecutor::updateLibraryNodes(CachedPlan &cp, const Plan &plan) {
  for (size_t i = 0; i < cp.kernels.size(); ++i) {
    if (cp.kernels[i] || cp.libraryWork[i] == cp.libraryCaptured[i])
      continue;
    // New pointers or extents: capture the calls again and swap the child
    // graph in; where cuBLAS chose kernels of another shape the swap is
    // refused, and the whole graph is built again.
    cudaGraph_t child = matmul_.capture(cp.libraryWork[i]);
    cudaError_t err = cudaGraphExecChildGraphNodeSetParams(cp.exec, cp.nodes[i], child);
    if (err != cudaSuccess) {
      cudaGetLastError();
      cudaGraphExecDestroy(cp.exec);
      cudaGraphDestroy(cp.graph);
      cp.exec = nullptr;
      cp.graph = nullptr;
      buildGraph(cp, plan);
      return;
    }
    cp.libraryCaptured[i] = cp.libraryWork[i];
    ++Stats::get().graph_updates;
  }
}

void CudaExecutor::updateLaunches(CachedPlan &cp,
                                  llvm::ArrayRef<LaunchConfig> launches) {
  for (size_t i = 0; i < launches.size(); ++i) {
    if (cp.launches[i] == launches[i])
      continue;
    cp.launches[i] = launches[i];
    if (cp.eager || !cp.kernels[i])
      continue;
    void *arg = nullptr;
    void *args[1];
    cudaKernelNodeParams p = nodeParams(cp, i, &arg);
    args[0] = &arg;
    p.kernelParams = args;
    cudaCheck(cudaGraphExecKernelNodeSetParams(cp.exec, cp.nodes[i], &p),
              "cudaGraphExecKernelNodeSetParams");
    ++Stats::get().graph_updates;
  }
}

void CudaExecutor::upload(CachedPlan &cp, const llvm::SmallVectorImpl<char> &block) {
  // Replays are ordered on one stream, so the device block still holds
  // what the last replay of this plan used: skip an identical upload.
  if (cp.lastUploaded.size() == block.size() &&
      std::memcmp(cp.lastUploaded.data(), block.data(), block.size()) == 0)
    return;
  ParamSlot &slot = slots_[nextSlot_];
  nextSlot_ = (nextSlot_ + 1) % kParamSlots;
  if (cudaEventQuery(slot.copied) == cudaErrorNotReady)
    device_->wait(slot.copied);
  if (slot.capacity < block.size()) {
    if (slot.host)
      cudaFreeHost(slot.host);
    slot.capacity = std::max<size_t>(alignUp(block.size(), 4096), 4096);
    cudaCheck(cudaHostAlloc(&slot.host, slot.capacity, cudaHostAllocDefault),
              "cudaHostAlloc");
  }
  std::memcpy(slot.host, block.data(), block.size());
  cudaStream_t stream = device_->stream();
  cudaCheck(cudaMemcpyAsync(cp.params->data(), slot.host, block.size(),
                            cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync");
  cudaCheck(cudaEventRecord(slot.copied, stream), "cudaEventRecord");
  cp.lastUploaded.assign(block.begin(), block.end());
}

void CudaExecutor::launch(CachedPlan &cp) {
  cudaStream_t stream = device_->stream();
  bool profiling = Profile::enabled();
  bool inGraph = profiling && !cp.eager && cp.profileStart;
  if (inGraph) {
    LaunchProfiler::Pair pair = profiler_.beginInGraph();
    cudaCheck(cudaGraphExecEventRecordNodeSetEvent(cp.exec, cp.profileStart, pair.start),
              "cudaGraphExecEventRecordNodeSetEvent");
    cudaCheck(cudaGraphExecEventRecordNodeSetEvent(cp.exec, cp.profileEnd, pair.end),
              "cudaGraphExecEventRecordNodeSetEvent");
  } else if (profiling) {
    profiler_.begin(stream);
  }
  if (!cp.eager) {
    cudaCheck(cudaGraphLaunch(cp.exec, stream), "cudaGraphLaunch");
    ++Stats::get().graph_replays;
  } else {
    for (size_t i = 0; i < cp.kernels.size(); ++i) {
      if (!cp.kernels[i]) {
        matmul_.enqueue(cp.libraryWork[i], stream);
        continue;
      }
      void *arg = static_cast<char *>(cp.params->data()) + cp.paramOffsets[i];
      void *args[1] = {&arg};
      const LaunchConfig &lc = cp.launches[i];
      cudaCheck(cudaLaunchKernel(cp.kernels[i]->function(), dim3(lc.grid),
                                 dim3(lc.block), args, lc.sharedBytes, stream),
                "cudaLaunchKernel");
    }
  }
  Stats::get().kernels_launched += cp.kernels.size();
  if (profiling) {
    if (!inGraph)
      profiler_.end(stream);
    if (!cp.eager && !cp.kernelEvents.empty())
      profiler_.addKernelTimes(cp.kernelEvents, cp.kernelRecords);
  }
}

CudaExecutor::PreparedPlan &CudaExecutor::prepare(const Plan &plan) {
  auto it = prepared_.find(plan.templateKey);
  if (it != prepared_.end())
    return *it->second;
  if (prepared_.size() > 4 * kMaxCachedGraphs)
    prepared_.clear(); // plans that never repeat: keep the map bounded
  auto p = std::make_unique<PreparedPlan>();
  for (const Kernel &k : plan.kernels)
    p->kernels.emplace_back(k, device_->model());
  return *prepared_.emplace(plan.templateKey, std::move(p)).first->second;
}

void CudaExecutor::run(const Plan &plan, llvm::ArrayRef<Ref<Buffer>> buffers) {
  const DeviceModel &model = device_->model();
  // A cached template's kernels were analyzed when it was first run.
  std::unique_ptr<PreparedPlan> oneShot;
  PreparedPlan *prepared = nullptr;
  if (plan.templateKey) {
    prepared = &prepare(plan);
  } else {
    oneShot = std::make_unique<PreparedPlan>();
    for (const Kernel &k : plan.kernels)
      oneShot->kernels.emplace_back(k, model);
    prepared = oneShot.get();
  }
  llvm::SmallVector<uint64_t, 8> keys;
  llvm::SmallVector<LaunchConfig, 8> launches;
  llvm::SmallVector<uint32_t, 8> active;
  for (uint32_t i = 0; i < plan.kernels.size(); ++i) {
    LaunchConfig lc = prepared->kernels[i].launch(plan.kernels[i], model);
    if (lc.grid == 0)
      continue; // nothing to compute (an empty domain)
    keys.push_back(prepared->kernels[i].key());
    launches.push_back(lc);
    active.push_back(i);
  }
  if (active.empty())
    return;
  bool hit = false;
  CachedPlan &cp = lookup(plan, keys, launches, active, hit);
  if (!hit) {
    llvm::SmallVector<const Kernel *, 8> generated;
    llvm::SmallVector<uint64_t, 8> generatedKeys;
    for (size_t i = 0; i < active.size(); ++i)
      if (!CublasMatmul::computes(plan.kernels[active[i]])) {
        generated.push_back(&plan.kernels[active[i]]);
        generatedKeys.push_back(keys[i]);
      }
    loader_.prefetch(generated, generatedKeys, model);
    for (size_t i = 0; i < active.size(); ++i) {
      const Kernel &k = plan.kernels[active[i]];
      cp.kernels.push_back(CublasMatmul::computes(k) ? nullptr
                                                     : &loader_.get(k, keys[i], model));
    }
    cp.libraryWork.resize(active.size());
    cp.libraryCaptured.resize(active.size());
    cp.planIndex.assign(active.begin(), active.end());
    cp.launches.assign(launches.begin(), launches.end());
  }
  if (hit)
    updateLaunches(cp, launches);

  llvm::SmallVector<size_t, 8> tempOffsets;
  layoutArena(cp, plan, tempOffsets);
  // No scratch and no temps: a plan of plain elementwise kernels has no
  // arena at all.
  char *arena = cp.arena ? static_cast<char *>(cp.arena->data()) : nullptr;
  llvm::SmallVector<void *, 8> pointers(plan.buffers.size(), nullptr);
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    if (plan.buffers[b].role == PlanBuffer::Role::Temp)
      pointers[b] = arena + tempOffsets[b];
    else if (buffers[b])
      pointers[b] = buffers[b]->data();
  }
  llvm::SmallVector<char, 1024> block;
  cp.paramOffsets.resize(cp.kernels.size());
  for (size_t i = 0; i < cp.kernels.size(); ++i) {
    block.resize(alignUp(block.size(), kParamAlignment));
    cp.paramOffsets[i] = block.size();
    void *scratch = cp.scratch[i].second ? arena + cp.scratch[i].first : nullptr;
    uint32_t k = cp.planIndex[i];
    if (!cp.kernels[i]) {
      cp.libraryWork[i] = CublasMatmul::workOf(plan.kernels[k], pointers);
      continue;
    }
    prepared->kernels[k].pack(plan.kernels[k], cp.launches[i], pointers, scratch,
                              device_->errorWord(), block);
  }
  if (!cp.params || cp.paramBytes < block.size()) {
    cp.params = device_->pool().allocateInternal(std::max<size_t>(block.size(), 16));
    cp.paramBytes = block.size();
    cp.lastUploaded.clear();
    if (cp.exec) {
      // The nodes point into the old block: rebuild them.
      cudaGraphExecDestroy(cp.exec);
      cudaGraphDestroy(cp.graph);
      cp.exec = nullptr;
      cp.graph = nullptr;
    }
  }
  if (!cp.exec && !cp.eager)
    buildGraph(cp, plan);
  else if (cp.exec)
    updateLibraryNodes(cp, plan);
  upload(cp, block);
  launch(cp);
}

} // namespace

Executor *openCudaExecutor(std::string &whyNot) {
  CudaDevice *device = CudaDevice::open(whyNot);
  if (!device)
    return nullptr;
  return new CudaExecutor(device);
}

} // namespace cumo
