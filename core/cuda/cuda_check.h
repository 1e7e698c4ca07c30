// CUDA runtime results turned into Cumo errors. A failing call throws an
// Error of kind Cuda whose message names the op, the CUDA error and its
// description: "[cudaMalloc] cudaErrorMemoryAllocation: out of memory".
#pragma once

#include "core/error.h"

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

namespace cumo {

inline void cudaCheck(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess)
    return;
  cudaGetLastError(); // clear a non-sticky error so later calls can run
  std::string msg(cudaGetErrorName(err));
  msg += ": ";
  msg += cudaGetErrorString(err);
  opError(err == cudaErrorMemoryAllocation ? ErrorKind::OutOfMemory
                                           : ErrorKind::Cuda,
          what, msg);
}

} // namespace cumo
