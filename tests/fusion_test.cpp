// Fusion: plans built from DAGs recorded through the ops API, checked by
// structure (kernels, stages, bases, stores, buffer roles) through
// Engine::explain, which runs the scheduler and lowering without running
// anything. The CPU executor plans against the default GPU model, so these
// are the plans a GPU would run.
#include "fusion/kernel_order.h"
#include "fusion/lower.h"
#include "fusion/plan_print.h"
#include "fusion/schedule.h"

#include "test_helpers.h"

#include <doctest/doctest.h>

#include <functional>
#include <string>

using namespace cumo;
using namespace cumo::test;

namespace {

std::vector<double> iota(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = double(i % 7) - 3.0;
  return v;
}

} // namespace

TEST_CASE("an elementwise chain with broadcasts is one kernel") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {3, 1}, iota(3));
  H b = upload(DType::DFloat, {1, 4}, iota(4));
  H c = upload(DType::SFloat, {4}, iota(4));
  // ((a + b) * c - 1).exp, with every temporary still held, as Ruby holds
  // them until its GC runs.
  H s = wrap(binaryOp(OpKind::Add, op(*a), op(*b)));
  H m = wrap(binaryOp(OpKind::Mul, op(*s), op(*c)));
  H d = wrap(binaryOp(OpKind::Sub, op(*m), op(1.0)));
  H e = wrap(unaryOp(OpKind::Exp, *d));
  Plan plan = explain({e.get()});
  REQUIRE(plan.kernels.size() == 1);
  const Kernel &k = plan.kernels[0];
  CHECK(k.kind == Kernel::Kind::Elementwise);
  CHECK(k.domain == Shape({3, 4}));
  CHECK(k.reduces.empty());
  CHECK(k.bases.size() == 1);
  CHECK(k.why.empty());
  // Three inputs, each read once, through broadcasting index maps.
  CHECK(k.loads.size() == 3);
  CHECK(countRole(plan, PlanBuffer::Role::Input) == 3);
  // Every held temporary is stored by the one kernel.
  CHECK(countRole(plan, PlanBuffer::Role::Output) == 4);
  CHECK(k.stores.size() == 4);
}

TEST_CASE("a chain whose temporaries are dropped stores only its result") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {5}, iota(5));
  H b = upload(DType::DFloat, {2, 5}, iota(10));
  NodeRef keep;
  H out;
  {
    H s = wrap(binaryOp(OpKind::Mul, op(*a), op(*b)));
    H t = wrap(binaryOp(OpKind::Add, op(*s), op(2.0)));
    keep = s->value();
    out = wrap(unaryOp(OpKind::Sqrt, *t));
  } // the GC collected s and t
  Plan plan = explain({out.get()});
  REQUIRE(plan.kernels.size() == 1);
  CHECK(countRole(plan, PlanBuffer::Role::Output) == 1);
  CHECK(countRole(plan, PlanBuffer::Role::Temp) == 0);
  CHECK(bufferOf(plan, keep.get()) == -1);
  CHECK(bufferOf(plan, out->value().get()) >= 0);
  CHECK(plan.kernels[0].stores.size() == 1);
}

TEST_CASE("a comparison and a cast fuse into the chain") {
  NoBudgetFlush guard;
  H a = upload(DType::Int32, {6}, iota(6));
  H b = upload(DType::DFloat, {6}, iota(6));
  NodeRef gt = binaryOp(OpKind::Gt, op(*a), op(*b));
  H g = wrap(gt);
  H c = wrap(castTo(*g, DType::SFloat));
  H out = wrap(binaryOp(OpKind::Mul, op(*c), op(*b)));
  g.reset();
  c.reset();
  Plan plan = explain({out.get()});
  REQUIRE(plan.kernels.size() == 1);
  CHECK(plan.kernels[0].stores.size() == 1);
}

TEST_CASE("(p * ap).sum is one kernel with one reduction") {
  NoBudgetFlush guard;
  H p = upload(DType::SFloat, {8, 8}, iota(64));
  H ap = upload(DType::SFloat, {8, 8}, iota(64));
  H prod = wrap(binaryOp(OpKind::Mul, op(*p), op(*ap)));
  H sum = wrap(reduceOp(OpKind::Sum, *prod, {}, false));
  Plan plan = explain({sum.get()});
  REQUIRE(plan.kernels.size() == 1);
  const Kernel &k = plan.kernels[0];
  CHECK(k.kind == Kernel::Kind::Elementwise);
  REQUIRE(k.reduces.size() == 1);
  CHECK(k.reduces[0].op == OpKind::Sum);
  CHECK(k.reduces[0].count == 64);
  CHECK(k.domain == Shape({8, 8}));
  CHECK(int(k.reduces[0].buffer) == bufferOf(plan, sum->value().get()));
  // The held product is stored by the same kernel: bytes, not a launch.
  CHECK(storeTo(k, bufferOf(plan, prod->value().get())) != nullptr);
}

