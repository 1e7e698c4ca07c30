// Core: shapes, layouts and affine maps, storages and handles, the memory
// pool, the pending list's periodic cut, and the inspect text.
#include "core/affine_map.h"
#include "core/array.h"
#include "core/error.h"
#include "core/format.h"
#include "core/memory_pool.h"
#include "core/pending.h"
#include "core/release_queue.h"
#include "core/shape.h"
#include "ops/record.h"

#include "doctest_printers.h"

#include <cstdint>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

using namespace cumo;

namespace {

Layout makeLayout(Shape shape, Strides strides, int64_t offset) {
  Layout l;
  l.shape = std::move(shape);
  l.strides = std::move(strides);
  l.offset = offset;
  return l;
}

/// A map from its matrix rows and offset, for comparisons.
AffineMap makeMap(int64_t inRank, int64_t outRank,
                  std::initializer_list<int64_t> matrix,
                  std::initializer_list<int64_t> offset) {
  AffineMap m;
  m.inRank = inRank;
  m.outRank = outRank;
  m.matrix.assign(matrix.begin(), matrix.end());
  m.offset.assign(offset.begin(), offset.end());
  return m;
}

/// The flat offsets a layout addresses, in row-major order of its own
/// coordinates.
std::vector<int64_t> offsetsOf(const Layout &l) {
  std::vector<int64_t> out;
  int64_t n = l.size();
  llvm::SmallVector<int64_t, 4> c(l.ndim(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = l.offset;
    for (int64_t d = 0; d < l.ndim(); ++d)
      off += c[d] * l.strides[d];
    out.push_back(off);
    for (int64_t d = l.ndim(); d-- > 0;) {
      if (++c[d] < l.shape[d])
        break;
      c[d] = 0;
    }
  }
  return out;
}

} // namespace

// ---- dtypes ----------------------------------------------------------------

TEST_CASE("promote matches Numo's effective table (numo_semantics.md 1)") {
  // Rows and columns: Bit I8 I16 I32 I64 U8 U16 U32 U64 SF DF.
  using D = DType;
  const D order[] = {D::Bit,   D::Int8,   D::Int16,  D::Int32,
                     D::Int64, D::UInt8,  D::UInt16, D::UInt32,
                     D::UInt64, D::SFloat, D::DFloat};
  const char *table[11][11] = {
      {"Bit", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "SFloat", "DFloat"},
      {"Int8", "Int8", "Int16", "Int32", "Int64", "Int8", "Int32", "Int64", "Int64", "SFloat", "DFloat"},
      {"Int16", "Int16", "Int16", "Int32", "Int64", "Int16", "Int16", "Int32", "Int64", "SFloat", "DFloat"},
      {"Int32", "Int32", "Int32", "Int32", "Int64", "Int32", "Int32", "Int32", "Int64", "SFloat", "DFloat"},
      {"Int64", "Int64", "Int64", "Int64", "Int64", "Int64", "Int64", "Int64", "Int64", "SFloat", "DFloat"},
      {"UInt8", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "SFloat", "DFloat"},
      {"UInt16", "Int32", "Int16", "Int32", "Int64", "UInt16", "UInt16", "UInt32", "UInt64", "SFloat", "DFloat"},
      {"UInt32", "Int64", "Int32", "Int32", "Int64", "UInt32", "UInt32", "UInt32", "UInt64", "SFloat", "DFloat"},
      {"UInt64", "Int64", "Int64", "Int64", "Int64", "UInt64", "UInt64", "UInt64", "UInt64", "SFloat", "DFloat"},
      {"SFloat", "SFloat", "SFloat", "SFloat", "SFloat", "SFloat", "SFloat", "SFloat", "SFloat", "SFloat", "DFloat"},
      {"DFloat", "DFloat", "DFloat", "DFloat", "DFloat", "DFloat", "DFloat", "DFloat", "DFloat", "DFloat", "DFloat"},
  };
  for (int i = 0; i < 11; ++i)
    for (int j = 0; j < 11; ++j) {
      CAPTURE(nameOf(order[i]));
      CAPTURE(nameOf(order[j]));
      CHECK(nameOf(promote(order[i], order[j])) == table[i][j]);
    }
}

TEST_CASE("a Ruby number mixed into an op promotes as Numo does") {
  // Integer never widens; Float keeps float classes, makes integers DFloat.
  CHECK(promoteWithScalar(DType::Int8, ScalarKind::Integer) == DType::Int8);
  CHECK(promoteWithScalar(DType::Bit, ScalarKind::Integer) == DType::Bit);
  CHECK(promoteWithScalar(DType::UInt16, ScalarKind::Float) == DType::DFloat);
  CHECK(promoteWithScalar(DType::SFloat, ScalarKind::Float) == DType::SFloat);
  CHECK(promoteWithScalar(DType::Bit, ScalarKind::Float) == DType::DFloat);
  CHECK(accumulatorOf(DType::Int8) == DType::Int64);
  CHECK(accumulatorOf(DType::UInt8) == DType::UInt64);
  CHECK(accumulatorOf(DType::SFloat) == DType::SFloat);
  CHECK(dtypeNamed("UInt32") == DType::UInt32);
  CHECK_FALSE(dtypeNamed("Complex").has_value());
}

// ---- shapes --------------------------------------------------------------

TEST_CASE("broadcastShapes follows numpy's rules") {
  CHECK(*broadcastShapes({3, 1}, {1, 4}) == Shape({3, 4}));
  CHECK(*broadcastShapes({5}, {2, 5}) == Shape({2, 5}));
  CHECK_FALSE(broadcastShapes({2}, {3}).has_value());
}

TEST_CASE("broadcastShapes right-aligns, keeps zero extents and 0-dim") {
  CHECK(*broadcastShapes({}, {2, 3}) == Shape({2, 3}));
  CHECK(*broadcastShapes({}, {}) == Shape());
  CHECK(*broadcastShapes({4, 1, 3}, {5, 1}) == Shape({4, 5, 3}));
  // A zero extent broadcasts with one, never with another length.
  CHECK(*broadcastShapes({0, 3}, {1, 3}) == Shape({0, 3}));
  CHECK_FALSE(broadcastShapes({0}, {2}).has_value());
  CHECK_FALSE(broadcastShapes({2, 3}, {3, 3}).has_value());
}

TEST_CASE("a shape whose size or bytes pass int64 makes no array") {
  CHECK(sizeFits({2, 3}, 8));
  CHECK(sizeFits({}, 8));
  CHECK(sizeFits({int64_t(1) << 62}, 1));
  CHECK_FALSE(sizeFits({int64_t(1) << 62}, 2));         // 2**63 bytes
  CHECK_FALSE(sizeFits({int64_t(1) << 62, 4}, 1));      // 2**64 elements wrap to 0
  CHECK_FALSE(sizeFits({int64_t(1) << 40, int64_t(1) << 40}, 1));
  CHECK(sizeFits({0, int64_t(1) << 62, 4}, 8));         // an empty axis: nothing to hold
  CHECK(sizeFits({int64_t(1) << 62, 4, 0}, 8));
  // Every array's node checks its shape: the sum of two broadcast views
  // whose shape would wrap is an ArgumentError naming the op.
  try {
    Node n(OpKind::Add, DType::SFloat, {int64_t(1) << 40, int64_t(1) << 40});
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.kind() == ErrorKind::Argument);
    CHECK(e.message().find("[add]") != std::string::npos);
    CHECK(e.message().find("too large") != std::string::npos);
  }
}

