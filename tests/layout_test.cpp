// Layout, construction and I/O below the Ruby layer: the view layouts
// (swapaxes, expand_dims, squeeze, reverse, diagonal, rot90, split), the
// binary form's packing, the sync warnings' decisions, and the plans the
// new ops record: concatenate folds its parts into one kernel, eye writes
// its diagonal with a scatter, tile and repeat copy broadcast views. Where
// the build has CUDA, every kernel of those plans is generated and
// compiled by NVRTC (no GPU needed).
#include "core/device.h"
#include "core/host_hooks.h"
#include "core/sync_warnings.h"
#include "fusion/lower.h"
#include "ops/binary_io.h"
#include "ops/construction.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/join.h"
#include "ops/layout.h"

#ifdef CUMO_HAVE_CUDA
#include "fusion/cuda/nvrtc_compiler.h"
#include "fusion/cuda_codegen.h"
#endif

#include "doctest_printers.h"


#include <memory>
#include <string>
#include <vector>

using namespace cumo;

namespace {

using Handle = std::unique_ptr<ArrayHandle>;

Layout makeLayout(Shape shape, Strides strides, int64_t offset) {
  Layout l;
  l.shape = std::move(shape);
  l.strides = std::move(strides);
  l.offset = offset;
  return l;
}

std::vector<int64_t> vec(llvm::ArrayRef<int64_t> a) { return {a.begin(), a.end()}; }

ErrorKind kindOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.kind();
  }
  FAIL("no error");
  return ErrorKind::Internal;
}

/// The message of the error `f` throws.
std::string messageOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.message();
  }
  return "";
}

Handle materialized(DType t, Shape shape) {
  if (!haveCurrentDevice())
    setCurrentDevice(hostDevice());
  std::vector<char> bytes(size_t(numElements(shape)) * sizeOf(t), 1);
  return std::make_unique<ArrayHandle>(uploadNode(t, shape, bytes.data()));
}

void compilePlan(const Plan &plan) {
#ifdef CUMO_HAVE_CUDA
  static DeviceModel model;
  for (const Kernel &k : plan.kernels) {
    KernelSource src = generateCuda(k, model);
    try {
      CHECK(!NvrtcCompiler::get().compileToCubin(src, 9, 0).empty());
    } catch (const Error &e) {
      FAIL(e.message() << "\n" << src.source);
    }
  }
#else
  (void)plan;
#endif
}

} // namespace

TEST_CASE("views: swapaxes, expand_dims, squeeze") {
  Layout a = Layout::contiguous({2, 3, 4});
  Layout s = swapaxesLayout(a, 0, -1);
  CHECK(vec(s.shape) == std::vector<int64_t>{4, 3, 2});
  CHECK(vec(s.strides) == std::vector<int64_t>{1, 4, 12});
  CHECK(kindOf([&] { swapaxesLayout(a, 0, 3); }) == ErrorKind::Dimension);
  CHECK(messageOf([&] { swapaxesLayout(a, -4, 0); }).rfind("[swapaxes]", 0) == 0);

  Layout e = expandDimsLayout(a, -1);
  CHECK(vec(e.shape) == std::vector<int64_t>{2, 3, 4, 1});
  CHECK(vec(expandDimsLayout(a, 1).shape) == std::vector<int64_t>{2, 1, 3, 4});
  CHECK(kindOf([&] { expandDimsLayout(a, 4); }) == ErrorKind::Dimension);
  CHECK(kindOf([&] { expandDimsLayout(a, -5); }) == ErrorKind::Dimension);

  Layout ones = makeLayout({1, 3, 1}, {7, 2, 5}, 4);
  Layout q = squeezeLayout(ones, {});
  CHECK(vec(q.shape) == std::vector<int64_t>{3});
  CHECK(vec(q.strides) == std::vector<int64_t>{2});
  CHECK(q.offset == 4);
  CHECK(vec(squeezeLayout(ones, {-1}).shape) == std::vector<int64_t>{1, 3});
  CHECK(kindOf([&] { squeezeLayout(ones, {1}); }) == ErrorKind::Shape);
  CHECK(kindOf([&] { squeezeLayout(ones, {0, 0}); }) == ErrorKind::Argument);
  CHECK(kindOf([&] { squeezeLayout(ones, {3}); }) == ErrorKind::Dimension);
}

TEST_CASE("reverse negates strides and moves the offset to the far end") {
  Layout a = Layout::contiguous({2, 3});
  Layout r = reverseLayout(a, {}, "reverse");
  CHECK(vec(r.strides) == std::vector<int64_t>{-3, -1});
  CHECK(r.offset == 5);
  CHECK(r.extent() == std::pair<int64_t, int64_t>{0, 6});
  Layout r1 = reverseLayout(a, {-1}, "reverse");
  CHECK(vec(r1.strides) == std::vector<int64_t>{3, -1});
  CHECK(r1.offset == 2);
  // reversing twice is the identity; an empty axis has nothing to move
  CHECK(reverseLayout(r, {}, "reverse") == a);
  Layout empty = Layout::contiguous({0, 3});
  CHECK(reverseLayout(empty, {0}, "reverse").offset == 0);
  CHECK(kindOf([&] { reverseLayout(a, {2}, "flip"); }) == ErrorKind::Dimension);
  CHECK(messageOf([&] { reverseLayout(a, {2}, "flip"); }).rfind("[flip]", 0) == 0);
}