TEST_CASE("a full reduction is folded by the elementwise kernel that reads it first") {
  // CG's shape: rs = (r * r).sum, then x = r * (rs / 3) in the next kernel
  // (it reads what an earlier kernel reduces), then (x * x).sum read by a
  // third, and a max only the host reads.
  NoBudgetFlush guard;
  H r = upload(DType::SFloat, {64}, iota(64));
  H rs = wrap(reduceOp(OpKind::Sum, *wrap(binaryOp(OpKind::Mul, op(*r), op(*r))), {}, false));
  H mx = wrap(reduceOp(OpKind::Max, *r, {}, false));
  H alpha = wrap(binaryOp(OpKind::Div, op(*rs), op(3.0)));
  H x = wrap(binaryOp(OpKind::Mul, op(*r), op(*alpha)));
  H xx = wrap(reduceOp(OpKind::Sum, *wrap(binaryOp(OpKind::Mul, op(*x), op(*x))), {}, false));
  H y = wrap(binaryOp(OpKind::Add, op(*x), op(*xx)));
  Plan plan = explain({rs.get(), mx.get(), x.get(), xx.get(), y.get()});
  REQUIRE(plan.kernels.size() == 3);
  const Kernel &a = plan.kernels[0], &b = plan.kernels[1], &c = plan.kernels[2];
  int rsBuf = bufferOf(plan, rs->value().get()), xxBuf = bufferOf(plan, xx->value().get());
  // The first kernel's sum goes to the second as partials; its max, read
  // by no kernel, is folded where it is computed.
  REQUIRE(a.reduces.size() == 2);
  for (const Reduce &red : a.reduces) {
    CAPTURE(opName(red.op));
    if (int(red.buffer) == rsBuf) {
      REQUIRE(red.partials >= 0);
      CHECK(plan.buffers[size_t(red.partials)].role == PlanBuffer::Role::Temp);
      CHECK(plan.buffers[size_t(red.partials)].elements == red.slots);
      CHECK(plan.buffers[size_t(red.partials)].dtype == red.accumulator);
    } else {
      CHECK(red.partials == -1);
    }
  }
  REQUIRE(b.folds.size() == 1);
  CHECK(int(b.folds[0].buffer) == rsBuf);
  CHECK(b.folds[0].op == OpKind::Sum);
  CHECK(b.folds[0].slots == DeviceModel().smCount * 4);
  // The second kernel's own sum goes on to the third.
  REQUIRE(b.reduces.size() == 1);
  CHECK(int(b.reduces[0].buffer) == xxBuf);
  CHECK(b.reduces[0].partials >= 0);
  REQUIRE(c.folds.size() == 1);
  CHECK(int(c.folds[0].buffer) == xxBuf);
}

TEST_CASE("a full reduction an axis reduction reads first is folded where it is computed") {
  NoBudgetFlush guard;
  H r = upload(DType::DFloat, {4, 16}, iota(64));
  H s = wrap(reduceOp(OpKind::Sum, *r, {}, false));
  H scaled = wrap(binaryOp(OpKind::Mul, op(*r), op(*s)));
  H rows = wrap(reduceOp(OpKind::Sum, *scaled, {1}, false));
  scaled.reset();
  Plan plan = explain({s.get(), rows.get()});
  REQUIRE(plan.kernels.size() == 2);
  CHECK(plan.kernels[1].kind == Kernel::Kind::AxisReduce);
  for (const Kernel &k : plan.kernels) {
    for (const Reduce &red : k.reduces)
      CHECK(red.partials == -1);
    CHECK(k.folds.empty());
  }
}

TEST_CASE("a dropped product inside a sum is never stored") {
  NoBudgetFlush guard;
  H p = upload(DType::DFloat, {16}, iota(16));
  H q = upload(DType::DFloat, {16}, iota(16));
  H dot = wrap(dotOp(*p, *q));
  Plan plan = explain({dot.get()});
  REQUIRE(plan.kernels.size() == 1);
  CHECK(plan.kernels[0].stores.empty());
  CHECK(plan.kernels[0].reduces.size() == 1);
  CHECK(countRole(plan, PlanBuffer::Role::Output) == 1);
}

TEST_CASE("an axis reduction is an AxisReduce kernel with its prologue inlined") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {3, 4}, iota(12));
  NodeRef twice = binaryOp(OpKind::Mul, op(*a), op(2.0));
  H t = wrap(twice);
  H s = wrap(reduceOp(OpKind::Sum, *t, {1}, false));
  t.reset(); // (a * 2).sum(axis: 1): the temporary was collected
  Plan plan = explain({s.get()});
  REQUIRE(plan.kernels.size() == 1);
  const Kernel &k = plan.kernels[0];
  CHECK(k.kind == Kernel::Kind::AxisReduce);
  CHECK(k.reduceAxes == llvm::SmallVector<int32_t, 2>({1}));
  CHECK(k.domain == Shape({3, 4}));
  CHECK(k.reduceOutputs() == 3);
  CHECK(k.reduceLength() == 4);
  REQUIRE(k.reduces.size() == 1);
  CHECK(k.reduces[0].count == 4);
  CHECK(bufferOf(plan, twice.get()) == -1);
  CHECK(k.why == "reduces over some axes only");
}

TEST_CASE("keepdims and several axes reduce in one AxisReduce kernel") {
  NoBudgetFlush guard;
  H a = upload(DType::SFloat, {2, 3, 4}, iota(24));
  H m = wrap(reduceOp(OpKind::Max, *a, {0, 2}, true));
  CHECK(m->shape() == llvm::ArrayRef<int64_t>({1, 3, 1}));
  Plan plan = explain({m.get()});
  REQUIRE(plan.kernels.size() == 1);
  CHECK(plan.kernels[0].kind == Kernel::Kind::AxisReduce);
  CHECK(plan.kernels[0].reduceAxes == llvm::SmallVector<int32_t, 2>({0, 2}));
  CHECK(plan.kernels[0].reduceOutputs() == 3);
}