TEST_CASE("broadcastsTo only accepts shapes that leave the target unchanged") {
  CHECK(broadcastsTo({}, {3, 4}));
  CHECK(broadcastsTo({4}, {3, 4}));
  CHECK(broadcastsTo({1, 4}, {3, 4}));
  CHECK(broadcastsTo({3, 1}, {3, 4}));
  CHECK(broadcastsTo({3, 4}, {3, 4}));
  CHECK_FALSE(broadcastsTo({3}, {3, 4}));      // right-aligned: 3 vs 4
  CHECK_FALSE(broadcastsTo({2, 3, 4}, {3, 4})); // more axes than the target
  CHECK_FALSE(broadcastsTo({3, 4}, {3, 1}));    // would change the target
}

TEST_CASE("contiguousStrides are row-major element strides") {
  CHECK(contiguousStrides({2, 3, 4}) == Strides({12, 4, 1}));
  CHECK(contiguousStrides({5}) == Strides({1}));
  CHECK(contiguousStrides({}) == Strides());
  CHECK(contiguousStrides({3, 0, 2}) == Strides({0, 2, 1}));
  CHECK(numElements({}) == 1);
  CHECK(numElements({3, 0}) == 0);
  CHECK(shapeToString({3, 5}) == "[3,5]");
  CHECK(shapeToString({}) == "[]");
}

TEST_CASE("isContiguous: plain layouts") {
  CHECK(Layout::contiguous({3, 4}).isContiguous());
  CHECK(Layout::contiguous({3, 4}, 7).isContiguous()); // any offset
  CHECK(Layout::contiguous({}).isContiguous());
  // A transpose of a 2-D array is strided.
  CHECK_FALSE(makeLayout({4, 3}, {1, 4}, 0).isContiguous());
  // Every other element is strided.
  CHECK_FALSE(makeLayout({3}, {2}, 0).isContiguous());
  // Broadcast axes repeat elements.
  CHECK_FALSE(makeLayout({3, 4}, {0, 1}, 0).isContiguous());
  // Negative steps run backwards.
  CHECK_FALSE(makeLayout({4}, {-1}, 3).isContiguous());
}

TEST_CASE("isContiguous ignores axes of length one (the spec's examples)") {
  // Cumo::DFloat.new(1, 4).seq[true, 0...2].contiguous?  #=> true
  CHECK(makeLayout({1, 2}, {4, 1}, 0).isContiguous());
  // Cumo::DFloat.new(2, 4).seq[true, 0...2].contiguous?  #=> false
  CHECK_FALSE(makeLayout({2, 2}, {4, 1}, 0).isContiguous());
  // Cumo::DFloat.new(1, 1, 4).seq[true, true, 0...2].contiguous?  #=> true
  CHECK(makeLayout({1, 1, 2}, {4, 4, 1}, 0).isContiguous());
  // Cumo::DFloat.new(1, 3).seq.transpose.contiguous?  #=> true
  CHECK(makeLayout({3, 1}, {1, 3}, 0).isContiguous());
  // A length-one axis in the middle, with any stride at all.
  CHECK(makeLayout({2, 1, 3}, {3, 1000, 1}, 0).isContiguous());
  // A new axis (stride 0, length 1) does not break contiguity either.
  CHECK(makeLayout({1, 5}, {0, 1}, 2).isContiguous());
}

TEST_CASE("isContiguous of an empty layout is true") {
  // An empty layout addresses nothing, so nothing in it can be out of
  // order, wherever the empty axis is. a[0...0, (0..4).step(2)] of a [3,5]
  // array is shape [0,3], strides [5,2]; a[(0..2).step(2), 0...0] is shape
  // [2,0], strides [10,1].
  CHECK(makeLayout({0, 3}, {5, 2}, 0).isContiguous());
  CHECK(makeLayout({2, 0}, {10, 1}, 0).isContiguous());
}

TEST_CASE("isWhole needs offset zero, the full size and contiguity") {
  CHECK(Layout::contiguous({3, 4}).isWhole(12));
  CHECK_FALSE(Layout::contiguous({3, 4}, 1).isWhole(13));
  CHECK_FALSE(Layout::contiguous({2, 4}).isWhole(12));
  CHECK_FALSE(makeLayout({4, 3}, {1, 4}, 0).isWhole(12));
}

TEST_CASE("extent spans the smallest to one past the largest offset") {
  CHECK(Layout::contiguous({3, 4}).extent() == std::pair<int64_t, int64_t>{0, 12});
  CHECK(Layout::contiguous({2, 3}, 5).extent() == std::pair<int64_t, int64_t>{5, 11});
  // Negative steps reach below the offset.
  CHECK(makeLayout({4}, {-1}, 3).extent() == std::pair<int64_t, int64_t>{0, 4});
  CHECK(makeLayout({2, 3}, {-6, 2}, 6).extent() == std::pair<int64_t, int64_t>{0, 11});
  // A broadcast axis adds nothing.
  CHECK(makeLayout({5, 2}, {0, 1}, 4).extent() == std::pair<int64_t, int64_t>{4, 6});
  // Empty: {offset, offset}.
  CHECK(makeLayout({0, 3}, {3, 1}, 7).extent() == std::pair<int64_t, int64_t>{7, 7});
  // 0-dim: one element.
  CHECK(makeLayout({}, {}, 9).extent() == std::pair<int64_t, int64_t>{9, 10});
}

// ---- affine maps ---------------------------------------------------------

TEST_CASE("AffineMap::identity is the identity") {
  AffineMap id = AffineMap::identity(3);
  CHECK(id.isIdentity());
  CHECK(id.inRank == 3);
  CHECK(id.outRank == 3);
  CHECK(id == makeMap(3, 3, {1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}));
  CHECK(AffineMap::identity(0).isIdentity());
  AffineMap shifted = id;
  shifted.offset[1] = 1;
  CHECK_FALSE(shifted.isIdentity());
  CHECK(shifted.hash() != id.hash());
}