TEST_CASE("diagonal: one stride over two axes") {
  Layout a = Layout::contiguous({4, 5});
  Layout d = diagonalLayout(a, 0, std::nullopt, "diagonal");
  CHECK(vec(d.shape) == std::vector<int64_t>{4});
  CHECK(vec(d.strides) == std::vector<int64_t>{6});
  Layout up = diagonalLayout(a, 2, std::nullopt, "diagonal");
  CHECK(vec(up.shape) == std::vector<int64_t>{3});
  CHECK(up.offset == 2);
  Layout down = diagonalLayout(a, -3, std::nullopt, "diagonal");
  CHECK(vec(down.shape) == std::vector<int64_t>{1});
  CHECK(down.offset == 15);
  // the other axes come first
  Layout b = Layout::contiguous({2, 3, 3});
  Layout db = diagonalLayout(b, 0, std::pair<int64_t, int64_t>{1, 2}, "diagonal");
  CHECK(vec(db.shape) == std::vector<int64_t>{2, 3});
  CHECK(vec(db.strides) == std::vector<int64_t>{9, 4});
  CHECK(kindOf([&] { diagonalLayout(Layout::contiguous({3}), 0, std::nullopt, "diagonal"); }) ==
        ErrorKind::Dimension);
  CHECK(kindOf([&] { diagonalLayout(a, 5, std::nullopt, "diagonal"); }) == ErrorKind::Argument);
  CHECK(kindOf([&] { diagonalLayout(a, -4, std::nullopt, "diagonal"); }) == ErrorKind::Argument);
  CHECK(kindOf([&] {
          diagonalLayout(a, 0, std::pair<int64_t, int64_t>{1, -1}, "diagonal");
        }) == ErrorKind::Argument);
}

TEST_CASE("rot90 composes swapaxes and reverse") {
  Layout a = Layout::contiguous({2, 3});
  Layout r1 = rot90Layout(a, 1, 0, 1);
  CHECK(vec(r1.shape) == std::vector<int64_t>{3, 2});
  CHECK(vec(r1.strides) == std::vector<int64_t>{-1, 3});
  CHECK(r1.offset == 2);
  CHECK(rot90Layout(a, 2, 0, 1) == reverseLayout(a, {}, "reverse"));
  CHECK(rot90Layout(a, -3, 0, 1) == r1);
  CHECK(rot90Layout(a, 4, 0, 1) == a);
  CHECK(kindOf([&] { rot90Layout(a, 1, 0, 2); }) == ErrorKind::Dimension);
  CHECK(kindOf([&] { rot90Layout(a, 1, 1, -1); }) == ErrorKind::Argument);
}

TEST_CASE("split into sections and at indices") {
  Layout a = Layout::contiguous({7, 2});
  auto parts = splitLayouts(a, 3, 0, "split");
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].shape[0] == 3);
  CHECK(parts[1].shape[0] == 2);
  CHECK(parts[1].offset == 6);
  CHECK(parts[2].offset == 10);
  auto at = splitLayoutsAt(a, {2, -2, 9}, 0, "split");
  REQUIRE(at.size() == 4);
  CHECK(at[0].shape[0] == 2);
  CHECK(at[1].shape[0] == 3); // 2 ... 5
  CHECK(at[2].shape[0] == 2); // 5 ... 7
  CHECK(at[3].shape[0] == 0);
  auto back = splitLayoutsAt(a, {4, 1}, 0, "split");
  CHECK(back[1].shape[0] == 0); // a bound that moves backwards: empty
  CHECK(back[2].shape[0] == 3); // and the next part starts where the last ended
  CHECK(kindOf([&] { splitLayouts(a, 0, 0, "split"); }) == ErrorKind::Argument);
  CHECK(kindOf([&] { splitLayouts(a, 2, 2, "hsplit"); }) == ErrorKind::Argument);
}

TEST_CASE("the binary form packs Bit eight to a byte") {
  std::vector<char> dense = {1, 0, 1, 1, 0, 0, 0, 0, 1};
  std::string packed = packBinary(DType::Bit, dense.data(), 9);
  REQUIRE(packed.size() == 2);
  CHECK(uint8_t(packed[0]) == 13);
  CHECK(uint8_t(packed[1]) == 1);
  CHECK(unpackBinary(DType::Bit, packed.data(), 9) == dense);
  CHECK(binaryByteSize(DType::Bit, 16) == 2);
  CHECK(binaryByteSize(DType::DFloat, 3) == 24);
  CHECK(vec(fromBinaryShape(DType::Int16, 7, std::nullopt, "from_binary")) ==
        std::vector<int64_t>{3});
  CHECK(vec(fromBinaryShape(DType::Bit, 2, std::nullopt, "from_binary")) ==
        std::vector<int64_t>{16});
  CHECK(kindOf([] { fromBinaryShape(DType::Int32, 3, std::nullopt, "from_binary"); }) ==
        ErrorKind::Argument);
  CHECK(kindOf([] { fromBinaryShape(DType::Int32, 8, Shape{3}, "from_binary"); }) ==
        ErrorKind::Argument);
  CHECK(messageOf([] { fromBinaryShape(DType::Int32, 8, Shape{3}, "from_binary"); })
            .rfind("[from_binary]", 0) == 0);
}

