// Plans for people: the text and graphviz forms Cumo.explain answers, and
// the per-kernel facts its `kernels` array lists.
#pragma once

#include "fusion/plan.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace cumo {

/// What one launch of a plan does, in words.
struct KernelSummary {
  std::string kind;                ///< elementwise, reduction, rowwise, library, copy
  std::vector<std::string> ops;    ///< op names in recording order
  std::vector<std::string> inputs; ///< buffers read, e.g. "%2 SFloat[512,512]"
  std::vector<std::string> outputs;///< buffers written
  std::string why;                 ///< why it is a kernel of its own
};

/// Every op kernel `k` computes, stored or inlined, in recording order;
/// views are free and constants are parameters, so neither is listed.
std::vector<std::string> kernelOpNames(const Kernel &k);

std::vector<KernelSummary> summarize(const Plan &plan);
std::string planToText(const Plan &plan);
/// The plan as graphviz: each kernel's nodes a cluster, stored nodes bold.
std::string planToDot(const Plan &plan);
/// The pending DAG before fusion: every node a box with its op, dtype and
/// shape; `stored(i)` marks the nodes that escape to Ruby (bold).
std::string dagToDot(llvm::ArrayRef<NodeRef> nodes, llvm::function_ref<bool(size_t)> stored);

} // namespace cumo
