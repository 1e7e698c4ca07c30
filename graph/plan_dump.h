// CUMO_DUMP_GRAPH=DIR: every new plan an engine builds is written to DIR
// as it was planned, for a person debugging fusion: the plan in words
// (plan-NNNN.txt), as graphviz (plan-NNNN.dot, and .svg when graphviz's
// `dot` is on PATH), and the CUDA source generated for each kernel
// (plan-NNNN-kK.cu). Written from the plan alone, so it works on the CPU
// executor too.
#pragma once

#include "core/device.h"
#include "fusion/plan.h"

#include <string>

namespace cumo {

class PlanDumper {
public:
  /// Reads CUMO_DUMP_GRAPH; inactive when it is unset or empty.
  PlanDumper();
  bool active() const { return !dir_.empty(); }
  /// Writes `plan`; a failure to write warns once and stops dumping.
  void dump(const Plan &plan, const DeviceModel &model);

private:
  std::string dir_;
  unsigned count_ = 0;
};

} // namespace cumo
