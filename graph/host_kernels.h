// The generated kernels of Cumo::CUDA::ElementwiseKernel and
// ReductionKernel on the CPU executor: the same CUDA C source, compiled by
// the host's C++ compiler with a prelude that stands in for CUDA (one
// thread that runs a grid-stride loop to its end; __half and
// __nv_bfloat16 as small classes that round as Cumo::HFloat and
// Cumo::BFloat do), and loaded with dlopen. The source defines, under
// CUMO_HOST, `extern "C" void ENTRY_host(void **args)`, which calls the
// kernel with its arguments. Libraries are cached on disk beside NVRTC's
// cubins, by the hash of what they are built from.
#pragma once

#include "llvm/ADT/ArrayRef.h"

#include <memory>
#include <string>

namespace cumo {

class HostProgram {
public:
  /// `source` built for the host (CUMO_HOST_CXX, else the compiler that
  /// built Cumo, else c++). A compile error throws Error(Nvrtc) with the
  /// compiler's output, as NVRTC's do.
  static std::shared_ptr<HostProgram> compile(const std::string &source, const std::string &entry);
  ~HostProgram();
  HostProgram(const HostProgram &) = delete;
  HostProgram &operator=(const HostProgram &) = delete;

  const std::string &entry() const { return entry_; }
  /// Runs the kernel over `args` (each argument's bytes, as a launch takes
  /// them), after everything recorded before it.
  void run(llvm::ArrayRef<std::string> args);

private:
  HostProgram(std::string entry, void *library, void (*fn)(void **));
  std::string entry_;
  void *library_;
  void (*fn_)(void **);
};

} // namespace cumo