TEST_CASE("the 5-point stencil as four slice updates is one kernel") {
  NoBudgetFlush guard;
  H v = wrap(emptyNode(DType::SFloat, {6, 7}));
  v->storage().setCurrent(randNode(DType::SFloat, {6, 7}, Scalar::ofFloat(0),
                                   Scalar::ofFloat(1)));
  std::vector<H> temps;
  H ap = laplacian(*v, temps);
  Plan plan = explain({ap.get(), v.get()});
  REQUIRE(plan.kernels.size() == 1);
  const Kernel &k = plan.kernels[0];
  CHECK(k.kind == Kernel::Kind::Elementwise);
  CHECK(k.domain == Shape({6, 7}));
  // One box basis per update, beside the domain.
  CHECK(k.bases.size() == 5);
  // Stores: ap, v (Ruby holds both) and the four differences Ruby still
  // holds, each written from inside its box.
  int apBuf = bufferOf(plan, ap->value().get());
  int vBuf = bufferOf(plan, v->value().get());
  REQUIRE(apBuf >= 0);
  REQUIRE(vBuf >= 0);
  CHECK(storeTo(k, apBuf));
  CHECK(storeTo(k, vBuf));
  int diffs = 0;
  for (size_t i = 2; i < temps.size(); i += 3) {
    int b = bufferOf(plan, temps[i]->value().get());
    CAPTURE(i);
    REQUIRE(b >= 0);
    CHECK(plan.buffers[b].role == PlanBuffer::Role::Output);
    const Store *s = storeTo(k, b);
    REQUIRE(s);
    CHECK(s->index.basis > 0);
    ++diffs;
  }
  CHECK(diffs == 4);
  CHECK(k.stores.size() == 6);
  // v is generated, not read: nothing is loaded at all.
  CHECK(k.loads.empty());
  CHECK(countRole(plan, PlanBuffer::Role::Temp) == 0);
}

TEST_CASE("the stencil over an uploaded array reads it once per shift") {
  NoBudgetFlush guard;
  H v = upload(DType::DFloat, {5, 5}, iota(25));
  std::vector<H> temps;
  H ap = laplacian(*v, temps);
  temps.clear(); // the GC ran: only ap is live
  Plan plan = explain({ap.get()});
  REQUIRE(plan.kernels.size() == 1);
  const Kernel &k = plan.kernels[0];
  CHECK(k.bases.size() == 5);
  CHECK(k.stores.size() == 1);
  CHECK(countRole(plan, PlanBuffer::Role::Input) == 1);
  // v itself and v shifted four ways.
  CHECK(k.loads.size() == 5);
}

namespace {

/// Builds examples/cg.rb's setup, flushes it, then records `iterations`
/// iterations of its loop and explains forcing x, r, p and rs_old. With
/// `holdTemps` every temporary stays wrapped (no GC ran); without, each
/// iteration's temporaries die at its end.
Plan cgPlan(int iterations, bool holdTemps) {
  NoBudgetFlush guard;
  const int64_t n = 16;
  seedRandom(0);
  H b = wrap(emptyNode(DType::SFloat, {n, n}));
  b->storage().setCurrent(randNode(DType::SFloat, {n, n}, Scalar::ofFloat(0),
                                   Scalar::ofFloat(1)));
  H x = wrap(fillNode(DType::SFloat, {n, n}, Scalar::ofInt(0)));
  H r = wrap(copyOf(*b));
  H p = wrap(copyOf(*r));
  H rr = wrap(binaryOp(OpKind::Mul, op(*r), op(*r)));
  H rsOld = wrap(reduceOp(OpKind::Sum, *rr, {}, false));
  engine().flush();

  std::vector<H> held;
  for (int it = 0; it < iterations; ++it) {
    std::vector<H> temps;
    H ap = laplacian(*p, temps);
    H pap = wrap(binaryOp(OpKind::Mul, op(*p), op(*ap)));
    H papSum = wrap(reduceOp(OpKind::Sum, *pap, {}, false));
    H alpha = wrap(binaryOp(OpKind::Div, op(*rsOld), op(*papSum)));
    H pa = wrap(binaryOp(OpKind::Mul, op(*p), op(*alpha)));
    H xNew = wrap(binaryOp(OpKind::Add, op(*x), op(*pa)));
    H apa = wrap(binaryOp(OpKind::Mul, op(*ap), op(*alpha)));
    H rNew = wrap(binaryOp(OpKind::Sub, op(*r), op(*apa)));
    H rr2 = wrap(binaryOp(OpKind::Mul, op(*rNew), op(*rNew)));
    H rsNew = wrap(reduceOp(OpKind::Sum, *rr2, {}, false));
    H beta = wrap(binaryOp(OpKind::Div, op(*rsNew), op(*rsOld)));
    H pb = wrap(binaryOp(OpKind::Mul, op(*p), op(*beta)));
    H pNew = wrap(binaryOp(OpKind::Add, op(*rNew), op(*pb)));
    for (H *t : {&ap, &pap, &papSum, &alpha, &pa, &apa, &rr2, &beta, &pb})
      temps.push_back(std::move(*t));
    // The loop variables move on; the old ones are temporaries now.
    std::swap(x, xNew);
    std::swap(r, rNew);
    std::swap(p, pNew);
    std::swap(rsOld, rsNew);
    for (H *t : {&xNew, &rNew, &pNew, &rsNew})
      temps.push_back(std::move(*t));
    if (holdTemps)
      for (H &t : temps)
        held.push_back(std::move(t));
  }
  return explain({x.get(), r.get(), p.get(), rsOld.get()});
}

} // namespace