TEST_CASE("AffineMap::broadcast maps output coordinates to the input's") {
  // [3,1] inside [2,3,4]: in[0] = out[1], in[1] = 0.
  AffineMap m = AffineMap::broadcast({3, 1}, {2, 3, 4});
  CHECK(m == makeMap(2, 3, {0, 1, 0, 0, 0, 0}, {0, 0}));
  CHECK_FALSE(m.isIdentity());
  // The same shape is the identity.
  CHECK(AffineMap::broadcast({2, 5}, {2, 5}).isIdentity());
  // A 0-dim input reads nothing.
  AffineMap s = AffineMap::broadcast({}, {4});
  CHECK(s.inRank == 0);
  CHECK(s.outRank == 1);
  // A length-one axis against a length-one axis still moves (with 0).
  CHECK(AffineMap::broadcast({1}, {1}).isIdentity());
}

TEST_CASE("AffineMap::compose applies the inner map first") {
  // inner: out (i) -> mid (i, 2) ; outer: mid (a, b) -> in (b + 1, 2a)
  AffineMap inner = makeMap(2, 1, {1, 0}, {0, 2});
  AffineMap outer = makeMap(2, 2, {0, 1, 2, 0}, {1, 0});
  AffineMap c = outer.compose(inner);
  CHECK(c.inRank == 2);
  CHECK(c.outRank == 1);
  // in = (2 + 1, 2i) = (3, 2i)
  CHECK(c == makeMap(2, 1, {0, 2}, {3, 0}));
  CHECK(AffineMap::identity(2).compose(inner) == inner);
  CHECK(outer.compose(AffineMap::identity(2)) == outer);
}

TEST_CASE("AffineMap::applyToLayout gives strides over the out space") {
  // A buffer of shape [4,6], row-major, at offset 100; a map that reads
  // row 1 + i, column 2j: element (i, j) lives at 100 + 6(1+i) + 2j.
  AffineMap m = makeMap(2, 2, {1, 0, 0, 2}, {1, 0});
  Strides strides;
  int64_t offset = 0;
  m.applyToLayout({6, 1}, 100, strides, offset);
  CHECK(offset == 106);
  CHECK(strides == Strides({6, 2}));
  // A broadcast gives a zero stride.
  AffineMap b = AffineMap::broadcast({3, 1}, {3, 5});
  b.applyToLayout({1, 1}, 0, strides, offset);
  CHECK(strides == Strides({1, 0}));
  CHECK(offset == 0);
}

// ---- layoutAsAffine --------------------------------------------------------

TEST_CASE("layoutAsAffine: the whole array is the identity") {
  auto m = layoutAsAffine(Layout::contiguous({4, 6}), {4, 6});
  REQUIRE(m);
  CHECK(m->isIdentity());
}

TEST_CASE("layoutAsAffine: slices with steps") {
  // a[1..2, (0..4).step(2)] of a [4,6] array.
  auto m = layoutAsAffine(makeLayout({2, 3}, {6, 2}, 6), {4, 6});
  REQUIRE(m);
  CHECK(*m == makeMap(2, 2, {1, 0, 0, 2}, {1, 0}));
  // a[1..-1, true]: a shifted block.
  auto s = layoutAsAffine(makeLayout({3, 6}, {6, 1}, 6), {4, 6});
  REQUIRE(s);
  CHECK(*s == makeMap(2, 2, {1, 0, 0, 1}, {1, 0}));
  // a[true, 1..-1]
  auto c = layoutAsAffine(makeLayout({4, 5}, {6, 1}, 1), {4, 6});
  REQUIRE(c);
  CHECK(*c == makeMap(2, 2, {1, 0, 0, 1}, {0, 1}));
}

TEST_CASE("layoutAsAffine: negative steps") {
  // a[-1..0 step -1, true] of a [4,6] array: rows reversed.
  auto m = layoutAsAffine(makeLayout({4, 6}, {-6, 1}, 18), {4, 6});
  REQUIRE(m);
  CHECK(*m == makeMap(2, 2, {-1, 0, 0, 1}, {3, 0}));
  // a[true, 5..1 step -2]: columns 5, 3, 1.
  auto c = layoutAsAffine(makeLayout({4, 3}, {6, -2}, 5), {4, 6});
  REQUIRE(c);
  CHECK(*c == makeMap(2, 2, {1, 0, 0, -2}, {0, 5}));
}

TEST_CASE("layoutAsAffine: transposes") {
  auto m = layoutAsAffine(makeLayout({6, 4}, {1, 6}, 0), {4, 6});
  REQUIRE(m);
  CHECK(*m == makeMap(2, 2, {0, 1, 1, 0}, {0, 0}));
  // A 3-D permutation (2, 0, 1) of a [2,3,4] array.
  auto p = layoutAsAffine(makeLayout({4, 2, 3}, {1, 12, 4}, 0), {2, 3, 4});
  REQUIRE(p);
  CHECK(*p == makeMap(3, 3, {0, 1, 0, 0, 0, 1, 1, 0, 0}, {0, 0, 0}));
}

TEST_CASE("layoutAsAffine: integer-fixed axes") {
  // a[2, true]: row 2, the row axis fixed by the offset.
  auto m = layoutAsAffine(makeLayout({6}, {1}, 12), {4, 6});
  REQUIRE(m);
  CHECK(*m == makeMap(2, 1, {0, 1}, {2, 0}));
  // a[true, 3]: column 3.
  auto c = layoutAsAffine(makeLayout({4}, {6}, 3), {4, 6});
  REQUIRE(c);
  CHECK(*c == makeMap(2, 1, {1, 0}, {0, 3}));
  // a[1, 2]: one element, 0-dim.
  auto e = layoutAsAffine(makeLayout({}, {}, 8), {4, 6});
  REQUIRE(e);
  CHECK(*e == makeMap(2, 0, {}, {1, 2}));
}

TEST_CASE("layoutAsAffine: broadcast strides read one coordinate") {
  // Row 1 seen three times: the first output axis has stride 0.
  auto m = layoutAsAffine(makeLayout({3, 6}, {0, 1}, 6), {4, 6});
  REQUIRE(m);
  CHECK(*m == makeMap(2, 2, {0, 0, 0, 1}, {1, 0}));
  // A new axis of length one.
  auto n = layoutAsAffine(makeLayout({1, 4, 6}, {0, 6, 1}, 0), {4, 6});
  REQUIRE(n);
  CHECK(*n == makeMap(2, 3, {0, 1, 0, 0, 0, 1}, {0, 0}));
}

TEST_CASE("layoutAsAffine: the map addresses exactly the layout's elements") {
  // Whatever map it finds, base coordinates in row-major order must land on
  // the layout's own flat offsets.
  Shape base{3, 4, 5};
  Strides cs = contiguousStrides(base);
  std::vector<Layout> layouts = {
      makeLayout({2, 2, 3}, {20, -5, 2}, 1 * 20 + 3 * 5 + 0),
      makeLayout({5, 3}, {1, 20}, 5),
      makeLayout({3, 2}, {20, 2}, 1),
  };
  for (const Layout &l : layouts) {
    auto m = layoutAsAffine(l, base);
    REQUIRE(m);
    Strides s;
    int64_t off = 0;
    m->applyToLayout(cs, 0, s, off);
    Layout mapped = makeLayout(l.shape, s, off);
    CHECK(offsetsOf(mapped) == offsetsOf(l));
  }
}

