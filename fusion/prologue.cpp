#include "fusion/prologue.h"

#include "core/node.h"
#include "fusion/epilogue.h"
#include "ops/row_layout.h"
#include "ops/row_ops.h"

namespace cumo {

bool isPrologueOp(OpKind op) { return op == OpKind::LayerNorm || op == OpKind::RmsNorm; }

bool fitsPrologue(const Node *x, const Node *product) {
  if (!isPrologueOp(x->op()) || product->input(0) != x || !takesEpilogue(product) ||
      x->dtype() != product->dtype())
    return false;
  llvm::ArrayRef<int64_t> a = x->shape(), b = product->input(1)->shape();
  if (a.empty() || a.size() > 2 || b.size() > 2)
    return false;
  int64_t k = a.back(), m = a.size() == 2 ? a[0] : 1;
  RowLayout l = rowLayout(k, x->dtype(), rowAccumulator(x->dtype()));
  return l.warpPerRow() && l.cachedGroups > 0 &&
         m * k * int64_t(sizeOf(x->dtype())) <= kPrologueBytes;
}

} // namespace cumo
