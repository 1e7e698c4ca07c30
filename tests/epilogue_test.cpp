// Epilogues (fusion/epilogue.h): which consumers of a small product its
// kernel computes, which values get buffers, at which stages readers run,
// checked by the structure of the plan, and the values of the CPU executor
// against the same expression with the product read back first.
#include "fusion/epilogue_writes.h"
#include "fusion/plan.h"
#include "fusion/schedule.h"

#include "test_helpers.h"

#include <doctest/doctest.h>

using namespace cumo;
using namespace cumo::test;

namespace {

/// A decode step's operands: `rows` rows of 32, a 32 x 24 weight, a bias
/// and a residual, materialized.
struct Step {
  explicit Step(int64_t rows, DType t = DType::SFloat)
      : h(upload(t, {rows, 32}, ramp(rows * 32, 0.25))),
        w(upload(t, {32, 24}, ramp(32 * 24, 0.125))), b(upload(t, {24}, ramp(24, 0.5))),
        x(upload(t, {rows, 24}, ramp(rows * 24, 0.75))) {}
  H product() const { return wrap(matmulOp("matmul", *h, *w)); }
  H h, w, b, x;
};

} // namespace

TEST_CASE("a small product's consumers run in its kernel; the raw product gets no buffer") {
  NoBudgetFlush guard;
  Step s(1);
  NodeRef p;
  H out;
  {
    H product = s.product();
    H biased = wrap(binaryOp(OpKind::Add, op(*product), op(*s.b)));
    H act = wrap(unaryOp(OpKind::GeluTanh, *biased));
    p = product->value();
    out = wrap(binaryOp(OpKind::Add, op(*s.x), op(*act)));
  } // the GC collected the temporaries
  Plan plan = explain({out.get()});
  REQUIRE(plan.kernels.size() == 1);
  const Kernel &k = plan.kernels[0];
  CHECK(k.kind == Kernel::Kind::Opaque);
  CHECK(k.hasEpilogue());
  CHECK(k.values[0].kind == Value::Kind::Result);
  CHECK(bufferOf(plan, p.get()) == -1);
  CHECK(countRole(plan, PlanBuffer::Role::Output) == 1);
  REQUIRE(k.stores.size() == 1);
  CHECK(int(k.stores[0].buffer) == bufferOf(plan, out->value().get()));
  // The bias and the residual are the epilogue's loads.
  CHECK(k.loads.size() == 2);
  CHECK(k.operands.size() == 2);
}

TEST_CASE("a product read outside its epilogue keeps its buffer; readers run after it") {
  NoBudgetFlush guard;
  Step s(4);
  NodeRef p, biasedNode;
  H out, total, columns;
  {
    H product = s.product();
    H biased = wrap(binaryOp(OpKind::Add, op(*product), op(*s.b)));
    p = product->value();
    biasedNode = biased->value();
    out = wrap(unaryOp(OpKind::Tanh, *biased));
    // Folds of the product and of the bias add: neither can run where the
    // product's elements are written.
    total = wrap(reduceOp(OpKind::Sum, *product, {}, false));
    columns = wrap(reduceOp(OpKind::Sum, *biased, {0}, false));
  }
  Plan plan = explain({out.get(), total.get()});
  int pBuf = bufferOf(plan, p.get());
  REQUIRE(pBuf >= 0);
  int product = writerOf(plan, pBuf);
  REQUIRE(product >= 0);
  CHECK(plan.kernels[product].hasEpilogue());
  int sumBuf = bufferOf(plan, total->value().get());
  int reduction = writerOf(plan, sumBuf);
  CHECK(reduction != product);
  CHECK(loadsFrom(plan.kernels[reduction], pBuf));
  CHECK(plan.kernels[reduction].stage > plan.kernels[product].stage);
  // Only the epilogue's answer and the product are stored by it: the bias
  // add nothing else reads stays in registers.
  CHECK(bufferOf(plan, biasedNode.get()) == -1);

  // A member a later kernel reads gets a buffer, written by the product's
  // kernel, and the reader runs at the next stage.
  Plan both = explain({out.get(), columns.get()});
  int bBuf = bufferOf(both, biasedNode.get());
  REQUIRE(bBuf >= 0);
  int writer = writerOf(both, bBuf);
  REQUIRE(writer >= 0);
  CHECK(both.kernels[writer].hasEpilogue());
  int reader = writerOf(both, bufferOf(both, columns->value().get()));
  REQUIRE(reader >= 0);
  CHECK(reader != writer);
  CHECK(loadsFrom(both.kernels[reader], bBuf));
  CHECK(both.kernels[reader].stage == both.kernels[writer].stage + 1);
}

