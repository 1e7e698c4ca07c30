// Library epilogues (fusion/library_epilogue.h): which consumer of a cuBLAS
// product cuBLASLt adds, checked by the plan's structure and by what
// libraryEpilogueOf reads from the lowered kernel (what the CUDA executor
// hands cuBLASLt); and the CPU executor's answers against the same
// expression with the product read back first.
#include "fusion/cuda_codegen.h"
#include "fusion/library_epilogue.h"
#include "fusion/plan.h"

#include "test_helpers.h"

#include <doctest/doctest.h>

using namespace cumo;
using namespace cumo::test;

namespace {

constexpr int64_t kK = 32, kCols = 24;

/// A product cuBLAS computes: `rows` (more than kMaxSmallRows) rows of kK
/// by a kK x kCols weight, with a bias and a residual, materialized.
struct Prefill {
  explicit Prefill(Shape hs, DType t = DType::SFloat)
      : h(upload(t, hs, ramp(numElements(hs), 0.25, 13))),
        w(upload(t, {kK, kCols}, ramp(kK * kCols, 0.125, 13))),
        b(upload(t, {kCols}, ramp(kCols, 0.5, 13))),
        x(upload(t, resultShape(hs), ramp(numElements(resultShape(hs)), 0.75, 13))) {}
  static Shape resultShape(Shape hs) {
    hs.back() = kCols;
    return hs;
  }
  H product() const { return wrap(matmulOp("matmul", *h, *w)); }
  H h, w, b, x;
};

/// The only kernel of `plan` that is a product.
const Kernel &productKernel(const Plan &plan) {
  const Kernel *found = nullptr;
  for (const Kernel &k : plan.kernels)
    if (k.kind == Kernel::Kind::Opaque && k.opaqueOp == OpKind::MatMul) {
      REQUIRE(found == nullptr);
      found = &k;
    }
  REQUIRE(found != nullptr);
  return *found;
}

} // namespace

TEST_CASE("addendKind: a bias steps along the last axis only; a residual is row-major") {
  using K = LibraryEpilogueKind;
  CHECK(addendKind({17, 24}, {0, 1}) == K::Bias);
  CHECK(addendKind({2, 17, 24}, {0, 0, 1}) == K::Bias);
  CHECK(addendKind({17, 24}, {24, 1}) == K::Residual);
  CHECK(addendKind({2, 17, 24}, {408, 24, 1}) == K::Residual);
  // Axes of extent 1 step anywhere.
  CHECK(addendKind({17, 1}, {1, 99}) == K::Residual);
  CHECK(addendKind({1, 24}, {0, 1}) == K::Residual); // one row: the bias is row-major
  CHECK(addendKind({24}, {1}) == K::Residual);
  CHECK(!addendKind({17, 24}, {0, 2}));  // a strided bias
  CHECK(!addendKind({17, 24}, {1, 17})); // a transposed residual
  CHECK(!addendKind({17, 24}, {24, 0})); // a column, broadcast along the row
  CHECK(!addendKind({}, {}));
}

TEST_CASE("a cuBLAS product's bias add is its cuBLASLt epilogue") {
  NoBudgetFlush guard;
  for (DType t : {DType::SFloat, DType::DFloat})
    for (Shape hs : {Shape{17, kK}, Shape{2, 17, kK}, Shape{kK}}) {
      CAPTURE(nameOf(t));
      CAPTURE(shapeToString(hs));
      // A vector `h` by a matrix is small (one row): a batch of vectors is
      // what reaches cuBLAS.
      if (hs.size() == 1)
        hs = Shape{3, 1, 40, kK};
      Prefill s(hs, t);
      NodeRef p;
      H out;
      {
        H product = s.product();
        p = product->value();
        out = wrap(binaryOp(OpKind::Add, op(*product), op(*s.b)));
      } // the GC collected the product
      Plan plan = explain({out.get()});
      REQUIRE(plan.kernels.size() == 1);
      const Kernel &k = plan.kernels[0];
      CHECK(k.hasEpilogue());
      CHECK(k.why.find("cuBLASLt") != std::string::npos);
      std::optional<LibraryEpilogue> e = libraryEpilogueOf(k);
      REQUIRE(e);
      CHECK(e->kind == LibraryEpilogueKind::Bias);
      CHECK(!e->product);
      CHECK(bufferOf(plan, p.get()) == -1);
      CHECK(int(e->out.buffer) == bufferOf(plan, out->value().get()));
      // The code generator, which keys every kernel of a plan, takes it
      // (the launch rule and key of a cuBLAS kernel; no source).
      PreparedKernel prepared(k, hostDevice()->model());
      (void)prepared.launch(k, hostDevice()->model());
    }
}

