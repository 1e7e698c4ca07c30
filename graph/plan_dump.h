// CUMO_DUMP_GRAPH=DIR: every new plan an engine builds is written to DIR
// as it was planned, for a person debugging fusion: the pending DAG before
// fusion (plan-NNNN-dag.dot), the plan in words (plan-NNNN.txt) and as
// graphviz with each kernel a cluster (plan-NNNN.dot; .svg beside each
// .dot when graphviz's `dot` is on PATH), and the CUDA source generated
// for each kernel (plan-NNNN-kK.cu). All of it comes from the plan, so it
// works on the CPU executor too; the CUDA executor adds the CUDA graph it
// captures (plan-NNNN-cuda-graph.dot, cudaGraphDebugDotPrint).
#pragma once

#include "core/device.h"
#include "fusion/plan.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace cumo {

class PlanDumper {
public:
  /// Reads CUMO_DUMP_GRAPH; inactive when it is unset or empty.
  PlanDumper();
  bool active() const { return !dir_.empty(); }
  /// Writes `plan` and `dag`, the nodes it was planned from (`stored(i)`:
  /// node i escapes to Ruby), and sets plan.dumpStem; a failure to write
  /// warns once and stops dumping.
  void dump(Plan &plan, llvm::ArrayRef<NodeRef> dag, llvm::function_ref<bool(size_t)> stored,
            const DeviceModel &model);

private:
  std::string dir_;
  unsigned count_ = 0;
};

} // namespace cumo
