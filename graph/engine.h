// The runtime's front: force points and flushes. A flush takes every
// pending node, decides which must be stored (wrapped nodes), runs fusion
// and hands the plan to the executor; then the stored nodes are
// materialized and drop their inputs.
#pragma once

#include "core/array.h"
#include "fusion/plan.h"
#include "graph/executor.h"
#include "graph/gc_cost.h"
#include "graph/plan_cache.h"
#include "graph/plan_dump.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace cumo {

class Engine {
public:
  /// The engine, started on first use: the CUDA executor when a GPU is
  /// present (or CUMO_DEVICE=cuda), else the CPU one (CUMO_DEVICE=cpu
  /// forces it).
  static Engine &get();
  /// Whether get() has made the engine (and chosen its device) yet.
  static bool started();

  Executor &executor() { return *executor_; }
  Device &device() { return executor_->device(); }
  bool gpu() const { return gpu_; }
  /// Why there is no GPU executor, when there is none.
  const std::string &noGpuReason() const { return noGpuReason_; }

  /// Computes everything pending.
  void flush();
  /// flush, then waits for the device.
  void sync();
  /// The plan a flush of `roots` would run now, without running anything.
  Plan explain(llvm::ArrayRef<NodeRef> roots);

  /// Reads what `h` sees into `dst`, densely in row-major order.
  void read(const ArrayHandle &h, void *dst);

  /// Releases handles the GC queued; call at safe points.
  void releaseDead();

private:
  Engine();

  /// Raises what a kernel flagged in the error word since the last check.
  void raiseDeviceErrors();
  /// Every pending node in recording order, numbered for this flush
  /// (Node::flushPos); answers the flush's epoch.
  uint64_t collectForFlush(llvm::SmallVectorImpl<NodeRef> &nodes);
  uint64_t flushEpoch_ = 0;
  /// When a minor GC runs before a plan runs, so that the optional outputs
  /// (PlanBuffer::optional) of temporaries whose wrappers are unreachable
  /// get no memory and no writes: Auto once the optional outputs the
  /// plans since the last such GC would write (those whose nodes are still
  /// wrapped: memory only a GC can give back), this one included, reach
  /// gcCost_.thresholdBytes(gcMinOptionalBytes_).
  enum class GcBeforeFlush : uint8_t { Never, Auto, Always };
  GcBeforeFlush gcBeforeFlush_ = GcBeforeFlush::Auto;
  size_t gcMinOptionalBytes_ = size_t(64) << 20;
  size_t optionalSinceGc_ = 0;
  /// The GCs' cost so far, which sets how many optional bytes the next
  /// must save (GcCostModel::thresholdBytes).
  GcCostModel gcCost_;
  void noteGcTime(uint64_t ns);
  /// The same for a bare GC (GcCostModel::noteBareGc).
  void noteBareGcTime(uint64_t ns);
  /// A minor GC and the release of what it freed; answers its time in ns.
  uint64_t timeYoungGc();
  /// Whether this flush of `plan` should collect first: for its optional
  /// outputs (above), or because the pool would grow to give its buffers
  /// while a GC could return enough (MemoryPool::collectionDue).
  bool collectBefore(const PlanTemplate &t, llvm::ArrayRef<NodeRef> nodes);

  Executor *executor_ = nullptr;
  PlanCache planCache_;
  PlanDumper dumper_;
  /// Integer divisions run since the error word was last read: the op and
  /// the line that recorded the first of them.
  bool checkDivision_ = false;
  std::string divisionOp_, divisionAt_;
  /// Gathers and writes at device positions run since then, by the tag
  /// their kernel got (Kernel::checkTag, its index here): the Ruby op and
  /// the line that recorded each. Bounded: past kMaxIndexChecks a failure
  /// is reported without its line.
  struct IndexCheck {
    std::string op, at;
  };
  std::vector<IndexCheck> indexChecks_;
  static constexpr uint32_t kMaxIndexChecks = 4096;
  /// Whether reads or writes were checked past kMaxIndexChecks since the
  /// last read (they share the last tag and are not named).
  bool uncountedReads_ = false, uncountedWrites_ = false;
  /// Tags the index-checking kernels of a plan about to run.
  void tagIndexChecks(PlanTemplate &t, llvm::ArrayRef<NodeRef> nodes);
  bool gpu_ = false;
  std::string noGpuReason_;
  bool flushing_ = false;
};

} // namespace cumo