namespace {

/// How many slice updates (stencil steps) a kernel computes.
int updatesIn(const Kernel &k) {
  int n = 0;
  for (const Node *node : k.nodes)
    n += node->op() == OpKind::Update;
  return n;
}

/// Each further CG iteration adds at most two launches (the stencil with
/// p.ap fused, and the two axpys with r.r fused), and no kernel computes
/// more than one stencil: a chain that grows with the loop is never
/// recomputed (DESIGN.md, "What gets materialized").
void checkCgSteadyState(bool holdTemps) {
  Plan two = cgPlan(2, holdTemps);
  Plan three = cgPlan(3, holdTemps);
  Plan four = cgPlan(4, holdTemps);
  CAPTURE(planToText(three));
  CHECK(three.kernels.size() - two.kernels.size() <= 2);
  CHECK(four.kernels.size() - three.kernels.size() <= 2);
  // Two per iteration, and the last p update on its own.
  CHECK(three.kernels.size() <= 2 * 3 + 1);
  for (const Kernel &k : three.kernels) {
    CHECK(k.kind != Kernel::Kind::Scatter);
    CHECK(updatesIn(k) <= 4);
  }
}

} // namespace

TEST_CASE("a CG iteration costs at most two kernels (temporaries held)") {
  // No GC ran: every temporary is still wrapped, so stored.
  checkCgSteadyState(/*holdTemps=*/true);
}

TEST_CASE("a CG iteration costs at most two kernels (temporaries collected)") {
  // The GC collected each iteration's temporaries and the old loop
  // variables: r, x and p of earlier iterations are internal now. Fusion
  // may keep them in registers, but must not recompute r's whole history
  // in every kernel that reads the latest r.
  checkCgSteadyState(/*holdTemps=*/false);
}

TEST_CASE("a shifted view of an expensive expression reads it at a later stage") {
  NoBudgetFlush guard;
  FusionLimits limits;
  H a = upload(DType::DFloat, {32}, iota(32));
  auto chain = [&](int ops) {
    NodeRef e = a->value();
    for (int i = 0; i < ops; ++i) {
      ArrayHandle cur(e);
      e = binaryOp(i % 2 ? OpKind::Add : OpKind::Mul, op(cur), op(1.5));
    }
    return e;
  };
  Layout shifted = Layout::contiguous({31}, 1); // e[1..-1]
  SUBCASE("past the recompute budget: stored, then read shifted") {
    NodeRef e = chain(limits.recomputeBudget + 6);
    H v = wrap(viewOfNode(e, shifted));
    H out = wrap(binaryOp(OpKind::Add, op(*v), op(1.0)));
    v.reset();
    Plan plan = explain({out.get()});
    REQUIRE(plan.kernels.size() == 2);
    int eBuf = bufferOf(plan, e.get());
    REQUIRE(eBuf >= 0);
    // Nobody holds e: it lives only inside the plan.
    CHECK(plan.buffers[eBuf].role == PlanBuffer::Role::Temp);
    CHECK(writerOf(plan, eBuf) == 0);
    CHECK(plan.kernels[0].stage == 0);
    CHECK(plan.kernels[1].stage == 1);
    CHECK(loadsFrom(plan.kernels[1], eBuf));
    CHECK_FALSE(plan.kernels[1].why.empty());
  }
  SUBCASE("within the budget: recomputed at the shifted coordinates") {
    NodeRef e = chain(4);
    H v = wrap(viewOfNode(e, shifted));
    H out = wrap(binaryOp(OpKind::Add, op(*v), op(1.0)));
    v.reset();
    Plan plan = explain({out.get()});
    REQUIRE(plan.kernels.size() == 1);
    CHECK(bufferOf(plan, e.get()) == -1);
  }
}

TEST_CASE("a 0-dim value stored beside an axpy rides in the axpy's kernel") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {10}, iota(10));
  H x = upload(DType::DFloat, {10}, iota(10));
  H s = wrap(reduceOp(OpKind::Sum, *a, {}, false));
  H alpha = wrap(binaryOp(OpKind::Div, op(*s), op(2.0)));
  H pa = wrap(binaryOp(OpKind::Mul, op(*a), op(*alpha)));
  H y = wrap(binaryOp(OpKind::Add, op(*x), op(*pa)));
  Plan plan = explain({y.get()});
  // The sum, then one kernel for alpha and the axpy.
  REQUIRE(plan.kernels.size() == 2);
  int alphaBuf = bufferOf(plan, alpha->value().get());
  int yBuf = bufferOf(plan, y->value().get());
  REQUIRE(alphaBuf >= 0);
  REQUIRE(yBuf >= 0);
  CHECK(writerOf(plan, alphaBuf) == 1);
  CHECK(writerOf(plan, yBuf) == 1);
  const Kernel &k = plan.kernels[1];
  CHECK(k.domain == Shape({10}));
  const Store *st = storeTo(k, alphaBuf);
  REQUIRE(st);
  // Written once, where the domain's axis is 0.
  CHECK(st->zeroAxes == llvm::SmallVector<int32_t, 4>({0}));
  CHECK(storeTo(k, yBuf)->zeroAxes.empty());
}