TEST_CASE("layoutAsAffine: layouts that cross rows have no map") {
  // reshape! of a [4,6] array to [3,8]: rows of 8 run across rows of 6.
  CHECK_FALSE(layoutAsAffine(makeLayout({3, 8}, {8, 1}, 0), {4, 6}).has_value());
  // ... and a column slice of it.
  CHECK_FALSE(layoutAsAffine(makeLayout({3, 2}, {8, 1}, 1), {4, 6}).has_value());
  // Elements 1 and 5 of a [3,4,5] array's flat order: the second one is in
  // the next row.
  CHECK_FALSE(layoutAsAffine(makeLayout({3, 2}, {20, 4}, 1), {3, 4, 5}).has_value());
  // A flat run past the end of a row.
  CHECK_FALSE(layoutAsAffine(makeLayout({8}, {1}, 2), {4, 6}).has_value());
  // Offsets outside the base, and empty layouts.
  CHECK_FALSE(layoutAsAffine(makeLayout({2}, {1}, 24), {4, 6}).has_value());
  CHECK_FALSE(layoutAsAffine(makeLayout({0, 6}, {6, 1}, 0), {4, 6}).has_value());
}

// ---- storages and handles --------------------------------------------------

TEST_CASE("wrappers count storages whose handles are alive") {
  NodeRef n(new Node(OpKind::Empty, DType::DFloat, {4}));
  CHECK(n->wrappers == 0);
  CHECK_FALSE(n->isWrapped());
  {
    ArrayHandle a(n);
    CHECK(n->wrappers == 1);
    CHECK(n->isWrapped());
    {
      // A second handle (a view) on the same storage: still one wrapper.
      ArrayHandle view(a.storageRef(), makeLayout({2}, {1}, 1));
      CHECK(a.storage().handles() == 2);
      CHECK(n->wrappers == 1);
    }
    CHECK(a.storage().handles() == 1);
    CHECK(n->wrappers == 1);
    {
      // Another storage whose value is the same node: two wrappers.
      ArrayHandle b(n);
      CHECK(n->wrappers == 2);
    }
    CHECK(n->wrappers == 1);
  }
  CHECK(n->wrappers == 0);
}

TEST_CASE("setCurrent moves the wrapper to the new value") {
  NodeRef first(new Node(OpKind::Empty, DType::SFloat, {3}));
  NodeRef second(new Node(OpKind::Empty, DType::SFloat, {3}));
  Ref<Storage> storage;
  {
    ArrayHandle a(first);
    storage = a.storageRef();
    uint64_t v0 = a.storage().version();
    a.storage().setCurrent(second);
    CHECK(first->wrappers == 0);
    CHECK(second->wrappers == 1);
    CHECK(a.storage().version() == v0 + 1);
    CHECK(a.storage().current() == second.get());
  }
  // The storage outlives its last handle here: its value is unwrapped.
  CHECK(storage->handles() == 0);
  CHECK(second->wrappers == 0);
  // A storage without handles moves no wrapper counts.
  storage->setCurrent(first);
  CHECK(first->wrappers == 0);
  CHECK(second->wrappers == 0);
}

TEST_CASE("ArrayHandle::isWhole tells whole arrays from views") {
  NodeRef n(new Node(OpKind::Empty, DType::DFloat, {4, 6}));
  ArrayHandle a(n);
  CHECK(a.isWhole());
  CHECK_FALSE(a.isView());
  ArrayHandle row(a.storageRef(), makeLayout({6}, {1}, 6));
  CHECK(row.isView());
  ArrayHandle t(a.storageRef(), makeLayout({6, 4}, {1, 6}, 0));
  CHECK(t.isView());
  // reshape! keeps every element in its place and order: still the whole
  // array, under another shape.
  ArrayHandle r(a.storageRef(), a.layout());
  r.reshapeInPlace({3, 8});
  CHECK(r.isWhole());
  CHECK(r.layout() == Layout::contiguous({3, 8}));
  // ... and its value is the storage's elements read under that shape.
  CHECK(r.value()->shape() == llvm::ArrayRef<int64_t>({3, 8}));
  // Part of the storage, even in order, is a view.
  ArrayHandle head(a.storageRef(), Layout::contiguous({12}));
  CHECK(head.isView());
}

TEST_CASE("reshapeInPlace of a relaxed-contiguous view starts at its extent") {
  NodeRef n(new Node(OpKind::Empty, DType::DFloat, {1, 4}));
  ArrayHandle a(n);
  // a[true, 1..2]: shape [1,2], strides [4,1], offset 1.
  ArrayHandle v(a.storageRef(), makeLayout({1, 2}, {4, 1}, 1));
  v.reshapeInPlace({2});
  CHECK(v.layout() == Layout::contiguous({2}, 1));
}

TEST_CASE("a handle released from the GC unwraps its node only when drained") {
  NodeRef n(new Node(OpKind::Empty, DType::DFloat, {2}));
  auto *h = new ArrayHandle(n);
  CHECK(n->wrappers == 1);
  // The GC's free function only queues the handle...
  ReleaseQueue::get().push(h);
  CHECK_FALSE(ReleaseQueue::get().empty());
  CHECK(n->wrappers == 1);
  // ... and a safe point releases it.
  CHECK(ReleaseQueue::get().drain() == 1);
  CHECK(ReleaseQueue::get().empty());
  CHECK(n->wrappers == 0);
}

// ---- the memory pool -----------------------------------------------------

namespace {

/// An allocator that hands out fake addresses (nothing is ever touched) and
/// fails when told to.
class FakeAllocator final : public RawAllocator {
public:
  void *allocate(size_t bytes) override {
    ++allocations;
    if (failNext > 0) {
      --failNext;
      return nullptr;
    }
    if (failAlways)
      return nullptr;
    live += bytes;
    next += bytes + 4096;
    return reinterpret_cast<void *>(next);
  }
  void deallocate(void *, size_t bytes) override {
    ++deallocations;
    live -= bytes;
  }
  const char *name() const override { return "fake memory"; }

  uintptr_t next = 0x10000;
  size_t live = 0;
  int allocations = 0;
  int deallocations = 0;
  int failNext = 0;
  bool failAlways = false;
};

} // namespace

