// The graph edge of an early start (programmatic dependent launch, compute
// capability 9.0 on), as the CUDA executor chains a plan's kernels: one
// definition for the executor and for bench/kernel_times, which times
// kernels chained the same way.
#pragma once

#include <cuda_runtime_api.h>

namespace cumo {

/// An edge from one kernel node to the next along which the next may
/// launch once every block of the one before has begun; its
/// wait_for_prior_grids() returns once that one has completed and its
/// writes are visible. Its launch and its parameter reads (and whatever
/// it loads before the wait) overlap the one before's tail.
inline cudaGraphEdgeData earlyStartEdge() {
  cudaGraphEdgeData edge = {};
  edge.from_port = cudaGraphKernelNodePortLaunchCompletion;
  edge.type = cudaGraphDependencyTypeProgrammatic;
  return edge;
}

} // namespace cumo
