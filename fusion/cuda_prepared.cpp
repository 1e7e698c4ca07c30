// PreparedKernel: the structure analysis of a kernel kept for the flushes
// that repeat its plan.
#include "fusion/cuda_codegen.h"
#include "fusion/cuda_kernel_shape.h"

namespace cumo {

PreparedKernel::PreparedKernel(const Kernel &k, const DeviceModel &model)
    : shape_(std::make_unique<cudagen::KernelShape>(cudagen::analyzeKernel(k, model))),
      key_(cudagen::hashShape(*shape_)) {}

PreparedKernel::~PreparedKernel() = default;
PreparedKernel::PreparedKernel(PreparedKernel &&) noexcept = default;

LaunchConfig PreparedKernel::launch(const Kernel &k, const DeviceModel &model) const {
  return cudagen::launchFor(k, shape_->strategy, model);
}

void PreparedKernel::pack(const Kernel &k, const LaunchConfig &launch,
                          llvm::ArrayRef<void *> buffers, void *scratch,
                          void *errorWord, llvm::SmallVectorImpl<char> &out) const {
  cudagen::packWithShape(*shape_, k, launch, buffers, scratch, errorWord, out);
}

} // namespace cumo