TEST_CASE("values of one stage as large as each other, one with unit axes more, are one kernel") {
  NoBudgetFlush guard;
  H a = upload(DType::SFloat, {6}, iota(6));
  H b = upload(DType::SFloat, {1, 6}, iota(6));
  H x = wrap(binaryOp(OpKind::Mul, op(*a), op(2.0)));
  H y = wrap(binaryOp(OpKind::Add, op(*b), op(1.0)));
  Plan plan = explain({x.get(), y.get()});
  REQUIRE(plan.kernels.size() == 1);
  CHECK(plan.kernels[0].domain == Shape({1, 6}));
  CHECK(read<float>(*x) == std::vector<float>({-6, -4, -2, 0, 2, 4}));
  CHECK(read<float>(*y) == std::vector<float>({-2, -1, 0, 1, 2, 3}));
}

TEST_CASE("a held reshape of a pending value views the value's buffer: no kernel copies it") {
  NoBudgetFlush guard;
  H a = upload(DType::SFloat, {2, 6}, iota(12));
  H twice = wrap(binaryOp(OpKind::Mul, op(*a), op(2.0)));
  NodeRef t = twice->value();
  H r = wrap(reshapeNode(*twice, {3, 4}));
  twice.reset(); // (a * 2).reshape(3, 4): the temporary was collected
  Plan plan = explain({r.get()});
  REQUIRE(plan.kernels.size() == 1);
  int tBuf = bufferOf(plan, t.get());
  REQUIRE(tBuf >= 0);
  // The value is stored whole, for the reshape to view, and not optional.
  CHECK(plan.buffers[tBuf].role == PlanBuffer::Role::Output);
  CHECK_FALSE(plan.buffers[tBuf].optional);
  CHECK(writerOf(plan, tBuf) == 0);
  CHECK(bufferOf(plan, r->value().get()) < 0);
  // The reshape is stored as a view of that buffer.
  auto stored = llvm::find(plan.storedNodes, r->value());
  REQUIRE(stored != plan.storedNodes.end());
  CHECK(plan.storedBuffers[size_t(stored - plan.storedNodes.begin())] == uint32_t(tBuf));
}

TEST_CASE("a reshape read by a later elementwise op reads its input's buffer at the next stage") {
  NoBudgetFlush guard;
  H a = upload(DType::SFloat, {2, 6}, iota(12));
  H twice = wrap(binaryOp(OpKind::Mul, op(*a), op(2.0)));
  NodeRef t = twice->value();
  H reshaped = wrap(reshapeNode(*twice, {3, 4}));
  H r = wrap(binaryOp(OpKind::Add, op(*reshaped), op(1.0)));
  twice.reset(); // neither temporary is held any more
  reshaped.reset();
  Plan plan = explain({r.get()});
  REQUIRE(plan.kernels.size() == 2);
  int tBuf = bufferOf(plan, t.get());
  REQUIRE(tBuf >= 0);
  CHECK(plan.buffers[tBuf].role == PlanBuffer::Role::Temp);
  CHECK(writerOf(plan, tBuf) == 0);
  CHECK(plan.kernels[1].stage > plan.kernels[0].stage);
  CHECK(plan.kernels[1].domain == Shape({3, 4}));
  CHECK(loadsFrom(plan.kernels[1], tBuf));
  CHECK(llvm::none_of(plan.storedNodes,
                      [](const NodeRef &n) { return n->op() == OpKind::Reshape; }));
}

TEST_CASE("an opaque op reads a reshape of a pending value from the value's buffer") {
  NoBudgetFlush guard;
  H a = upload(DType::SFloat, {2, 6}, iota(12));
  H w = upload(DType::SFloat, {4, 5}, iota(20));
  H twice = wrap(binaryOp(OpKind::Mul, op(*a), op(2.0)));
  NodeRef t = twice->value();
  H r = wrap(reshapeNode(*twice, {3, 4}));
  NodeRef rn = r->value();
  twice.reset();
  r.reset(); // (a * 2).reshape(3, 4).matmul(w): both temporaries collected
  H product = wrap(matmulOp("matmul", ArrayHandle(rn), *w));
  Plan plan = explain({product.get()});
  // The product, and the kernel that stores a * 2: no copy for the reshape.
  REQUIRE(plan.kernels.size() == 2);
  CHECK(bufferOf(plan, rn.get()) == -1);
  int tBuf = bufferOf(plan, t.get());
  REQUIRE(tBuf >= 0);
  CHECK(writerOf(plan, tBuf) == 0);
  CHECK(loadsFrom(plan.kernels[1], tBuf));
  CHECK(plan.kernels[1].stage > plan.kernels[0].stage);
}

