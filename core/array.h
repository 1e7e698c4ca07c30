// What a Ruby NArray holds: a handle onto a storage. A storage is one
// mutable array as Ruby sees it; its value is the current node, and a write
// into it (a[0..1, true] = v) records an Update node and makes that the
// current one. Every view of the array shares the storage, so it sees the
// write, as Numo's views do, while pending readers of the old value keep
// the old node (copy on write, decided at schedule time).
#pragma once

#include "core/node.h"

#include <cstdint>

namespace cumo {

class Storage : public llvm::RefCountedBase<Storage> {
public:
  explicit Storage(NodeRef initial) : current_(std::move(initial)) {}
  ~Storage();
  CUMO_FREE_LIST_ALLOCATED(Storage)

  Node *current() const { return current_.get(); }
  const NodeRef &currentRef() const { return current_; }
  DType dtype() const { return current_->dtype(); }
  /// The natural shape: the current node's shape.
  llvm::ArrayRef<int64_t> shape() const { return current_->shape(); }
  int64_t size() const { return current_->size(); }

  /// Makes `n` the array's value (a write, or a fill such as seq).
  void setCurrent(NodeRef n);
  uint64_t version() const { return version_; }

  void addHandle();
  void dropHandle();
  uint32_t handles() const { return handles_; }

private:
  NodeRef current_;
  uint32_t handles_ = 0;
  uint64_t version_ = 0;
};

/// One Ruby object's view of a storage: its shape, strides and offset over
/// the storage's flat row-major order.
class ArrayHandle {
public:
  /// The layout is copied or moved once into the handle (by value it was
  /// moved twice: into the parameter, then into the member).
  ArrayHandle(Ref<Storage> storage, const Layout &layout);
  ArrayHandle(Ref<Storage> storage, Layout &&layout);
  /// A handle onto a fresh storage whose value is `n`.
  explicit ArrayHandle(NodeRef n);
  ~ArrayHandle();
  CUMO_FREE_LIST_ALLOCATED(ArrayHandle)
  ArrayHandle(const ArrayHandle &) = delete;
  ArrayHandle &operator=(const ArrayHandle &) = delete;

  Storage &storage() const { return *storage_; }
  const Ref<Storage> &storageRef() const { return storage_; }
  const Layout &layout() const { return layout_; }
  DType dtype() const { return storage_->dtype(); }
  llvm::ArrayRef<int64_t> shape() const { return layout_.shape; }
  int64_t size() const { return layout_.size(); }
  int64_t ndim() const { return layout_.ndim(); }

  /// True when this handle sees the whole storage in its natural order and
  /// shape, so its value is the storage's current node itself.
  bool isWhole() const;
  /// A view: the handle sees part of the storage or sees it reordered, or
  /// was made by an op Numo answers a view object from (view, transpose,
  /// a[true, true] ...) even where it sees the whole storage in order.
  bool isView() const { return viewObject || !isWhole(); }

  /// The value as a node: the current node when whole; otherwise a view of
  /// it (an alias when the current node is materialized).
  NodeRef value() const;

  /// Changes the shape in place (reshape!); the caller checked that the
  /// layout is contiguous and the size matches.
  void reshapeInPlace(llvm::ArrayRef<int64_t> shape);

  bool frozen = false;
  /// Numo's inplace flag (`inplace`, `inplace!`): an arithmetic op on this
  /// receiver writes its result into these elements where the result has
  /// their class and shape (ruby/ recordInto).
  bool inplace = false;
  /// Made as a view object (see isView); writes through a whole view still
  /// replace the storage's value, as writes through any view reach it.
  bool viewObject = false;

private:
  void noteLayout();

  Ref<Storage> storage_;
  Layout layout_;
  /// The layout starts at 0 and runs row-major with no gaps (cached: every
  /// op asks whether a handle is whole).
  bool rowMajorFromZero_ = false;
};

/// A node that reads `layout` (over the flat row-major order of `base`'s
/// values) out of `base`: an alias when `base` is materialized, else a
/// pending View node (affine when the layout steps along base's axes).
NodeRef viewOfNode(const NodeRef &base, const Layout &layout);

/// A pending View whose base has since been materialized becomes a view of
/// the base's buffer in place (no copy). A flush calls it on the views its
/// plan read in place: one whose consumer was recorded after the cut would
/// otherwise stay pending outside the pending list. False if `v` is no such
/// view, or its layout cannot be composed with the base's.
bool settleView(Node &v);

/// Tries to express a layout over the flat row-major order of `baseShape`
/// as an affine map from the layout's coordinates to base coordinates, each
/// layout axis stepping along one base axis. Fails (nullopt) for layouts
/// that cross rows, such as those reshape! produces.
/// layoutAsAffine into `out` (its vectors reused); false, with `out` left
/// unspecified, where there is no map.
bool layoutAsAffine(const Layout &layout, llvm::ArrayRef<int64_t> baseShape,
                    AffineMap &out);
std::optional<AffineMap> layoutAsAffine(const Layout &layout,
                                        llvm::ArrayRef<int64_t> baseShape);

} // namespace cumo