TEST_CASE("a held product is stored beside the sum") {
  NoBudgetFlush guard;
  Prefill s({20, kK});
  H product = s.product();
  H out = wrap(binaryOp(OpKind::Add, op(*s.b), op(*product)));
  Plan plan = explain({out.get(), product.get()});
  REQUIRE(plan.kernels.size() == 1);
  std::optional<LibraryEpilogue> e = libraryEpilogueOf(plan.kernels[0]);
  REQUIRE(e);
  CHECK(e->kind == LibraryEpilogueKind::Bias);
  REQUIRE(e->product);
  CHECK(int(e->product->buffer) == bufferOf(plan, product->value().get()));
  // Nothing in the plan reads it: when Ruby lets it go before the plan
  // runs, the write (and cuBLAS's second call) is skipped.
  CHECK(plan.buffers[e->product->buffer].optional);
}

TEST_CASE("a residual add, in either order, and gemm's c with beta 1") {
  NoBudgetFlush guard;
  for (DType t : {DType::SFloat, DType::DFloat}) {
    CAPTURE(nameOf(t));
    Prefill s({2, 17, kK}, t);
    auto kindOf = [&](auto &&make) {
      H out = make();
      Plan plan = explain({out.get()});
      CHECK(plan.kernels.size() == 1);
      std::optional<LibraryEpilogue> e = libraryEpilogueOf(productKernel(plan));
      return e ? std::optional<LibraryEpilogueKind>(e->kind) : std::nullopt;
    };
    CHECK(kindOf([&] { return wrap(binaryOp(OpKind::Add, op(*s.product()), op(*s.x))); }) ==
          LibraryEpilogueKind::Residual);
    CHECK(kindOf([&] { return wrap(binaryOp(OpKind::Add, op(*s.x), op(*s.product()))); }) ==
          LibraryEpilogueKind::Residual);
    CHECK(kindOf([&] {
            return wrap(gemmOp(*s.h, *s.w, Scalar::ofInt(1), Scalar::ofInt(1), s.x.get()));
          }) == LibraryEpilogueKind::Residual);
  }
}

TEST_CASE("a product by a vector: an addend of the result's shape is a residual") {
  NoBudgetFlush guard;
  H h = upload(DType::SFloat, {40, kK}, ramp(40 * kK, 0.25, 13));
  H v = upload(DType::SFloat, {kK}, ramp(kK, 0.5, 13));
  H x = upload(DType::SFloat, {40}, ramp(40, 0.75, 13));
  H out = wrap(binaryOp(OpKind::Add, op(*wrap(matmulOp("matmul", *h, *v))), op(*x)));
  Plan plan = explain({out.get()});
  REQUIRE(plan.kernels.size() == 1);
  std::optional<LibraryEpilogue> e = libraryEpilogueOf(plan.kernels[0]);
  REQUIRE(e);
  CHECK(e->kind == LibraryEpilogueKind::Residual);
}

TEST_CASE("an addend the plan stores anyway joins; one it would store only for cuBLASLt does not") {
  NoBudgetFlush guard;
  Prefill s({17, kK});
  SUBCASE("a bias computed in the plan and held by Ruby") {
    H scaled = wrap(binaryOp(OpKind::Mul, op(*s.b), op(2.0)));
    H out = wrap(binaryOp(OpKind::Add, op(*s.product()), op(*scaled)));
    Plan plan = explain({out.get(), scaled.get()});
    CHECK(plan.kernels.size() == 2);
    std::optional<LibraryEpilogue> e = libraryEpilogueOf(productKernel(plan));
    REQUIRE(e);
    CHECK(int(e->addend.buffer) == bufferOf(plan, scaled->value().get()));
  }
  SUBCASE("a bias computed in the plan that only the add reads") {
    H out;
    {
      H scaled = wrap(binaryOp(OpKind::Mul, op(*s.b), op(2.0)));
      out = wrap(binaryOp(OpKind::Add, op(*s.product()), op(*scaled)));
    }
    Plan plan = explain({out.get()});
    CHECK(!productKernel(plan).hasEpilogue());
    CHECK(plan.kernels.size() == 2);
  }
  SUBCASE("a reduction recorded after the product") {
    H out;
    {
      H product = s.product();
      H mean = wrap(reduceOp(OpKind::Mean, *s.x, {0}, false));
      out = wrap(binaryOp(OpKind::Add, op(*product), op(*mean)));
    }
    Plan plan = explain({out.get()});
    CHECK(!productKernel(plan).hasEpilogue());
  }
  SUBCASE("a reduction recorded before it") {
    H out;
    {
      H mean = wrap(reduceOp(OpKind::Mean, *s.x, {0}, false));
      out = wrap(binaryOp(OpKind::Add, op(*s.product()), op(*mean)));
    }
    Plan plan = explain({out.get()});
    std::optional<LibraryEpilogue> e = libraryEpilogueOf(productKernel(plan));
    REQUIRE(e);
    CHECK(e->kind == LibraryEpilogueKind::Bias);
  }
}

