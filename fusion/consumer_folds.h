// Full reductions folded by the kernel that reads them (Fold in plan.h):
// the reducing kernel ends with its blocks' partials, and its first
// reader, an elementwise kernel, folds them before its own elements.
#pragma once

#include "core/device.h"
#include "fusion/plan.h"

namespace cumo {

/// Marks, in `plan`, every full reduction of an elementwise kernel whose
/// first reader is a later elementwise kernel that only loads it: the
/// reduction gets a Temp buffer of partials (Reduce::partials) and the
/// reader a Fold. `model` sizes the partials (one a block of the largest
/// grid a reduction launches on it). CUMO_FOLD_IN_CONSUMER=0 turns it off.
void foldInConsumers(Plan &plan, const DeviceModel &model);

} // namespace cumo