TEST_CASE("MemoryPool rounds requests to size classes") {
  CHECK(MemoryPool::roundedSize(0) == 0);
  CHECK(MemoryPool::roundedSize(1) == 512);
  CHECK(MemoryPool::roundedSize(512) == 512);
  CHECK(MemoryPool::roundedSize(513) == 1024);
  CHECK(MemoryPool::roundedSize(size_t(1) << 20) == size_t(1) << 20);
  // Past 1 MiB: eight classes per power of two (steps of 1/16 of the next
  // power of two), so at most 12.5% waste.
  CHECK(MemoryPool::roundedSize((size_t(1) << 20) + 1) ==
        (size_t(1) << 20) + (size_t(1) << 17));
  CHECK(MemoryPool::roundedSize(size_t(3) << 20) == size_t(3) << 20);
  for (size_t b : {size_t(1) << 21, (size_t(5) << 20) + 7, (size_t(1) << 30) - 3}) {
    size_t r = MemoryPool::roundedSize(b);
    CHECK(r >= b);
    CHECK(double(r - b) <= 0.125 * double(b));
  }
}

TEST_CASE("MemoryPool reuses freed blocks of the same class") {
  FakeAllocator raw;
  MemoryPool pool(raw);
  void *p;
  {
    Ref<Buffer> a = pool.allocate(1000);
    p = a->data();
    CHECK(a->bytes() == 1024);
    CHECK(pool.usedBytes() == 1024);
    CHECK(pool.totalBytes() == 1024);
  }
  CHECK(pool.usedBytes() == 0);
  CHECK(pool.totalBytes() == 1024);
  CHECK(pool.cachedBytes() == 1024);
  // Same class (1000 and 900 both round to 1024): the same block again.
  Ref<Buffer> b = pool.allocate(900);
  CHECK(b->data() == p);
  CHECK(raw.allocations == 1);
  // Another class needs another block.
  Ref<Buffer> c = pool.allocate(3000);
  CHECK(c->data() != p);
  CHECK(raw.allocations == 2);
  CHECK(pool.usedBytes() == 1024 + 3072);
  CHECK(pool.totalBytes() == 1024 + 3072);
}

TEST_CASE("MemoryPool gives a zero-byte request an empty buffer") {
  FakeAllocator raw;
  MemoryPool pool(raw);
  Ref<Buffer> z = pool.allocate(0);
  CHECK(z->data() == nullptr);
  CHECK(z->bytes() == 0);
  CHECK(raw.allocations == 0);
  CHECK(pool.usedBytes() == 0);
}

TEST_CASE("MemoryPool::freeCached returns cached blocks to the allocator") {
  FakeAllocator raw;
  MemoryPool pool(raw);
  { Ref<Buffer> a = pool.allocate(100), b = pool.allocate(5000); }
  CHECK(pool.totalBytes() == 512 + 5120);
  pool.freeCached();
  CHECK(pool.totalBytes() == 0);
  CHECK(raw.deallocations == 2);
  CHECK(raw.live == 0);
}

TEST_CASE("MemoryPool disabled returns blocks straight to the allocator") {
  FakeAllocator raw;
  MemoryPool pool(raw);
  { Ref<Buffer> a = pool.allocate(100); }
  CHECK(pool.cachedBytes() == 512);
  pool.setEnabled(false);
  CHECK_FALSE(pool.enabled());
  CHECK(pool.totalBytes() == 0); // disabling drops the cache
  {
    Ref<Buffer> a = pool.allocate(100);
    CHECK(pool.usedBytes() == 512);
  }
  CHECK(pool.usedBytes() == 0);
  CHECK(pool.totalBytes() == 0);
  CHECK(raw.live == 0);
  { Ref<Buffer> a = pool.allocate(100); }
  CHECK(raw.allocations == 3); // nothing was reused
}

TEST_CASE("MemoryPool::wouldGrow counts the cached blocks of each class") {
  FakeAllocator raw;
  MemoryPool pool(raw);
  { Ref<Buffer> a = pool.allocate(1000), b = pool.allocate(1000), c = pool.allocate(5000); }
  CHECK_FALSE(pool.wouldGrow({}));
  CHECK_FALSE(pool.wouldGrow({900, 1000}));  // two of class 1024 are cached
  CHECK(pool.wouldGrow({900, 1000, 1024}));  // a third is not
  CHECK_FALSE(pool.wouldGrow({5000, 0}));    // an empty request takes nothing
  CHECK(pool.wouldGrow({3000}));             // no block of class 3072
  pool.setEnabled(false);
  CHECK(pool.wouldGrow({1000}));             // nothing is reused when disabled
}

TEST_CASE("MemoryPool::collectionDue: a GC before growth, once a budget was handed out") {
  FakeAllocator raw;
  MemoryPool pool(raw);
  pool.setGrowthBudget(4096);
  Ref<Buffer> live = pool.allocate(2048);
  // Only 2048 handed out since the start: growth is cheaper than a GC.
  CHECK_FALSE(pool.collectionDue({2048}));
  { Ref<Buffer> dead = pool.allocate(2048); }
  CHECK(pool.allocatedSinceCollect() == 4096);
  // The budget is reached, but the cache holds a block of that class.
  CHECK_FALSE(pool.collectionDue({2048}));
  CHECK(pool.collectionDue({2048, 2048}));
  pool.noteCollected();
  CHECK(pool.allocatedSinceCollect() == 0);
  CHECK_FALSE(pool.collectionDue({2048, 2048}));
  // What arrays held at the last GC raises the budget past its least.
  Ref<Buffer> more = pool.allocate(8192), more2 = pool.allocate(8192);
  pool.noteCollected();
  CHECK(pool.collectBudget() == 2048 + 2 * 8192);
  Ref<Buffer> next = pool.allocate(8192);
  CHECK_FALSE(pool.collectionDue({8192}));
  Ref<Buffer> next2 = pool.allocate(8192), next3 = pool.allocate(2048);
  CHECK(pool.collectionDue({8192}));
  // allocateInternal is the engine's own memory, never garbage.
  pool.noteCollected();
  Ref<Buffer> internal = pool.allocateInternal(1 << 20);
  CHECK(pool.allocatedSinceCollect() == 0);
}

TEST_CASE("MemoryPool out of memory: frees the cache, retries, then throws") {
  FakeAllocator raw;
  MemoryPool pool(raw);
  { Ref<Buffer> cached = pool.allocate(100); }
  CHECK(pool.cachedBytes() == 512);
  // The first attempt fails; after the cache is freed the retry succeeds.
  raw.failNext = 1;
  Ref<Buffer> b = pool.allocate(2000);
  CHECK(b->bytes() == 2048);
  CHECK(pool.cachedBytes() == 0); // the cached 512 went back
  CHECK(pool.usedBytes() == 2048);
  CHECK(pool.totalBytes() == 2048);

  // Failing for good raises OutOfMemory with the allocator's name.
  raw.failAlways = true;
  bool threw = false;
  try {
    pool.allocate(4096);
  } catch (const Error &e) {
    threw = true;
    CHECK(e.kind() == ErrorKind::OutOfMemory);
    CHECK(e.message().find("fake memory") != std::string::npos);
    CHECK(e.message().find("4096") != std::string::npos);
  }
  CHECK(threw);
  // The failed request left the counters as they were.
  CHECK(pool.usedBytes() == 2048);
  CHECK(pool.totalBytes() == 2048);
}