TEST_CASE("what cuBLASLt cannot add exactly stays a kernel of its own") {
  NoBudgetFlush guard;
  auto separate = [](const ArrayHandle &out) {
    Plan plan = explain({&out});
    CHECK(!productKernel(plan).hasEpilogue());
    CHECK(plan.kernels.size() == 2);
  };
  SUBCASE("the sixteen-bit classes: the written form rounds twice") {
    for (DType t : {DType::HFloat, DType::BFloat}) {
      Prefill s({17, kK}, t);
      separate(*wrap(binaryOp(OpKind::Add, op(*s.product()), op(*s.b))));
    }
  }
  SUBCASE("alpha other than 1: the written form rounds the scaled product") {
    Prefill s({17, kK});
    H scaled = wrap(matmulOp("gemm", *s.h, *s.w, Scalar::ofFloat(0.5)));
    separate(*wrap(binaryOp(OpKind::Add, op(*scaled), op(*s.b))));
  }
  SUBCASE("a subtraction, or an add of a row-wise column") {
    Prefill s({17, kK});
    separate(*wrap(binaryOp(OpKind::Sub, op(*s.product()), op(*s.b))));
    H column = upload(DType::SFloat, {17, 1}, ramp(17, 0.5, 13));
    separate(*wrap(binaryOp(OpKind::Add, op(*s.product()), op(*column))));
  }
  SUBCASE("an addend cuBLASLt cannot read where it lies") {
    Prefill s({17, kK});
    H wide = upload(DType::SFloat, {2 * kCols}, ramp(2 * kCols, 0.5, 13));
    H strided = view(*wide, {range(0, 2 * kCols - 1, 2)});
    separate(*wrap(binaryOp(OpKind::Add, op(*s.product()), op(*strided))));
    H xt = upload(DType::SFloat, {kCols, 17}, ramp(17 * kCols, 0.5, 13));
    ArrayHandle transposed(xt->storageRef(), transposeLayout(xt->layout(), {}, "transpose"));
    separate(*wrap(binaryOp(OpKind::Add, op(*s.product()), op(transposed))));
  }
  SUBCASE("a product something else reads") {
    Prefill s({17, kK});
    H product = s.product();
    H out = wrap(binaryOp(OpKind::Add, op(*product), op(*s.b)));
    H total = wrap(reduceOp(OpKind::Sum, *product, {}, false));
    Plan plan = explain({out.get(), total.get()});
    CHECK(!productKernel(plan).hasEpilogue());
  }
  SUBCASE("gelu after the bias: the add joins, the activation is a kernel") {
    Prefill s({17, kK});
    H out =
        wrap(unaryOp(OpKind::GeluTanh, *wrap(binaryOp(OpKind::Add, op(*s.product()), op(*s.b)))));
    Plan plan = explain({out.get()});
    REQUIRE(plan.kernels.size() == 2);
    CHECK(libraryEpilogueOf(productKernel(plan)));
    CHECK(plan.kernels[1].kind == Kernel::Kind::Elementwise);
  }
}

TEST_CASE("the CPU executor's library epilogue answers what the separate kernel answers") {
  for (DType t : {DType::SFloat, DType::DFloat})
    for (bool held : {false, true}) {
      CAPTURE(nameOf(t));
      CAPTURE(held);
      Prefill s({2, 17, kK}, t);
      for (bool residual : {false, true}) {
        const ArrayHandle &addend = residual ? *s.x : *s.b;
        H product = s.product();
        H fused = wrap(binaryOp(OpKind::Add, op(*product), op(addend)));
        if (!held)
          product.reset();
        std::vector<double> got = read<double>(*fused);
        H apart = s.product();
        std::vector<double> p = read<double>(*apart); // forced: the add runs apart
        H want = wrap(binaryOp(OpKind::Add, op(*apart), op(addend)));
        CHECK(got == read<double>(*want));
        if (held)
          CHECK(read<double>(*product) == p);
      }
    }
}
