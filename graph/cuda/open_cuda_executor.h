// The factory of the CUDA executor. This header includes no CUDA header, so
// the engine can ask for the executor in a build with CUDA without itself
// being CUDA code.
#pragma once

#include <string>

namespace cumo {

class Executor;

/// The CUDA executor, or nullptr with `whyNot` set (no driver, no device).
Executor *openCudaExecutor(std::string &whyNot);

} // namespace cumo