TEST_CASE("MemoryPool out of memory asks the pressure callback to free blocks") {
  FakeAllocator raw;
  MemoryPool pool(raw);
  Ref<Buffer> held = pool.allocate(1 << 16);
  void *p = held->data();
  int calls = 0;
  // The "GC" finds a dead wrapper and drops its buffer into the cache.
  pool.setPressureCallback([&] {
    ++calls;
    held.reset();
  });
  raw.failAlways = true;
  Ref<Buffer> again = pool.allocate(1 << 16);
  CHECK(calls == 1);
  CHECK(again->data() == p);
  CHECK(pool.usedBytes() == size_t(1) << 16);
}

TEST_CASE("MemoryPool calls the pressure callback before growing far") {
  FakeAllocator raw;
  MemoryPool pool(raw);
  int calls = 0;
  pool.setPressureCallback([&] { ++calls; });
  std::vector<Ref<Buffer>> held;
  // 64 MiB at a time: the callback comes once the pool would pass 256 MiB
  // of growth since the last one.
  for (int i = 0; i < 4; ++i)
    held.push_back(pool.allocate(size_t(64) << 20));
  CHECK(calls == 0);
  held.push_back(pool.allocate(size_t(64) << 20));
  CHECK(calls == 1);
  for (int i = 0; i < 3; ++i)
    held.push_back(pool.allocate(size_t(64) << 20));
  CHECK(calls == 1);
  // Blocks the cache holds never count as growth.
  held.clear();
  for (int i = 0; i < 8; ++i)
    held.push_back(pool.allocate(size_t(64) << 20));
  CHECK(calls == 1);
  CHECK(raw.allocations == 8);
}

// ---- the pending list's periodic cut --------------------------------------

namespace {

/// Takes over the pending list's flush hook and limits for one test: every
/// budget flush "computes" the pending nodes (materializes them over no
/// buffer, which drops their inputs, as a real flush does) and remembers how
/// long the segment was.
struct FakeFlusher {
  PendingList &pending = PendingList::get();
  PendingList::Limits saved = pending.limits();
  std::vector<size_t> segments;
  std::vector<OpKind> lastOps; ///< each segment's last node's op
  uint64_t hardBefore = pending.hardFlushes;

  FakeFlusher() {
    pending.limits() = PendingList::Limits();
    pending.setFlushHook([this] {
      segments.push_back(pending.liveCount());
      llvm::SmallVector<NodeRef, 128> nodes;
      pending.collect(nodes);
      if (!nodes.empty())
        lastOps.push_back(nodes.back()->op());
      for (const NodeRef &n : nodes)
        n->materialize(Ref<Buffer>(), Layout::contiguous(n->shape()));
      pending.clearAfterFlush();
    });
  }
  ~FakeFlusher() {
    pending.setFlushHook(nullptr);
    pending.limits() = saved;
  }
  uint64_t hardFlushes() const { return pending.hardFlushes - hardBefore; }
};

/// Records `iterations` of a loop body of `period` ops. Every op in the body
/// has a distinct signature (its second input lies a distinct distance
/// back), so only one point per period repeats the window of a cut.
void recordLoop(int period, int iterations) {
  NodeRef prev = record(OpKind::Fill, DType::DFloat, {8});
  NodeRef iterStart = prev;
  for (int it = 0; it < iterations; ++it) {
    NodeRef start = record(OpKind::Add, DType::DFloat, {8}, {prev, iterStart});
    prev = start;
    for (int j = 1; j < period; ++j)
      prev = record(OpKind::Add, DType::DFloat, {8}, {prev, start});
    iterStart = start;
  }
}

} // namespace

TEST_CASE("PendingList cuts a loop at the same phase every segment") {
  // A fixed budget B alone would cut a loop of period P at P/gcd(B, P)
  // different phases; cutting where the window repeats gives every segment
  // after the first the same length, a whole number of periods.
  const size_t budget = PendingList::Limits().nodes;
  for (int period : {7, 11, 13, 25}) {
    CAPTURE(period);
    FakeFlusher flusher;
    recordLoop(period, int(16 * budget) / period); // a dozen segments or more
    REQUIRE(flusher.segments.size() >= 5);
    size_t steady = flusher.segments[1];
    CHECK(steady % period == 0);
    CHECK(steady >= budget);
    CHECK(steady < budget + size_t(period));
    for (size_t i = 1; i < flusher.segments.size(); ++i) {
      CAPTURE(i);
      CHECK(flusher.segments[i] == steady);
    }
    // Only the first segment may have needed the hard limit (a window left
    // over from an earlier loop never comes round).
    CHECK(flusher.hardFlushes() <= 1);
    PendingList::get().clearAfterFlush();
  }
}

TEST_CASE("PendingList splits the segment of a loop that reads into chunks") {
  // A loop of period 13 that reads every 20 iterations (260 nodes): the
  // budget becomes a quarter of that, so three chunks go to the device
  // while the host records and the read flushes the fourth.
  FakeFlusher flusher;
  PendingList &pending = PendingList::get();
  const int period = 13;
  auto readFlush = [&] {
    pending.noteRead();
    llvm::SmallVector<NodeRef, 128> nodes;
    pending.collect(nodes);
    for (const NodeRef &n : nodes)
      n->materialize(Ref<Buffer>(), Layout::contiguous(n->shape()));
    pending.clearAfterFlush();
  };
  NodeRef prev = record(OpKind::Fill, DType::DFloat, {8});
  NodeRef iterStart = prev;
  auto iteration = [&] {
    NodeRef start = record(OpKind::Add, DType::DFloat, {8}, {prev, iterStart});
    prev = start;
    for (int j = 1; j < period; ++j)
      prev = record(OpKind::Add, DType::DFloat, {8}, {prev, start});
    iterStart = start;
  };
  std::vector<size_t> betweenReads;
  for (int read = 0; read < 12; ++read) {
    size_t before = flusher.segments.size();
    for (int it = 0; it < 20; ++it)
      iteration();
    betweenReads.push_back(flusher.segments.size() - before);
    readFlush();
  }
  CAPTURE(betweenReads);
  CAPTURE(flusher.segments);
  // The first reads set the period; from then on, three budget flushes
  // between reads, at least a chunk each, and the same three every time
  // (the same plans). Where in the iteration they cut depends on the phase
  // the list anchored at, which an earlier loop may have set.
  for (size_t r = 3; r < betweenReads.size(); ++r)
    CHECK(betweenReads[r] == 3);
  for (size_t i = flusher.segments.size() - 9; i < flusher.segments.size(); ++i) {
    CHECK(flusher.segments[i] >= 260 / 4);
    CHECK(flusher.segments[i] == flusher.segments[i - 3]);
  }
  // Reads stop: back to the plain budget.
  size_t before = flusher.segments.size();
  for (int it = 0; it < 400; ++it)
    iteration();
  REQUIRE(flusher.segments.size() > before + 2);
  CHECK(flusher.segments.back() >= PendingList::Limits().nodes);
  CHECK(pending.budgetNodes() == PendingList::Limits().nodes);
  // Reads twice an iteration are too close to split.
  for (int it = 0; it < 50; ++it) {
    iteration();
    readFlush();
  }
  CHECK(pending.budgetNodes() == PendingList::Limits().nodes);
  pending.clearAfterFlush();
}

