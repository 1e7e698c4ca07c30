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
                          void *errorWord, llvm::SmallVectorImpl<char> &out) {
  size_t base = (out.size() + kParamAlignment - 1) / kParamAlignment *
                kParamAlignment;
  if (patches_) {
    out.resize(base);
    out.append(lastBlock_.begin(), lastBlock_.end());
    cudagen::applyPatches(*shape_, k, *patches_, buffers, scratch, errorWord,
                          out.data() + base);
    return;
  }
  auto patches = std::make_unique<std::vector<cudagen::ParamPatch>>();
  cudagen::packWithShape(*shape_, k, launch, buffers, scratch, errorWord, out,
                         patches.get());
  lastBlock_.assign(out.begin() + base, out.end());
  patches_ = std::move(patches);
}

} // namespace cumo