TEST_CASE("reshape! through a pending value reads the value's buffer") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {4, 6}, iota(24));
  H e = wrap(unaryOp(OpKind::Neg, *a));
  // e.reshape!(3, 8) then e[true, 1..2] + 1: a flat view of a pending node.
  e->reshapeInPlace({3, 8});
  H col = view(*e, {all(), range(1, 2)});
  H out = wrap(binaryOp(OpKind::Add, op(*col), op(1.0)));
  Plan plan = explain({out.get()});
  REQUIRE(plan.kernels.size() == 2);
  int eBuf = bufferOf(plan, e->storage().current());
  REQUIRE(eBuf >= 0);
  CHECK(writerOf(plan, eBuf) == 0);
  CHECK(loadsFrom(plan.kernels[1], eBuf));
}

TEST_CASE("the stored set: wrapped nodes are outputs, the rest stays in registers") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {4, 4}, iota(16));
  NodeRef t1 = binaryOp(OpKind::Mul, op(*a), op(*a));
  H h1(new ArrayHandle(t1));
  NodeRef t2 = binaryOp(OpKind::Add, op(*h1), op(1.0));
  H h2(new ArrayHandle(t2));
  NodeRef t3 = unaryOp(OpKind::Abs, *h2);
  H h3(new ArrayHandle(t3));
  H out = wrap(binaryOp(OpKind::Sub, op(*h3), op(*h1)));
  h2.reset();
  h3.reset(); // t2 and t3 are internal now; t1 is still held
  Plan plan = explain({out.get()});
  REQUIRE(plan.kernels.size() == 1);
  CHECK(bufferOf(plan, t2.get()) == -1);
  CHECK(bufferOf(plan, t3.get()) == -1);
  int b1 = bufferOf(plan, t1.get());
  int bo = bufferOf(plan, out->value().get());
  REQUIRE(b1 >= 0);
  REQUIRE(bo >= 0);
  CHECK(plan.buffers[b1].role == PlanBuffer::Role::Output);
  CHECK(plan.buffers[bo].role == PlanBuffer::Role::Output);
  CHECK(plan.storedNodes.size() == 2);
  CHECK(countRole(plan, PlanBuffer::Role::Temp) == 0);
}

TEST_CASE("explain stores the roots it was asked about, wrapped or not") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {3}, iota(3));
  NodeRef e = unaryOp(OpKind::Neg, *a);
  Plan plan = engine().explain({e});
  REQUIRE(plan.kernels.size() == 1);
  int b = bufferOf(plan, e.get());
  REQUIRE(b >= 0);
  CHECK(plan.buffers[b].role == PlanBuffer::Role::Output);
  // Explaining runs nothing.
  CHECK(e->isPending());
}

TEST_CASE("explain of materialized values is an empty plan") {
  H a = upload(DType::DFloat, {3}, iota(3));
  Plan plan = explain({a.get()});
  CHECK(plan.empty());
  CHECK(plan.nodes.empty());
}

TEST_CASE("a write no box fits becomes a scatter after a copy of its base") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {4, 6}, iota(24));
  H flat = std::make_unique<ArrayHandle>(a->storageRef(), a->layout());
  flat->reshapeInPlace({3, 8});
  assign(*flat, {all(), range(1, 2)}, Scalar::ofFloat(7));
  Plan plan = explain({a.get()});
  REQUIRE(plan.kernels.size() == 2);
  CHECK(plan.kernels[0].kind == Kernel::Kind::Elementwise);
  CHECK(plan.kernels[1].kind == Kernel::Kind::Scatter);
  CHECK(plan.kernels[1].stage > plan.kernels[0].stage);
  CHECK(plan.kernels[1].domain == Shape({3, 2}));
  CHECK(plan.kernels[1].why == "writes a target no slice box fits");
}

TEST_CASE("plan_print: text and dot name the kernels and their ops") {
  NoBudgetFlush guard;
  H a = upload(DType::SFloat, {2, 3}, iota(6));
  H b = upload(DType::SFloat, {3}, iota(3));
  H m = wrap(binaryOp(OpKind::Mul, op(*a), op(*b)));
  H s = wrap(reduceOp(OpKind::Sum, *m, {1}, false));
  Plan plan = explain({s.get()});
  std::vector<KernelSummary> ks = summarize(plan);
  REQUIRE(ks.size() == plan.kernels.size());
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].kind == "elementwise");
  CHECK(ks[0].ops == std::vector<std::string>{"mul"});
  CHECK(ks[1].kind == "reduction");
  CHECK(ks[1].ops == std::vector<std::string>{"mul", "sum"});
  CHECK(ks[1].why == "reduces over some axes only");
  CHECK(ks[0].inputs.size() == 2);
  CHECK(ks[0].outputs == std::vector<std::string>{"%0 SFloat[2,3] (out)"});

  std::string text = planToText(plan);
  CAPTURE(text);
  CHECK(text.rfind("Cumo::Plan: 2 kernels\n", 0) == 0);
  CHECK(text.find("  [0] elementwise (mul)\n") != std::string::npos);
  CHECK(text.find("  [1] reduction (mul, sum)\n") != std::string::npos);
  CHECK(text.find("      writes %0 SFloat[2,3] (out)\n") != std::string::npos);
  CHECK(text.find("      why: reduces over some axes only\n") != std::string::npos);

  std::string dot = planToDot(plan);
  CAPTURE(dot);
  CHECK(dot.rfind("digraph plan {", 0) == 0);
  CHECK(dot.find("subgraph cluster_0") != std::string::npos);
  CHECK(dot.find("subgraph cluster_1") != std::string::npos);
  CHECK(dot.find("label=\"mul\\nSFloat[2,3]\"") != std::string::npos);
  CHECK(dot.find("label=\"sum\\nSFloat[2]\"") != std::string::npos);
  CHECK(dot.find("label=\"buffer\\nSFloat[3]\"") != std::string::npos);
  CHECK(dot.find("->") != std::string::npos);
  CHECK(dot.substr(dot.size() - 2) == "}\n");
}