TEST_CASE("PendingList's hard limit cuts a loop that never repeats") {
  FakeFlusher flusher;
  PendingList::get().limits().nodes = 64; // 2000 nodes pass the limit often
  std::mt19937 rng(12345);
  std::deque<NodeRef> recent;
  recent.push_back(record(OpKind::Fill, DType::DFloat, {8}));
  // Each op reads the one before it and one a random distance back, so no
  // window of signatures comes round again.
  for (int i = 0; i < 2000; ++i) {
    size_t back = rng() % recent.size();
    NodeRef n = record(OpKind::Add, DType::DFloat, {8},
                       {recent.back(), recent[recent.size() - 1 - back]});
    recent.push_back(n);
    if (recent.size() > 24)
      recent.pop_front();
  }
  const PendingList::Limits &l = PendingList::get().limits();
  size_t hard = l.nodes * l.hardFactor;
  REQUIRE(flusher.segments.size() == 2000 / hard);
  REQUIRE(flusher.segments.size() >= 5);
  for (size_t s : flusher.segments)
    CHECK(s == hard);
  CHECK(flusher.hardFlushes() == flusher.segments.size());
  CHECK(PendingList::get().liveCount() < hard);
  PendingList::get().clearAfterFlush();
}

TEST_CASE("PendingList cuts between ops, never inside one") {
  // Ops of seven nodes each (a composite op such as argmax), in a stream
  // that never repeats, so only the hard limit cuts: every cut falls
  // before an op's first node, and an op that crosses the limit finishes
  // first. The inner scope is part of its op.
  FakeFlusher flusher;
  PendingList::get().limits().nodes = 64;
  std::mt19937 rng(777);
  std::deque<NodeRef> recent;
  recent.push_back(record(OpKind::Fill, DType::DFloat, {8}));
  const int opNodes = 7;
  for (int op = 0; op < 400; ++op) {
    PendingList::OpScope scope;
    for (int j = 0; j < opNodes; ++j) {
      PendingList::OpScope inner;
      size_t back = rng() % recent.size();
      recent.push_back(record(OpKind::Add, DType::DFloat, {8},
                              {recent.back(), recent[recent.size() - 1 - back]}));
      if (recent.size() > 24)
        recent.pop_front();
    }
  }
  const PendingList::Limits &l = PendingList::get().limits();
  size_t hard = l.nodes * l.hardFactor;
  CAPTURE(flusher.segments);
  REQUIRE(flusher.segments.size() >= 2);
  // The first segment holds the Fill besides whole ops.
  CHECK(flusher.segments[0] % opNodes == 1);
  for (size_t i = 1; i < flusher.segments.size(); ++i) {
    CHECK(flusher.segments[i] % opNodes == 0);
    CHECK(flusher.segments[i] >= hard);
    CHECK(flusher.segments[i] < hard + opNodes);
  }
  PendingList::get().clearAfterFlush();
}

TEST_CASE("PendingList cuts a loop just after its full reduction") {
  // A loop of period 11 whose fifth op is a 0-dim sum, as a CG iteration's
  // dot: the kernel that makes a grid's total ends there anyway, so every
  // cut falls just after it and splits no fused kernel. (At the plain
  // budget's phase, 1024 nodes, the cut would fall after op 1024 % 11.)
  FakeFlusher flusher;
  const int period = 11, sumAt = 4;
  NodeRef prev = record(OpKind::Fill, DType::DFloat, {8});
  NodeRef iterStart = prev;
  for (int it = 0; it < 2000; ++it) {
    NodeRef start = record(OpKind::Add, DType::DFloat, {8}, {prev, iterStart});
    prev = start;
    NodeRef total;
    for (int j = 1; j < period; ++j) {
      if (j == sumAt) {
        total = record(OpKind::Sum, DType::DFloat, {}, {prev});
        prev = total;
      } else {
        prev = record(OpKind::Add, DType::DFloat, {8}, {prev, start});
      }
    }
    iterStart = start;
  }
  CAPTURE(flusher.segments);
  REQUIRE(flusher.segments.size() >= 5);
  for (size_t i = 0; i < flusher.lastOps.size(); ++i) {
    CAPTURE(i);
    CHECK(flusher.lastOps[i] == OpKind::Sum);
  }
  for (size_t i = 1; i < flusher.segments.size(); ++i)
    CHECK(flusher.segments[i] % period == 0);
  PendingList::get().clearAfterFlush();
}

TEST_CASE("PendingList flushes by bytes as well as by node count") {
  // DESIGN.md: the pending DAG is bounded "by node count and bytes". Nodes
  // of 8 KiB against a byte budget of 64 KiB: the budget is spent after 8
  // nodes, long before the node budget.
  FakeFlusher flusher;
  PendingList::get().limits().bytes = size_t(64) << 10;
  NodeRef prev = record(OpKind::Fill, DType::DFloat, {1024});
  NodeRef start = prev;
  for (int it = 0; it < 60; ++it) {
    NodeRef s = record(OpKind::Add, DType::DFloat, {1024}, {prev, start});
    prev = s;
    for (int j = 1; j < 7; ++j)
      prev = record(OpKind::Add, DType::DFloat, {1024}, {prev, s});
    start = s;
  }
  CAPTURE(flusher.segments);
  REQUIRE(flusher.segments.size() >= 3);
  for (size_t i = 1; i < flusher.segments.size(); ++i) {
    CHECK(flusher.segments[i] < PendingList::Limits().nodes);
    CHECK(flusher.segments[i] % 7 == 0);
  }
  PendingList::get().clearAfterFlush();
}

TEST_CASE("PendingList forgets nodes that die while pending") {
  PendingList &pending = PendingList::get();
  size_t before = pending.liveCount();
  size_t bytesBefore = pending.liveBytes();
  {
    NodeRef a = record(OpKind::Fill, DType::DFloat, {10});
    NodeRef b = record(OpKind::Neg, DType::DFloat, {10}, {a});
    CHECK(pending.liveCount() == before + 2);
    CHECK(pending.liveBytes() == bytesBefore + 160);
  }
  CHECK(pending.liveCount() == before);
  CHECK(pending.liveBytes() == bytesBefore);
}

// ---- inspect text (numo_semantics.md section 2) ---------------------------

