// How a Rowwise kernel (Kernel::Kind::Rowwise, fusion/row_groups.h) lays
// its rows over threads and which loads a lane holds in registers, as data
// both executors read: the CUDA kernel is laid out so
// (fusion/cuda_rowwise_codegen.cpp), and the CPU executor folds each row in
// the same order (ops/row_layout.h), so the two agree bit for bit.
#pragma once

#include "fusion/plan.h"
#include "ops/row_layout.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace cumo {

/// How a Rowwise kernel reads one of its loads.
enum class RowRead : uint8_t {
  None,   ///< not a Rowwise kernel
  Cached, ///< varies along the row and between rows (x): held in registers
  Along,  ///< varies along the row only (gamma): read where it is used
  PerRow, ///< one value per row (a broadcast mean): read once per row
};

struct RowProgram {
  RowLayout layout;
  llvm::SmallVector<RowRead, 4> reads; ///< per load
};

/// The layout of Rowwise kernel `k`: its rows are the domain's last axis.
/// Decided from the kernel's extents and strides, which a cached plan
/// holds fixed, so every flush of a plan lays out the same.
RowProgram rowProgram(const Kernel &k);

} // namespace cumo
