#include "core/array.h"

#include "core/error.h"
#include "core/pending.h"

namespace cumo {

Storage::~Storage() = default;

void Storage::setCurrent(NodeRef n) {
  if (handles_) {
    --current_->wrappers;
    ++n->wrappers;
  }
  current_ = std::move(n);
  ++version_;
}

void Storage::addHandle() {
  if (handles_++ == 0)
    ++current_->wrappers;
}

void Storage::dropHandle() {
  if (--handles_ == 0)
    --current_->wrappers;
}

ArrayHandle::ArrayHandle(Ref<Storage> storage, const Layout &layout)
    : storage_(std::move(storage)), layout_(layout) {
  storage_->addHandle();
  noteLayout();
}

ArrayHandle::ArrayHandle(Ref<Storage> storage, Layout &&layout)
    : storage_(std::move(storage)), layout_(std::move(layout)) {
  storage_->addHandle();
  noteLayout();
}

ArrayHandle::ArrayHandle(NodeRef n)
    : storage_(new Storage(n)), layout_(Layout::contiguous(n->shape())),
      rowMajorFromZero_(true) {
  storage_->addHandle();
}

void ArrayHandle::noteLayout() {
  rowMajorFromZero_ = layout_.offset == 0 && layout_.isRowMajor();
}

ArrayHandle::~ArrayHandle() { storage_->dropHandle(); }

bool ArrayHandle::isWhole() const {
  // Every element of the storage, in its row-major order, under any shape
  // (reshape! keeps an array whole).
  return rowMajorFromZero_ && layout_.size() == storage_->size();
}

NodeRef ArrayHandle::value() const {
  if (isWhole() && llvm::ArrayRef<int64_t>(layout_.shape) == storage_->shape())
    return storage_->currentRef();
  return viewOfNode(storage_->currentRef(), layout_);
}

void ArrayHandle::reshapeInPlace(llvm::ArrayRef<int64_t> shape) {
  int64_t off = layout_.offset;
  // A relaxed-contiguous layout may start anywhere; its elements run in
  // row-major order from its offset.
  if (layout_.size() > 0)
    off = layout_.extent().first;
  layout_ = Layout::contiguous(shape, off);
  noteLayout();
}

bool layoutAsAffine(const Layout &layout, llvm::ArrayRef<int64_t> baseShape,
                    AffineMap &m) {
  int64_t baseSize = numElements(baseShape);
  int64_t rank = baseShape.size();
  int64_t outRank = layout.shape.size();
  if (layout.size() == 0 || baseSize == 0)
    return false;
  if (layout.offset < 0 || layout.offset >= baseSize)
    return false;
  // The base's row-major strides, innermost last.
  llvm::SmallVector<int64_t, 8> cs(static_cast<size_t>(rank));
  for (int64_t k = rank, step = 1; k-- > 0;) {
    cs[k] = step;
    step *= baseShape[k];
  }
  m.inRank = rank;
  m.outRank = outRank;
  m.matrix.assign(size_t(rank * outRank), 0);
  m.offset.resize(size_t(rank));
  int64_t rest = layout.offset;
  for (int64_t k = 0; k < rank; ++k) {
    m.offset[k] = cs[k] ? rest / cs[k] : 0;
    rest -= m.offset[k] * cs[k];
  }
  llvm::SmallVector<bool, 8> used(static_cast<size_t>(rank), false);
  for (int64_t d = 0; d < outRank; ++d) {
    int64_t n = layout.shape[d];
    int64_t sd = layout.strides[d];
    if (n == 1 || sd == 0)
      continue; // reads coordinate 0 of nothing, or broadcasts
    bool found = false;
    // Innermost first: a stride of 1 belongs to the last axis that moves.
    for (int64_t k = rank; k-- > 0;) {
      if (used[k] || baseShape[k] == 1 || sd % cs[k] != 0)
        continue;
      int64_t step = sd / cs[k];
      int64_t last = m.offset[k] + step * (n - 1);
      if (last < 0 || last >= baseShape[k])
        continue;
      m.at(k, d) = step;
      used[k] = true;
      found = true;
      break;
    }
    if (!found)
      return false;
  }
  return true;
}

std::optional<AffineMap> layoutAsAffine(const Layout &layout,
                                        llvm::ArrayRef<int64_t> baseShape) {
  AffineMap m;
  if (!layoutAsAffine(layout, baseShape, m))
    return std::nullopt;
  return m;
}

namespace {
/// Where `layout`, over the flat row-major order of the materialized
/// `base`'s values, lies in base's buffer; nullopt when base is strided
/// and `layout` does not step along its axes.
std::optional<Layout> layoutInBuffer(const Node &base, const Layout &layout) {
  const Layout &bl = base.layout();
  Layout l;
  l.shape = layout.shape;
  if (bl.isContiguous() && llvm::ArrayRef<int64_t>(bl.shape) == base.shape()) {
    l.offset = bl.offset + layout.offset;
    l.strides = layout.strides;
    return l;
  }
  // The base's own layout is strided: map flat positions through it.
  AffineMap affine;
  if (!layoutAsAffine(layout, base.shape(), affine))
    return std::nullopt;
  affine.applyToLayout(bl.strides, bl.offset, l.strides, l.offset);
  return l;
}
} // namespace

NodeRef viewOfNode(const NodeRef &base, const Layout &layout) {
  if (base->isMaterialized()) {
    // The values already sit in a buffer: compose the layouts.
    std::optional<Layout> l = layoutInBuffer(*base, layout);
    if (!l)
      throw Error(ErrorKind::Internal,
                  "[view] a strided base cannot be viewed flat");
    return makeBufferNode(base->dtype(), base->buffer(), std::move(*l));
  }
  NodeRef v(new Node(OpKind::View, base->dtype(), layout.shape));
  v->addInput(base);
  // The map is built in the node's own attributes: no temporary to move.
  NodeExtra &e = v->extra();
  if (!layoutAsAffine(layout, base->shape(), e.view)) {
    e.view = AffineMap();
    e.flat = layout;
    e.flatView = true;
  }
  PendingList::get().add(v.get());
  return v;
}

bool settleView(Node &v) {
  if (!v.isPending() || v.op() != OpKind::View)
    return false;
  const Node &base = *v.input(0);
  if (!base.isMaterialized())
    return false;
  const NodeExtra &e = v.extra();
  std::optional<Layout> l;
  if (e.flatView) {
    l = layoutInBuffer(base, e.flat);
  } else {
    l.emplace();
    l->shape.assign(v.shape().begin(), v.shape().end());
    e.view.applyToLayout(base.layout().strides, base.layout().offset, l->strides,
                         l->offset);
  }
  if (!l)
    return false;
  v.materialize(base.buffer(), std::move(*l));
  return true;
}

} // namespace cumo