namespace {

std::string inspectOf(std::string_view cls, bool view, DType t, Shape shape,
                      const std::vector<double> &values,
                      InspectLimits limits = InspectLimits()) {
  std::vector<unsigned char> bytes(values.size() * sizeOf(t));
  for (size_t i = 0; i < values.size(); ++i)
    dispatchDType(t, [&]<DType D, class T>() {
      T v = T(values[i]);
      std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
    });
  return inspectText(inspectHeader(cls, view, shape), t, shape, bytes.data(),
                     false, limits);
}

bool endsWith(const std::string &s, std::string_view tail) {
  return s.size() >= tail.size() &&
         std::string_view(s).substr(s.size() - tail.size()) == tail;
}

std::vector<double> seqValues(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = double(i);
  return v;
}

} // namespace

TEST_CASE("inspect: the header") {
  CHECK(inspectHeader("Numo::DFloat", false, {3, 5}) == "Numo::DFloat#shape=[3,5]");
  CHECK(inspectHeader("Numo::DFloat", true, {}) == "Numo::DFloat(view)#shape=[]");
}

TEST_CASE("inspect: DFloat.new(3,5).seq") {
  CHECK(inspectOf("Numo::DFloat", false, DType::DFloat, {3, 5}, seqValues(15)) ==
        "Numo::DFloat#shape=[3,5]\n[[0, 1, 2, 3, 4], \n [5, 6, 7, 8, 9], \n"
        " [10, 11, 12, 13, 14]]");
}

TEST_CASE("inspect: small arrays of each kind") {
  CHECK(inspectOf("Numo::SFloat", false, DType::SFloat, {2}, {1.5, 2.25}) ==
        "Numo::SFloat#shape=[2]\n[1.5, 2.25]");
  CHECK(inspectOf("Numo::Int32", false, DType::Int32, {2, 2}, {1, 2, 3, 4}) ==
        "Numo::Int32#shape=[2,2]\n[[1, 2], \n [3, 4]]");
  CHECK(inspectOf("Numo::Bit", false, DType::Bit, {3}, {1, 0, 1}) ==
        "Numo::Bit#shape=[3]\n[1, 0, 1]");
  CHECK(inspectOf("Numo::DFloat", true, DType::DFloat, {5}, {5, 6, 7, 8, 9}) ==
        "Numo::DFloat(view)#shape=[5]\n[5, 6, 7, 8, 9]");
}

TEST_CASE("inspect: element formats") {
  auto one = [](DType t, double v) {
    return inspectOf("X", false, t, {}, {v});
  };
  CHECK(one(DType::DFloat, 1e-05) == "X#shape=[]\n1e-05");
  CHECK(one(DType::DFloat, 1e20) == "X#shape=[]\n1e+20");
  CHECK(one(DType::DFloat, 1.0 / 3) == "X#shape=[]\n0.333333");
  CHECK(one(DType::DFloat, 123456789) == "X#shape=[]\n1.23457e+08");
  CHECK(one(DType::DFloat, -0.0) == "X#shape=[]\n-0");
  CHECK(one(DType::Int8, -5) == "X#shape=[]\n-5");
  CHECK(one(DType::UInt8, 250) == "X#shape=[]\n250");
  CHECK(one(DType::Int64, -1234567890123.0) == "X#shape=[]\n-1234567890123");
  CHECK(one(DType::Bit, 1) == "X#shape=[]\n1");
  double inf = 1.0 / 0.0;
  CHECK(one(DType::DFloat, inf) == "X#shape=[]\ninf");
  CHECK(one(DType::DFloat, -inf) == "X#shape=[]\n-inf");
}

TEST_CASE("inspect: 1000 elements elide past 80 columns") {
  CHECK(inspectOf("Numo::DFloat", false, DType::DFloat, {1000}, seqValues(1000)) ==
        "Numo::DFloat#shape=[1000]\n[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
        "13, 14, 15, 16, 17, 18, 19, 20, ...]");
}

TEST_CASE("inspect: 2x100 elides each row") {
  std::vector<double> v = seqValues(200);
  CHECK(inspectOf("Numo::DFloat", false, DType::DFloat, {2, 100}, v) ==
        "Numo::DFloat#shape=[2,100]\n[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
        "13, 14, 15, 16, 17, 18, 19, ...], \n [100, 101, 102, 103, 104, 105, "
        "106, 107, 108, 109, 110, 111, 112, 113, ...]]");
}

TEST_CASE("inspect: 30x3 stops after 20 rows without closing brackets") {
  std::string want = "Numo::Int32#shape=[30,3]\n[";
  for (int r = 0; r < 20; ++r) {
    if (r)
      want += " ";
    want += "[" + std::to_string(3 * r) + ", " + std::to_string(3 * r + 1) +
            ", " + std::to_string(3 * r + 2) + "], \n";
  }
  want += " ...";
  std::string got = inspectOf("Numo::Int32", false, DType::Int32, {30, 3}, seqValues(90));
  CHECK(got == want);
  // The tail the notes quote.
  CHECK(endsWith(got, "\n [54, 55, 56], \n [57, 58, 59], \n ..."));
}

TEST_CASE("inspect: a 3-D array indents its open axes") {
  CHECK(inspectOf("Numo::Int32", false, DType::Int32, {2, 3, 4}, seqValues(24)) ==
        "Numo::Int32#shape=[2,3,4]\n[[[0, 1, 2, 3], \n  [4, 5, 6, 7], \n"
        "  [8, 9, 10, 11]], \n [[12, 13, 14, 15], \n  [16, 17, 18, 19], \n"
        "  [20, 21, 22, 23]]]");
}

TEST_CASE("inspect: 0-dim, empty and never written") {
  CHECK(inspectOf("Numo::DFloat", false, DType::DFloat, {}, {3.5}) ==
        "Numo::DFloat#shape=[]\n3.5");
  CHECK(inspectOf("Numo::DFloat", true, DType::DFloat, {}, {6}) ==
        "Numo::DFloat(view)#shape=[]\n6");
  CHECK(inspectOf("Numo::DFloat", true, DType::DFloat, {0}, {}) ==
        "Numo::DFloat(view)#shape=[0][]");
  CHECK(inspectText(inspectHeader("Numo::DFloat", false, {3}), DType::DFloat,
                    {3}, nullptr, true, InspectLimits()) ==
        "Numo::DFloat#shape=[3](empty)");
  CHECK(inspectText(inspectHeader("Numo::DFloat", false, {0, 3}), DType::DFloat,
                    {0, 3}, nullptr, true, InspectLimits()) ==
        "Numo::DFloat#shape=[0,3](empty)");
}

TEST_CASE("inspect: unlimited columns and rows") {
  InspectLimits none{0, 0};
  std::string got = inspectOf("A", false, DType::Int32, {40}, seqValues(40), none);
  CHECK(got.find("...") == std::string::npos);
  CHECK(endsWith(got, ", 38, 39]"));
  std::string rows = inspectOf("A", false, DType::Int32, {30, 1}, seqValues(30), none);
  CHECK(rows.find("...") == std::string::npos);
  CHECK(endsWith(rows, "[28], \n [29]]"));
}
