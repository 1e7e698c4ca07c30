// CUDA kernels of the fused row operations (layer_norm, rms_norm, softmax):
// the opaque codegen's branch for them (cuda_opaque_codegen.cpp).
#pragma once

#include "fusion/cuda_kernel_shape.h"

namespace cumo::cudagen {

bool isRowOp(OpKind op);
/// Fills the row fields of `s` (the layout, the accumulator, vector loads).
void analyzeRow(const Kernel &k, KernelShape &s);
void emitRowEntry(const KernelShape &s, const std::string &entry, std::string &os);
LaunchConfig rowLaunch(const Kernel &k, const DeviceModel &model);

} // namespace cumo::cudagen
