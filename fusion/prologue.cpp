#include "fusion/prologue.h"

#include "core/node.h"
#include "core/shape.h"
#include "fusion/epilogue.h"
#include "ops/row_layout.h"
#include "ops/row_ops.h"

#include <optional>

namespace cumo {

bool isPrologueOp(OpKind op) {
  return op == OpKind::LayerNorm || op == OpKind::RmsNorm || op == OpKind::Softmax;
}

namespace {
/// Whether matrix `b` (of a batch of products) will be read with a stride
/// other than one along k, as far as its node tells now: a settled array
/// by its layout; a pending value other than a view gets a buffer of its
/// own, row-major (an index write in place takes its base's, which is
/// too); a view may lie any way, so no.
bool rowsAlongK(const Node *b) {
  size_t kAxis = b->ndim() - 2;
  if (b->isMaterialized())
    return b->layout().strides[kAxis] != 1;
  OpCategory c = opCategory(b->op());
  return c != OpCategory::View && c != OpCategory::Reshape && b->shape().back() != 1;
}
} // namespace

bool fitsPrologue(const Node *x, const Node *product) {
  if (!isPrologueOp(x->op()) || product->input(0) != x || product->input(1) == x ||
      !takesEpilogue(product) || x->dtype() != product->dtype())
    return false;
  const Node *matrix = product->input(1);
  llvm::ArrayRef<int64_t> a = x->shape(), b = matrix->shape();
  if (a.empty())
    return false;
  if (a.size() > 2 || b.size() > 2) {
    if (!rowsAlongK(matrix))
      return false;
    // Each product of the batch has rows of its own (the kernel stores
    // product bi's rows at bi): the rows' batch axes are the batch's.
    std::optional<Shape> batch = broadcastShapes(a.drop_back(2), b.drop_back(2));
    if (!batch || llvm::ArrayRef<int64_t>(*batch) != a.drop_back(2))
      return false;
  }
  int64_t k = a.back(), m = a.size() >= 2 ? a[a.size() - 2] : 1;
  RowLayout l = rowLayout(k, x->dtype(), rowAccumulator(x->dtype()));
  return l.warpPerRow() && l.cachedGroups > 0 &&
         m * k * int64_t(sizeOf(x->dtype())) <= kPrologueBytes;
}

} // namespace cumo