TEST_CASE("consumers that cannot join stay outside") {
  NoBudgetFlush guard;
  SUBCASE("a consumer of another shape") {
    Step s(4);
    H big = upload(DType::SFloat, {3, 4, 24}, ramp(3 * 4 * 24, 0.5));
    H out;
    {
      H product = s.product();
      H biased = wrap(binaryOp(OpKind::Add, op(*product), op(*s.b)));
      out = wrap(binaryOp(OpKind::Mul, op(*biased), op(*big)));
    }
    // The bias add is only read by the wider kernel, which computes it
    // inline from the product's buffer, as without epilogues.
    Plan plan = explain({out.get()});
    REQUIRE(plan.kernels.size() == 2);
    CHECK(!plan.kernels[0].hasEpilogue());
    CHECK(plan.kernels[1].domain == Shape({3, 4, 24}));
  }
  SUBCASE("a product cuBLAS computes (in a class cuBLASLt cannot add to exactly: "
          "tests/library_epilogue_test.cpp has the others)") {
    for (Shape hs : {Shape{17, 32}, Shape{2, 17, 32}}) {
      CAPTURE(shapeToString(hs));
      H h = upload(DType::BFloat, hs, ramp(numElements(hs), 0.25));
      Step s(1, DType::BFloat);
      H out;
      {
        H product = wrap(matmulOp("matmul", *h, *s.w));
        out = wrap(binaryOp(OpKind::Add, op(*product), op(*s.b)));
      }
      Plan plan = explain({out.get()});
      REQUIRE(plan.kernels.size() == 2);
      CHECK(!plan.kernels[0].hasEpilogue());
      CHECK(plan.kernels[1].kind == Kernel::Kind::Elementwise);
    }
  }
  SUBCASE("an integer product") {
    Step s(2, DType::Int32);
    H out;
    {
      H product = s.product();
      out = wrap(binaryOp(OpKind::Add, op(*product), op(*s.b)));
    }
    CHECK(explain({out.get()}).kernels.size() == 2);
  }
}

TEST_CASE("an epilogue takes at most FusionLimits::epilogueMembers consumers") {
  NoBudgetFlush guard;
  Step s(2);
  int limit = FusionLimits().epilogueMembers;
  // Every step held by Ruby: each would join.
  std::vector<H> steps;
  steps.push_back(s.product());
  for (int i = 0; i < limit + 4; ++i)
    steps.push_back(wrap(binaryOp(OpKind::Add, op(*steps.back()), op(*s.b))));
  Plan plan = explain({steps.back().get()});
  REQUIRE(plan.kernels.size() == 2);
  CHECK(plan.kernels[0].hasEpilogue());
  CHECK(plan.kernels[0].nodes.size() == size_t(limit) + 1);
  CHECK(plan.kernels[1].kind == Kernel::Kind::Elementwise);
}

TEST_CASE("two products in a row: the second reads the first's epilogue") {
  NoBudgetFlush guard;
  Step s(2);
  H w2 = upload(DType::SFloat, {24, 24}, ramp(24 * 24, 0.0625));
  NodeRef mid;
  H out;
  {
    H first = wrap(unaryOp(OpKind::GeluTanh,
                           *wrap(binaryOp(OpKind::Add, op(*s.product()), op(*s.b)))));
    mid = first->value();
    H second = wrap(matmulOp("matmul", *first, *w2));
    out = wrap(binaryOp(OpKind::Add, op(*s.x), op(*second)));
  }
  Plan plan = explain({out.get()});
  REQUIRE(plan.kernels.size() == 2);
  CHECK(plan.kernels[0].hasEpilogue());
  CHECK(plan.kernels[1].hasEpilogue());
  int midBuf = bufferOf(plan, mid.get());
  REQUIRE(midBuf >= 0);
  CHECK(writerOf(plan, midBuf) == 0);
  CHECK(loadsFrom(plan.kernels[1], midBuf));
  CHECK(plan.kernels[1].stage == plan.kernels[0].stage + 1);
}