TEST_CASE("sync warnings: once per line, every sync, or none") {
  HostHooks saved = HostHooks::get();
  std::vector<std::string> printed;
  std::string line = "a.rb:1";
  HostHooks::get().sourceLocation = [&] { return line; };
  HostHooks::get().warn = [&](const std::string &m) { printed.push_back(m); };
  SyncWarnings &w = SyncWarnings::get();
  w.reset();

  w.configure(false, true);
  w.note();
  CHECK(printed.empty());

  w.configure(true, true);
  w.note();
  w.note();
  line = "a.rb:2";
  w.note();
  REQUIRE(printed.size() == 2);
  CHECK(printed[0] == SyncWarnings::message("a.rb:1"));
  CHECK(printed[1].find("a.rb:2") != std::string::npos);

  w.configure(std::nullopt, false);
  w.note();
  w.note();
  CHECK(printed.size() == 4);

  w.configure(false, true);
  w.reset();
  HostHooks::get() = saved;
}

TEST_CASE("concatenate folds every part into one kernel") {
  Handle x = materialized(DType::DFloat, {4, 3});
  Handle top = std::make_unique<ArrayHandle>(x->storageRef(),
                                             reverseLayout(x->layout(), {0}, "reverse"));
  std::vector<const ArrayHandle *> parts = {top.get(), x.get()};
  NodeRef joined = joinNode(JoinKind::Concatenate, parts, DType::DFloat, 0, -1, "concatenate");
  CHECK(vec(joined->shape()) == std::vector<int64_t>{8, 3});
  Plan p = planForRoots({joined});
  REQUIRE(p.kernels.size() == 1);
  compilePlan(p);

  // stack along the last axis: each part a strided box
  NodeRef stacked = joinNode(JoinKind::Stack, parts, DType::SFloat, -1, -1, "stack");
  CHECK(vec(stacked->shape()) == std::vector<int64_t>{4, 3, 2});
  Plan ps = planForRoots({stacked});
  REQUIRE(ps.kernels.size() == 1);
  compilePlan(ps);

  Handle other = materialized(DType::DFloat, {4, 2});
  std::vector<const ArrayHandle *> bad = {x.get(), other.get()};
  CHECK(kindOf([&] { joinNode(JoinKind::Concatenate, bad, DType::DFloat, 0, -1, "concatenate"); }) ==
        ErrorKind::Shape);
  CHECK(kindOf([&] { joinNode(JoinKind::Concatenate, parts, DType::DFloat, 2, -1, "concatenate"); }) ==
        ErrorKind::Argument);
}

TEST_CASE("eye, tile, repeat, logseq and rand_norm plans compile") {
  Handle e = materialized(DType::SFloat, {5, 6});
  eyeInto(*e, Scalar::ofFloat(2.5), 1);
  compilePlan(planForRoots({e->storage().currentRef()}));
  CHECK(kindOf([&] { eyeInto(*e, Scalar::ofInt(1), 6); }) == ErrorKind::Argument);

  Handle x = materialized(DType::Int32, {3, 4});
  ArrayHandle view(x->storageRef(), reverseLayout(x->layout(), {1}, "reverse"));
  NodeRef t = tileNode(view, {2, 1, 3});
  CHECK(vec(t->shape()) == std::vector<int64_t>{2, 3, 12});
  compilePlan(planForRoots({t}));
  NodeRef r = repeatNode(view, 3, 1);
  CHECK(vec(r->shape()) == std::vector<int64_t>{3, 12});
  compilePlan(planForRoots({r}));
  NodeRef rc = repeatNode(view, llvm::ArrayRef<int64_t>{2, 0, 1}, 0);
  CHECK(vec(rc->shape()) == std::vector<int64_t>{3, 4});
  Plan prc = planForRoots({rc});
  CHECK(prc.kernels.size() == 1);
  compilePlan(prc);

  compilePlan(planForRoots({logseqNode(DType::SFloat, {10}, Scalar::ofInt(0),
                                 Scalar::ofFloat(0.5), Scalar::ofFloat(2))}));
  Plan pn = planForRoots({randNormNode(DType::DFloat, {100}, Scalar::ofFloat(1),
                                 Scalar::ofFloat(2))});
  CHECK(pn.kernels.size() == 1);
  compilePlan(pn);
  compilePlan(planForRoots({randNormNode(DType::SFloat, {7, 3}, Scalar::ofInt(0),
                                   Scalar::ofInt(1))}));
  CHECK(kindOf([] { randNormNode(DType::Int32, {3}, Scalar::ofInt(0), Scalar::ofInt(1)); }) ==
        ErrorKind::NoMethod);
}