namespace {

/// A plan of `buffers` buffers and one elementwise kernel per entry of
/// `kernels`: the buffers it loads, then those it stores.
Plan accessPlan(uint32_t buffers,
                std::vector<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> kernels) {
  Plan plan;
  plan.buffers.resize(buffers);
  for (auto &[reads, writes] : kernels) {
    Kernel k;
    for (uint32_t b : reads) {
      Load l;
      l.buffer = b;
      k.loads.push_back(l);
    }
    for (uint32_t b : writes) {
      Store st;
      st.buffer = b;
      k.stores.push_back(st);
    }
    plan.kernels.push_back(std::move(k));
  }
  return plan;
}

/// Each kernel's waits as "{a,b}", the kernels' one after another.
std::string waitsOf(const Plan &plan, std::function<bool(uint32_t)> serial = nullptr) {
  std::vector<uint32_t> all;
  for (uint32_t i = 0; i < plan.kernels.size(); ++i)
    all.push_back(i);
  std::string out;
  for (const auto &w :
       kernelWaits(plan, all, [&](uint32_t i) { return serial && serial(i); })) {
    out += "{";
    for (size_t j = 0; j < w.size(); ++j)
      out += (j ? "," : "") + std::to_string(w[j]);
    out += "}";
  }
  return out;
}

} // namespace

TEST_CASE("kernel order: a kernel waits only for those it shares a buffer with") {
  // 0 writes b0; 1 writes b1 (shares nothing: waits for none); 2 reads
  // b0 and b1; 3 reads b0 again (a read after a read waits for the
  // writer only); 4 writes b0 (after its readers 2 and 3, which already
  // follow 0: no edge of its own to 0); 5 writes b1 after 2 read it.
  Plan plan = accessPlan(4, {{{}, {0}},
                             {{}, {1}},
                             {{0, 1}, {2}},
                             {{0}, {3}},
                             {{}, {0}},
                             {{}, {1}}});
  CHECK(waitsOf(plan) == "{}{}{0,1}{0}{2,3}{2}");
}

TEST_CASE("kernel order: a path already orders a kernel, so no edge repeats it") {
  // A chain 0 -> 1 -> 2 where 2 also reads 0's buffer: 2 waits for 1 alone.
  Plan plan = accessPlan(3, {{{}, {0}}, {{0}, {1}}, {{0, 1}, {2}}});
  CHECK(waitsOf(plan) == "{}{0}{1}");
}

TEST_CASE("kernel order: an in-place write's buffer is its donor's memory") {
  // Buffer 2 is an in-place write into input 0: kernel 1, which writes
  // it, waits for kernel 0, which read input 0.
  Plan plan = accessPlan(3, {{{0}, {1}}, {{}, {2}}});
  plan.buffers[2].donor = 0;
  CHECK(waitsOf(plan) == "{}{0}");
  plan.buffers[2].donor = -1;
  CHECK(waitsOf(plan) == "{}{}");
}

TEST_CASE("kernel order: serial kernels follow one another") {
  // Kernels 0 and 2 share nothing but are serial (cuBLAS calls sharing a
  // workspace); 1 is not.
  Plan plan = accessPlan(3, {{{}, {0}}, {{}, {1}}, {{}, {2}}});
  CHECK(waitsOf(plan, [](uint32_t i) { return i != 1; }) == "{}{}{0}");
}

TEST_CASE("kernel order: partials, folds and a stored prologue count as accesses") {
  Kernel reducer;
  Reduce r;
  r.buffer = 1;
  r.partials = 2;
  reducer.reduces.push_back(r);
  Kernel reader;
  Fold f;
  f.partials = 2;
  f.buffer = 1;
  reader.folds.push_back(f);
  KernelAccess a = kernelAccess(reducer);
  CHECK(a.reads.empty());
  CHECK(std::vector<uint32_t>(a.writes.begin(), a.writes.end()) == std::vector<uint32_t>{1, 2});
  KernelAccess b = kernelAccess(reader);
  CHECK(std::vector<uint32_t>(b.reads.begin(), b.reads.end()) == std::vector<uint32_t>{2});
  CHECK(std::vector<uint32_t>(b.writes.begin(), b.writes.end()) == std::vector<uint32_t>{1});
  Kernel product;
  product.kind = Kernel::Kind::Opaque;
  product.prologue.op = OpKind::LayerNorm;
  product.prologue.stored = true;
  product.prologue.out.buffer = 4;
  Store through;
  through.buffer = 5;
  through.through = TableWrite{};
  through.through->table = 6;
  product.stores.push_back(through);
  KernelAccess c = kernelAccess(product);
  CHECK(std::vector<uint32_t>(c.reads.begin(), c.reads.end()) == std::vector<uint32_t>{6});
  CHECK(std::vector<uint32_t>(c.writes.begin(), c.writes.end()) == std::vector<uint32_t>{5, 4});
}

