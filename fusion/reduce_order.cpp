#include "fusion/reduce_order.h"

#include "fusion/cuda_codegen.h"
#include "fusion/cuda_kernel_shape.h"

namespace cumo {

ReduceOrder reduceOrder(const Kernel &k, const DeviceModel &model) {
  using namespace cudagen;
  ReduceOrder o;
  if (k.reduces.empty())
    return o;
  switch (k.kind) {
  case Kernel::Kind::Elementwise: {
    // emitGridStrideEntry and emitGridReduceTail.
    LaunchConfig launch = launchFor(k, ReduceStrategy::Grid, model);
    o.kind = ReduceOrder::Kind::Grid;
    o.blocks = launch.grid;
    o.block = launch.block;
    return o;
  }
  case Kernel::Kind::AxisReduce:
    // emitAxisReduceEntry.
    switch (axisStrategy(k)) {
    case ReduceStrategy::Warp:
      o.kind = ReduceOrder::Kind::Lanes;
      o.lanes = kWarpSize;
      return o;
    case ReduceStrategy::Block:
      o.kind = ReduceOrder::Kind::Lanes;
      o.lanes = kBlockSize;
      return o;
    default:
      return o;
    }
  default:
    return o;
  }
}

} // namespace cumo