TEST_CASE("an epilogue beside a row group keeps what the group stores of its inputs") {
  NoBudgetFlush guard;
  H x = upload(DType::SFloat, {4, 64}, ramp(4 * 64, 0.125));
  Step s(1);
  NodeRef t;
  H y, biased;
  {
    // t costs more than crossStageBudget and is ready at stage 0; the group
    // runs at stage 1 (it reads a full sum), so it reads t from a buffer.
    H a = wrap(binaryOp(OpKind::Mul, op(*x), op(2.0)));
    H b = wrap(binaryOp(OpKind::Add, op(*a), op(1.0)));
    H c = wrap(binaryOp(OpKind::Mul, op(*b), op(3.0)));
    H tt = wrap(binaryOp(OpKind::Sub, op(*c), op(0.5)));
    t = tt->value();
    H total = wrap(reduceOp(OpKind::Sum, *x, {}, false));
    H m = wrap(reduceOp(OpKind::Max, *tt, {-1}, true));
    H e = wrap(binaryOp(OpKind::Mul, op(*wrap(unaryOp(OpKind::Exp, *wrap(binaryOp(
                                          OpKind::Sub, op(*tt), op(*m)))))),
                        op(*total)));
    y = wrap(binaryOp(OpKind::Div, op(*e), op(*wrap(reduceOp(OpKind::Sum, *e, {-1}, true)))));
    biased = wrap(binaryOp(OpKind::Add, op(*s.product()), op(*s.b)));
  }
  Plan plan = explain({y.get(), biased.get()});
  bool rowwise = false, epilogue = false;
  for (const Kernel &k : plan.kernels) {
    rowwise |= k.kind == Kernel::Kind::Rowwise;
    epilogue |= k.hasEpilogue();
  }
  CHECK(rowwise);
  CHECK(epilogue);
  CHECK(bufferOf(plan, t.get()) >= 0);
}

TEST_CASE("the CPU executor's epilogue answers what the separate kernel answers") {
  for (DType t : {DType::SFloat, DType::DFloat, DType::HFloat, DType::BFloat}) {
    CAPTURE(nameOf(t));
    Step s(3, t);
    auto consumers = [&](const ArrayHandle &p) {
      H biased = wrap(binaryOp(OpKind::Add, op(p), op(*s.b)));
      H act = wrap(unaryOp(OpKind::GeluTanh, *biased));
      return wrap(binaryOp(OpKind::Add, op(*s.x), op(*act)));
    };
    H fused = consumers(*s.product());
    H product = s.product();
    (void)read<double>(*product); // forced: its consumers run apart
    H apart = consumers(*product);
    CHECK(read<double>(*fused) == read<double>(*apart));
  }
}

TEST_CASE("an epilogue's index write finds each value's coordinates by division where its view is one to one") {
  TableWrite t;
  // A contiguous slice of three axes: one axis of stride one.
  REQUIRE(orderWriteAxes({2, 3, 4}, {12, 4, 1}, {12, 4, 1}, t));
  CHECK(t.extents == Shape{24});
  CHECK(t.viewStrides == Strides{1});
  CHECK(t.tableStrides == Strides{1});
  // A transpose: ordered by the view's strides, not merged where the
  // table does not step with them.
  REQUIRE(orderWriteAxes({2, 3}, {1, 2}, {3, 1}, t));
  CHECK(t.extents == Shape{3, 2});
  CHECK(t.viewStrides == Strides{2, 1});
  CHECK(t.tableStrides == Strides{1, 3});
  // Strides 3 and 2 over (4, 2): every element is one value (3 exceeds
  // the 2 the last axis spans), with holes between.
  REQUIRE(orderWriteAxes({4, 2}, {3, 2}, {2, 1}, t));
  CHECK(t.extents == Shape{4, 2});
  // Axes of one element drop out; none left is a single value.
  REQUIRE(orderWriteAxes({1, 1}, {0, 5}, {1, 1}, t));
  CHECK(t.extents.empty());
  // Two values at one element; strides the division cannot tell apart
  // (3 is less than the 6 that the axis of stride 2 spans: one to one,
  // but not by this inversion); a broadcast, a reversed view, nothing.
  CHECK_FALSE(orderWriteAxes({3, 3}, {1, 1}, {3, 1}, t));
  CHECK_FALSE(orderWriteAxes({4, 2}, {2, 3}, {2, 1}, t));
  CHECK_FALSE(orderWriteAxes({2}, {0}, {1}, t));
  CHECK_FALSE(orderWriteAxes({2}, {-1}, {1}, t));
  CHECK_FALSE(orderWriteAxes({0, 4}, {4, 1}, {4, 1}, t));
}