TEST_CASE("kernel order: independent values of one flush wait for nothing") {
  NoBudgetFlush guard;
  H a = upload(DType::SFloat, {3}, iota(3));
  H b = upload(DType::SFloat, {5}, iota(5));
  H x = wrap(unaryOp(OpKind::Exp, *a));
  H y = wrap(unaryOp(OpKind::Exp, *b));
  H s = wrap(reduceOp(OpKind::Sum, *x, {}, false));
  Plan plan = explain({x.get(), y.get(), s.get()});
  CAPTURE(planToText(plan));
  REQUIRE(plan.kernels.size() >= 2);
  // y's kernel shares no buffer with x's: it waits for none, and
  // neither does x's, the first.
  size_t withY = plan.kernels.size();
  for (size_t i = 0; i < plan.kernels.size(); ++i)
    if (plan.kernels[i].domain == Shape({5}))
      withY = i;
  REQUIRE(withY < plan.kernels.size());
  std::vector<uint32_t> all;
  for (uint32_t i = 0; i < plan.kernels.size(); ++i)
    all.push_back(i);
  auto w = kernelWaits(plan, all, [](uint32_t) { return false; });
  CHECK(w[withY].empty());
  CHECK(w[0].empty());
}

TEST_CASE("plan_print: one kernel reads as singular") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {3}, iota(3));
  H e = wrap(unaryOp(OpKind::Exp, *a));
  std::string text = planToText(explain({e.get()}));
  CHECK(text.rfind("Cumo::Plan: 1 kernel\n  [0] elementwise (exp)\n", 0) == 0);
}

TEST_CASE("a plan's structure does not depend on Ruby Float values") {
  // Scalars are kernel parameters, so the same loop body with other
  // numbers gives the same kernels.
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {8}, iota(8));
  auto build = [&](double c) {
    H m = wrap(binaryOp(OpKind::Mul, op(*a), op(c)));
    H out = wrap(binaryOp(OpKind::Add, op(*m), op(c * 3)));
    Plan p = explain({out.get()});
    return p;
  };
  Plan p1 = build(1.5), p2 = build(-7.25);
  REQUIRE(p1.kernels.size() == 1);
  REQUIRE(p2.kernels.size() == 1);
  CHECK(p1.kernels[0].values.size() == p2.kernels[0].values.size());
  CHECK(p1.kernels[0].params.size() == p2.kernels[0].params.size());
  CHECK(p1.kernels[0].params.size() == 2);
  CHECK(p1.kernels[0].params[0].value.f == 1.5);
  CHECK(p2.kernels[0].params[0].value.f == -7.25);
}

TEST_CASE("a loop-carried value whose old versions died is not recomputed") {
  // for k in 0...8: r = r - r.sum  (the old r collected each time).
  // Each r_k is needed at two stages (by its own sum, and by r_{k+1} after
  // that sum), so recomputing it inline makes kernel k carry all of
  // r_0 - s_0 - ... - s_{k-1}: a chain that grows with the loop.
  NoBudgetFlush guard;
  H r = upload(DType::DFloat, {64}, iota(64));
  const int iterations = 8;
  for (int k = 0; k < iterations; ++k) {
    H s = wrap(reduceOp(OpKind::Sum, *r, {}, false));
    r = wrap(binaryOp(OpKind::Sub, op(*r), op(*s)));
  }
  Plan plan = explain({r.get()});
  CAPTURE(planToText(plan));
  for (const Kernel &k : plan.kernels) {
    int subs = 0;
    for (const Node *n : k.nodes)
      subs += n->op() == OpKind::Sub;
    CHECK(subs <= 2);
  }
  CHECK(plan.kernels.size() <= size_t(iterations) + 1);
}

TEST_CASE("a long elementwise chain is cut into kernels of at most chainDepth ops") {
  // x = x + 1, 300 times in one flush, every old x collected: recomputed
  // inline, the one kernel would carry all 300 adds (and with its old
  // values still held, each kernel of 32 stores recomputed x from the
  // start: 880 KB of source at 1000 adds). Past chainDepth the chain is
  // stored and read back at the next stage.
  NoBudgetFlush guard;
  const int adds = 300;
  const int depth = FusionLimits().chainDepth;
  H x = upload(DType::DFloat, {16}, iota(16));
  for (int k = 0; k < adds; ++k)
    x = wrap(binaryOp(OpKind::Add, op(*x), op(1.0)));
  Plan plan = explain({x.get()});
  CAPTURE(planToText(plan));
  int total = 0;
  for (const Kernel &k : plan.kernels) {
    int inKernel = 0;
    for (const Node *n : k.nodes)
      inKernel += n->op() == OpKind::Add;
    CHECK(inKernel <= depth);
    total += inKernel;
  }
  CHECK(total == adds); // each add computed once
  CHECK(plan.kernels.size() == size_t((adds + depth - 1) / depth));
  // And the values: 300 added to each element.
  std::vector<double> got = read<double>(*x);
  std::vector<double> want = iota(16);
  for (double &v : want)
    v += adds;
  CHECK(got == want);
}
