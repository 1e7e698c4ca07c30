// The executor interface: runs a plan's kernels on some device. The CPU
// executor (cpu_executor.cpp) interprets them with plain loops and is the
// reference; the CUDA executor (cuda/) compiles them with NVRTC and replays
// them as CUDA graphs.
#pragma once

#include "core/device.h"
#include "fusion/plan.h"

#include "llvm/ADT/ArrayRef.h"

namespace cumo {

class Executor {
public:
  virtual ~Executor() = default;
  virtual const char *name() const = 0;
  virtual Device &device() = 0;
  /// Runs `plan`. `buffers` has one entry per plan buffer: the input
  /// buffers and the freshly allocated outputs; Temp entries are null and
  /// the executor provides them. Work may still be running on return; the
  /// device orders later reads after it.
  virtual void run(const Plan &plan, llvm::ArrayRef<Ref<Buffer>> buffers) = 0;
  /// With CUMO_PROFILE: adds the device time of launches that completed to
  /// Profile::deviceNs (after a synchronize, all of them).
  virtual void harvestProfile() {}
};

/// The CPU reference executor.
Executor *cpuExecutor();

} // namespace cumo
