// The lowering pass: turns a schedule into a plan, building each kernel's
// SSA values by expanding the nodes it computes down to loads, parameters
// and generators. Views and broadcasts become affine index maps; a slice
// update becomes a box basis and a select; a value read through a shifted
// view is recomputed at the shifted coordinates; common subexpressions
// (the same node at the same coordinates) are computed once.
#pragma once

#include "fusion/plan.h"
#include "fusion/schedule.h"

namespace cumo {

Plan lower(const Schedule &schedule);

/// The plan a flush of `roots` would run: their pending ancestors
/// scheduled with the roots and every wrapped node stored, and lowered.
/// `inPlace` as schedule's (Engine::explain passes canWriteInPlace).
Plan planForRoots(llvm::ArrayRef<NodeRef> roots,
                  llvm::function_ref<bool(const Node *)> inPlace = nullptr);

} // namespace cumo
