// The runtime on the CPU executor: plans run, and their values are compared
// with straightforward host computations. Also what a flush leaves behind:
// which nodes are materialized, and the stored sets that keep a loop's plan
// stable.
#include "core/error.h"
#include "core/stats.h"
#include "fusion/plan_print.h"
#include "graph/gc_cost.h"

#include "test_helpers.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

using namespace cumo;
using namespace cumo::test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

} // namespace

// ---- elementwise -----------------------------------------------------------

TEST_CASE("binary ops between dtypes promote and compute as Numo does") {
  SUBCASE("Int8 + UInt8 is Int8: UInt8 200 wraps to -56") {
    H a = upload(DType::Int8, {2}, values<int>({100, -3}));
    H b = upload(DType::UInt8, {2}, values<int>({200, 5}));
    H c = wrap(binaryOp(OpKind::Add, op(*a), op(*b)));
    CHECK(c->dtype() == DType::Int8);
    CHECK(read<int>(*c) == values<int>({44, 2}));
  }
  SUBCASE("Int8 + UInt16 is Int32") {
    H a = upload(DType::Int8, {2}, values<int>({-100, 7}));
    H b = upload(DType::UInt16, {2}, values<int>({60000, 1}));
    H c = wrap(binaryOp(OpKind::Add, op(*a), op(*b)));
    CHECK(c->dtype() == DType::Int32);
    CHECK(read<int64_t>(*c) == values<int64_t>({59900, 8}));
  }
  SUBCASE("Int16 * UInt32 is Int32") {
    H a = upload(DType::Int16, {2}, values<int>({-2, 3}));
    H b = upload(DType::UInt32, {2}, values<int64_t>({1000000, 4}));
    H c = wrap(binaryOp(OpKind::Mul, op(*a), op(*b)));
    CHECK(c->dtype() == DType::Int32);
    CHECK(read<int64_t>(*c) == values<int64_t>({-2000000, 12}));
  }
  SUBCASE("UInt64 - Int8 is Int64") {
    H a = upload(DType::UInt64, {2}, values<int64_t>({5, 10}));
    H b = upload(DType::Int8, {2}, values<int>({7, -1}));
    H c = wrap(binaryOp(OpKind::Sub, op(*a), op(*b)));
    CHECK(c->dtype() == DType::Int64);
    CHECK(read<int64_t>(*c) == values<int64_t>({-2, 11}));
  }
  SUBCASE("UInt8 + SFloat is SFloat") {
    H a = upload(DType::UInt8, {2}, values<int>({255, 1}));
    H b = upload(DType::SFloat, {2}, values<double>({0.5, -2.25}));
    H c = wrap(binaryOp(OpKind::Add, op(*a), op(*b)));
    CHECK(c->dtype() == DType::SFloat);
    CHECK(read<double>(*c) == values<double>({255.5, -1.25}));
  }
  SUBCASE("Int64 / DFloat is DFloat") {
    H a = upload(DType::Int64, {2}, values<int64_t>({7, -9}));
    H b = upload(DType::DFloat, {2}, values<double>({2, 4}));
    H c = wrap(binaryOp(OpKind::Div, op(*a), op(*b)));
    CHECK(c->dtype() == DType::DFloat);
    CHECK(read<double>(*c) == values<double>({3.5, -2.25}));
  }
  SUBCASE("SFloat + DFloat is DFloat") {
    H a = upload(DType::SFloat, {1}, values<double>({0.1}));
    H b = upload(DType::DFloat, {1}, values<double>({0.2}));
    H c = wrap(binaryOp(OpKind::Add, op(*a), op(*b)));
    CHECK(c->dtype() == DType::DFloat);
    CHECK(read<double>(*c)[0] == double(0.1f) + 0.2);
  }
  SUBCASE("Int32 + Bit is Int32") {
    H a = upload(DType::Int32, {2}, values<int>({1, 2}));
    H b = upload(DType::Bit, {2}, values<int>({1, 1}));
    H c = wrap(binaryOp(OpKind::Add, op(*a), op(*b)));
    CHECK(c->dtype() == DType::Int32);
    CHECK(read<int>(*c) == values<int>({2, 3}));
  }
}

TEST_CASE("a Ruby number never widens an integer array, and a Float makes DFloat") {
  H a = upload(DType::Int8, {1}, values<int>({1}));
  H c = wrap(binaryOp(OpKind::Add, op(*a), opInt(200)));
  CHECK(c->dtype() == DType::Int8);
  CHECK(read<int>(*c) == values<int>({-55}));
  H u = upload(DType::UInt8, {1}, values<int>({250}));
  H d = wrap(binaryOp(OpKind::Add, op(*u), opInt(10)));
  CHECK(read<int>(*d) == values<int>({4}));
  H f = wrap(binaryOp(OpKind::Mul, op(*u), op(0.5)));
  CHECK(f->dtype() == DType::DFloat);
  CHECK(read<double>(*f) == values<double>({125}));
  H s = upload(DType::SFloat, {1}, values<double>({1}));
  H g = wrap(binaryOp(OpKind::Add, op(*s), op(1.1)));
  CHECK(g->dtype() == DType::SFloat);
  CHECK(read<float>(*g)[0] == 1.0f + float(1.1));
}

TEST_CASE("integer arithmetic wraps") {
  H a = upload(DType::Int8, {2}, values<int>({127, -128}));
  H b = wrap(binaryOp(OpKind::Add, op(*a), opInt(1)));
  CHECK(read<int>(*b) == values<int>({-128, -127}));
  H u = upload(DType::UInt8, {1}, values<int>({0}));
  H c = wrap(binaryOp(OpKind::Sub, op(*u), opInt(1)));
  CHECK(read<int>(*c) == values<int>({255}));
  H one = upload(DType::UInt8, {1}, values<int>({1}));
  H n = wrap(unaryOp(OpKind::Neg, *one));
  CHECK(read<int>(*n) == values<int>({255}));
}

TEST_CASE("broadcasting reads each operand at its own coordinates") {
  H a = upload(DType::DFloat, {3, 1}, values<double>({1, 2, 3}));
  H b = upload(DType::DFloat, {4}, values<double>({10, 20, 30, 40}));
  H c = wrap(binaryOp(OpKind::Mul, op(*a), op(*b)));
  CHECK(c->shape() == llvm::ArrayRef<int64_t>({3, 4}));
  std::vector<double> want;
  for (double x : {1, 2, 3})
    for (double y : {10, 20, 30, 40})
      want.push_back(x * y);
  CHECK(read<double>(*c) == want);
  // A 0-dim operand broadcasts everywhere.
  H s = wrap(reduceOp(OpKind::Sum, *b, {}, false));
  H d = wrap(binaryOp(OpKind::Sub, op(*c), op(*s)));
  std::vector<double> want2;
  for (double v : want)
    want2.push_back(v - 100);
  CHECK(read<double>(*d) == want2);
}

TEST_CASE("shapes that do not broadcast raise at the call") {
  H a = upload(DType::DFloat, {2}, values<double>({1, 2}));
  H b = upload(DType::DFloat, {3}, values<double>({1, 2, 3}));
  auto e = errorOf([&] { binaryOp(OpKind::Add, op(*a), op(*b)); });
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::Shape);
  CHECK(e->message().rfind("[add] ", 0) == 0);
  H bit = upload(DType::Bit, {2}, values<int>({1, 0}));
  auto t = errorOf([&] { binaryOp(OpKind::Add, op(*bit), op(*bit)); });
  REQUIRE(t);
  CHECK(t->kind() == ErrorKind::Type);
}

TEST_CASE("comparisons answer Bit, comparing in the promoted type") {
  H a = upload(DType::Int32, {4}, values<int>({1, 2, 3, 4}));
  H b = upload(DType::DFloat, {4}, values<double>({1.5, 2, 2.5, kNaN}));
  H gt = wrap(binaryOp(OpKind::Gt, op(*a), op(*b)));
  CHECK(gt->dtype() == DType::Bit);
  CHECK(read<int>(*gt) == values<int>({0, 0, 1, 0}));
  H eq = wrap(binaryOp(OpKind::Eq, op(*a), op(*b)));
  CHECK(read<int>(*eq) == values<int>({0, 1, 0, 0}));
  // NaN is unequal to everything, itself included.
  H ne = wrap(binaryOp(OpKind::Ne, op(*b), op(*b)));
  CHECK(read<int>(*ne) == values<int>({0, 0, 0, 1}));
  H le = wrap(binaryOp(OpKind::Le, op(*a), op(2.5)));
  CHECK(read<int>(*le) == values<int>({1, 1, 0, 0}));
  // Bit operands compare too (and promote to the other side).
  H lt = wrap(binaryOp(OpKind::Lt, op(*gt), op(*a)));
  CHECK(read<int>(*lt) == values<int>({1, 1, 1, 1}));
}

TEST_CASE("casts: float to int truncates, NaN gives 0, Bit is nonzero") {
  H f = upload(DType::DFloat, {6}, values<double>({2.7, -2.7, kNaN, -0.5, 1e30, -1e30}));
  H i = wrap(castTo(*f, DType::Int32));
  CHECK(i->dtype() == DType::Int32);
  std::vector<int64_t> got = read<int64_t>(*i);
  CHECK(got[0] == 2);
  CHECK(got[1] == -2);
  CHECK(got[2] == 0);
  CHECK(got[3] == 0);
  H l = wrap(castTo(*f, DType::Int64));
  std::vector<int64_t> big = read<int64_t>(*l);
  // Past int64: saturated.
  CHECK(big[4] == std::numeric_limits<int64_t>::max());
  CHECK(big[5] == std::numeric_limits<int64_t>::min());
  H neg = upload(DType::DFloat, {2}, values<double>({-1, 256.9}));
  H u = wrap(castTo(*neg, DType::UInt8));
  // Unsigned targets take negatives through int64 and wrap.
  CHECK(read<int>(*u) == values<int>({255, 0}));
  H b = wrap(castTo(*f, DType::Bit));
  CHECK(b->dtype() == DType::Bit);
  std::vector<int> bits = read<int>(*b);
  CHECK(bits[0] == 1);
  CHECK(bits[3] == 1);
  H z = upload(DType::DFloat, {2}, values<double>({0, -0.0}));
  CHECK(read<int>(*wrap(castTo(*z, DType::Bit))) == values<int>({0, 0}));
  H ints = upload(DType::Int32, {3}, values<int>({0, 3, -1}));
  CHECK(read<int>(*wrap(castTo(*ints, DType::Bit))) == values<int>({0, 1, 1}));
  H back = wrap(castTo(*ints, DType::SFloat));
  CHECK(read<double>(*back) == values<double>({0, 3, -1}));
}

TEST_CASE("integer division truncates toward zero; the remainder takes the dividend's sign") {
  H a = upload(DType::Int32, {4}, values<int>({7, -7, 7, -7}));
  H b = upload(DType::Int32, {4}, values<int>({2, 2, -2, -2}));
  CHECK(read<int>(*wrap(binaryOp(OpKind::Div, op(*a), op(*b)))) ==
        values<int>({3, -3, -3, 3}));
  CHECK(read<int>(*wrap(binaryOp(OpKind::Mod, op(*a), op(*b)))) ==
        values<int>({1, -1, 1, -1}));
  // Floats: IEEE division, fmod's sign.
  H fa = upload(DType::DFloat, {4}, values<double>({7, -7, 7, -7}));
  H fb = upload(DType::DFloat, {4}, values<double>({2, 2, -2, -2}));
  CHECK(read<double>(*wrap(binaryOp(OpKind::Mod, op(*fa), op(*fb)))) ==
        values<double>({1, -1, 1, -1}));
  CHECK(read<double>(*wrap(binaryOp(OpKind::Div, op(*fa), op(*fb)))) ==
        values<double>({3.5, -3.5, -3.5, 3.5}));
}

TEST_CASE("integer division by zero raises at the next read, and MIN / -1 wraps") {
  // A kernel cannot raise: it flags the device's error word, and the read
  // that follows raises ZeroDivisionError naming the op, as Numo raises at
  // the call. The flag is cleared once raised.
  H a = upload(DType::Int32, {3}, values<int64_t>({5, -5, INT32_MIN}));
  H z = upload(DType::Int32, {3}, values<int>({0, 0, -1}));
  for (OpKind opk : {OpKind::Div, OpKind::Mod}) {
    H q = wrap(binaryOp(opk, op(*a), op(*z)));
    try {
      read<int64_t>(*q);
      FAIL("no ZeroDivisionError");
    } catch (const Error &e) {
      CHECK(e.kind() == ErrorKind::ZeroDivision);
      CHECK(e.message().rfind("[" + std::string(opName(opk)) + "] divided by zero", 0) == 0);
    }
  }
  H minusOne = upload(DType::Int32, {2}, values<int>({-1, 2}));
  H mins = upload(DType::Int32, {2}, values<int64_t>({INT32_MIN, 9}));
  CHECK(read<int64_t>(*wrap(binaryOp(OpKind::Div, op(*mins), op(*minusOne)))) ==
        values<int64_t>({INT32_MIN, 4}));
  H u = upload(DType::UInt16, {2}, values<int>({9, 9}));
  H four = upload(DType::UInt16, {2}, values<int>({2, 4}));
  CHECK(read<int>(*wrap(binaryOp(OpKind::Div, op(*u), op(*four)))) == values<int>({4, 2}));
  CHECK(read<int>(*wrap(binaryOp(OpKind::Mod, op(*u), op(*four)))) == values<int>({1, 1}));
}

TEST_CASE("pow: integers by squaring with wrap, negative exponents give 0") {
  H a = upload(DType::Int32, {4}, values<int>({2, 3, 1, -2}));
  CHECK(read<int>(*wrap(binaryOp(OpKind::Pow, op(*a), opInt(2)))) ==
        values<int>({4, 9, 1, 4}));
  CHECK(read<int>(*wrap(binaryOp(OpKind::Pow, op(*a), opInt(-1)))) ==
        values<int>({0, 0, 0, 0}));
  H e = upload(DType::Int32, {4}, values<int>({10, 3, 0, 3}));
  CHECK(read<int>(*wrap(binaryOp(OpKind::Pow, op(*a), op(*e)))) ==
        values<int>({1024, 27, 1, -8}));
  H u = upload(DType::UInt8, {1}, values<int>({16}));
  CHECK(read<int>(*wrap(binaryOp(OpKind::Pow, op(*u), opInt(2)))) == values<int>({0}));
  // int ** Float is DFloat.
  H r = wrap(binaryOp(OpKind::Pow, op(*a), op(0.5)));
  CHECK(r->dtype() == DType::DFloat);
  CHECK(read<double>(*r)[0] == doctest::Approx(std::sqrt(2.0)));
  // A float base takes negative exponents.
  H f = upload(DType::DFloat, {1}, values<double>({2}));
  CHECK(read<double>(*wrap(binaryOp(OpKind::Pow, op(*f), opInt(-2)))) ==
        values<double>({0.25}));
}

TEST_CASE("unary ops, maximum and minimum") {
  H a = upload(DType::DFloat, {4}, values<double>({-4, 0.25, 9, kNaN}));
  std::vector<double> ab = read<double>(*wrap(unaryOp(OpKind::Abs, *a)));
  CHECK(ab[0] == 4);
  CHECK(std::isnan(ab[3]));
  H sq = wrap(unaryOp(OpKind::Sqrt, *wrap(unaryOp(OpKind::Abs, *a))));
  std::vector<double> s = read<double>(*sq);
  CHECK(s[0] == 2);
  CHECK(s[1] == 0.5);
  CHECK(s[2] == 3);
  H e = upload(DType::SFloat, {2}, values<double>({0, 1}));
  std::vector<float> ex = read<float>(*wrap(unaryOp(OpKind::Exp, *e)));
  CHECK(ex[0] == 1.0f);
  CHECK(ex[1] == std::exp(1.0f));
  CHECK(read<double>(*wrap(unaryOp(OpKind::Log, *e)))[0] == -INFINITY);
  H b = upload(DType::DFloat, {4}, values<double>({1, 1, 1, 1}));
  std::vector<double> mx = read<double>(*wrap(binaryOp(OpKind::Maximum, op(*a), op(*b))));
  CHECK(mx[0] == 1);
  CHECK(mx[2] == 9);
  CHECK(std::isnan(mx[3])); // elementwise maximum propagates NaN
  std::vector<double> mn = read<double>(*wrap(binaryOp(OpKind::Minimum, op(*a), op(*b))));
  CHECK(mn[0] == -4);
  CHECK(mn[2] == 1);
  H i = upload(DType::Int16, {3}, values<int>({-5, 0, 7}));
  CHECK(read<int>(*wrap(unaryOp(OpKind::Abs, *i))) == values<int>({5, 0, 7}));
  auto err = errorOf([&] { unaryOp(OpKind::Sqrt, *i); });
  REQUIRE(err);
  CHECK(err->kind() == ErrorKind::Type);
}

// ---- reductions ------------------------------------------------------------

TEST_CASE("sum over everything, one axis, with keepdims, and mean") {
  H a = upload(DType::DFloat, {2, 3}, values<double>({1, 2, 3, 4, 5, 6}));
  H all = wrap(reduceOp(OpKind::Sum, *a, {}, false));
  CHECK(all->ndim() == 0);
  CHECK(read<double>(*all) == values<double>({21}));
  CHECK(read<double>(*wrap(reduceOp(OpKind::Sum, *a, {0}, false))) ==
        values<double>({5, 7, 9}));
  H rows = wrap(reduceOp(OpKind::Sum, *a, {-1}, true));
  CHECK(rows->shape() == llvm::ArrayRef<int64_t>({2, 1}));
  CHECK(read<double>(*rows) == values<double>({6, 15}));
  H both = wrap(reduceOp(OpKind::Sum, *a, {0, 1}, true));
  CHECK(both->shape() == llvm::ArrayRef<int64_t>({1, 1}));
  CHECK(read<double>(*both) == values<double>({21}));
  CHECK(read<double>(*wrap(reduceOp(OpKind::Mean, *a, {}, false))) ==
        values<double>({3.5}));
  CHECK(read<double>(*wrap(reduceOp(OpKind::Mean, *a, {0}, false))) ==
        values<double>({2.5, 3.5, 4.5}));
  CHECK(read<double>(*wrap(reduceOp(OpKind::Prod, *a, {1}, false))) ==
        values<double>({6, 120}));
}

TEST_CASE("integer sums accumulate in 64 bits; integer means are DFloat") {
  H a = upload(DType::Int8, {3}, values<int>({100, 100, 100}));
  H s = wrap(reduceOp(OpKind::Sum, *a, {}, false));
  CHECK(s->dtype() == DType::Int64);
  CHECK(read<int64_t>(*s) == values<int64_t>({300}));
  H m = wrap(reduceOp(OpKind::Mean, *a, {}, false));
  CHECK(m->dtype() == DType::DFloat);
  CHECK(read<double>(*m) == values<double>({100}));
  H u = upload(DType::UInt8, {2}, values<int>({200, 200}));
  H us = wrap(reduceOp(OpKind::Sum, *u, {}, false));
  CHECK(us->dtype() == DType::UInt64);
  CHECK(read<int64_t>(*us) == values<int64_t>({400}));
  H i = upload(DType::Int32, {2, 2}, values<int>({1, 2, 3, 4}));
  H mi = wrap(reduceOp(OpKind::Mean, *i, {1}, false));
  CHECK(read<double>(*mi) == values<double>({1.5, 3.5}));
}

TEST_CASE("max and min skip NaN; all-NaN gives NaN") {
  H a = upload(DType::DFloat, {2, 4}, values<double>({kNaN, 1, 3, kNaN, kNaN, kNaN, kNaN, kNaN}));
  std::vector<double> mx = read<double>(*wrap(reduceOp(OpKind::Max, *a, {1}, false)));
  CHECK(mx[0] == 3);
  CHECK(std::isnan(mx[1]));
  std::vector<double> mn = read<double>(*wrap(reduceOp(OpKind::Min, *a, {1}, false)));
  CHECK(mn[0] == 1);
  CHECK(std::isnan(mn[1]));
  CHECK(read<double>(*wrap(reduceOp(OpKind::Max, *a, {}, false))) == values<double>({3}));
  CHECK(read<double>(*wrap(reduceOp(OpKind::Min, *a, {}, false))) == values<double>({1}));
  H i = upload(DType::Int16, {3}, values<int>({-7, 12, 3}));
  CHECK(read<int>(*wrap(reduceOp(OpKind::Max, *i, {}, false))) == values<int>({12}));
  CHECK(read<int>(*wrap(reduceOp(OpKind::Min, *i, {}, false))) == values<int>({-7}));
}

TEST_CASE("dot of 1-D arrays, and a reduction of a fused prologue") {
  H a = upload(DType::SFloat, {5}, values<double>({1, 2, 3, 4, 5}));
  H b = upload(DType::SFloat, {5}, values<double>({2, 2, 2, 2, -1}));
  CHECK(read<double>(*wrap(dotOp(*a, *b))) == values<double>({15}));
  H sq = wrap(binaryOp(OpKind::Mul, op(*a), op(*a)));
  H s = wrap(reduceOp(OpKind::Sum, *sq, {}, false));
  CHECK(read<double>(*s) == values<double>({55}));
}

TEST_CASE("reductions reject bad axes and empty arrays at the call") {
  H a = upload(DType::DFloat, {2, 3}, values<double>({1, 2, 3, 4, 5, 6}));
  auto e = errorOf([&] { reduceOp(OpKind::Sum, *a, {2}, false); });
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::Dimension);
  CHECK(e->message().rfind("[sum] ", 0) == 0);
  auto twice = errorOf([&] { reduceOp(OpKind::Sum, *a, {1, -1}, false); });
  REQUIRE(twice);
  CHECK(twice->kind() == ErrorKind::Argument);
  H empty = wrap(emptyNode(DType::DFloat, {0}));
  auto z = errorOf([&] { reduceOp(OpKind::Max, *empty, {}, false); });
  REQUIRE(z);
  CHECK(z->kind() == ErrorKind::Shape);
}

// ---- generators ------------------------------------------------------------

TEST_CASE("seq counts from start by step in row-major order") {
  H d = wrap(seqNode(DType::DFloat, {2, 3}, Scalar::ofFloat(1), Scalar::ofFloat(0.5)));
  CHECK(read<double>(*d) == values<double>({1, 1.5, 2, 2.5, 3, 3.5}));
  H i = wrap(seqNode(DType::Int32, {4}, Scalar::ofInt(2), Scalar::ofInt(3)));
  CHECK(read<int>(*i) == values<int>({2, 5, 8, 11}));
  // Integer classes from float arguments: computed in double, truncated.
  H f = wrap(seqNode(DType::Int16, {4}, Scalar::ofFloat(0), Scalar::ofFloat(0.75)));
  CHECK(read<int>(*f) == values<int>({0, 0, 1, 2}));
  // A view of a seq reads the right elements.
  H row = view(*d, {at(1), range(2, 0, -1)});
  CHECK(read<double>(*row) == values<double>({3.5, 3, 2.5}));
}

TEST_CASE("rand: the same seed gives the same numbers, in range") {
  seedRandom(42);
  H a = wrap(randNode(DType::DFloat, {1000}, Scalar::ofFloat(0), Scalar::ofFloat(1)));
  H b = wrap(randNode(DType::DFloat, {1000}, Scalar::ofFloat(0), Scalar::ofFloat(1)));
  std::vector<double> va = read<double>(*a), vb = read<double>(*b);
  CHECK(va != vb); // the generator moved on
  seedRandom(42);
  H c = wrap(randNode(DType::DFloat, {1000}, Scalar::ofFloat(0), Scalar::ofFloat(1)));
  CHECK(read<double>(*c) == va);
  double sum = 0;
  for (double v : va) {
    CHECK(v >= 0);
    CHECK(v < 1);
    sum += v;
  }
  // Uniform: the mean of 1000 draws is near 0.5 (5 sigma is 0.046).
  CHECK(sum / 1000 == doctest::Approx(0.5).epsilon(0.1));
  seedRandom(7);
  H d = wrap(randNode(DType::DFloat, {1000}, Scalar::ofFloat(0), Scalar::ofFloat(1)));
  CHECK(read<double>(*d) != va);
}

TEST_CASE("rand of other classes stays in [low, high)") {
  seedRandom(3);
  H f = wrap(randNode(DType::SFloat, {500}, Scalar::ofFloat(2), Scalar::ofFloat(5)));
  for (float v : read<float>(*f)) {
    CHECK(v >= 2.0f);
    CHECK(v < 5.0f);
  }
  H i = wrap(randNode(DType::Int32, {500}, Scalar::ofInt(-3), Scalar::ofInt(4)));
  std::vector<int> vi = read<int>(*i);
  bool seen[7] = {};
  for (int v : vi) {
    CHECK(v >= -3);
    CHECK(v < 4);
    if (v >= -3 && v < 4)
      seen[v + 3] = true;
  }
  for (bool s : seen)
    CHECK(s);
}

TEST_CASE("rand read through a view and fused into a chain gives the same numbers") {
  seedRandom(11);
  H r = wrap(randNode(DType::DFloat, {4, 5}, Scalar::ofFloat(0), Scalar::ofFloat(1)));
  H t = wrap(binaryOp(OpKind::Mul, op(*r), op(2.0)));
  H v = view(*r, {range(1, 2), range(4, 0, -2)});
  std::vector<double> tv = read<double>(*t);
  std::vector<double> vv = read<double>(*v);
  std::vector<double> rv = read<double>(*r);
  for (size_t k = 0; k < rv.size(); ++k)
    CHECK(tv[k] == 2 * rv[k]);
  CHECK(vv == values<double>({rv[9], rv[7], rv[5], rv[14], rv[12], rv[10]}));
}

// ---- slice updates and views -------------------------------------------------

TEST_CASE("a box slice update writes only its slice") {
  H a = upload(DType::DFloat, {3, 4}, values<double>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  assign(*a, {range(1, 2), range(1, 3, 2)}, Scalar::ofFloat(-1));
  CHECK(read<double>(*a) == values<double>({0, 1, 2, 3, 4, -1, 6, -1, 8, -1, 10, -1}));
  // An array value, broadcast into the slice.
  H row = upload(DType::Int32, {4}, values<int>({7, 8, 9, 10}));
  assign(*a, {at(0), all()}, *row);
  CHECK(read<double>(*a) == values<double>({7, 8, 9, 10, 4, -1, 6, -1, 8, -1, 10, -1}));
  // Negative steps write backwards.
  H col = upload(DType::DFloat, {3}, values<double>({100, 200, 300}));
  assign(*a, {range(2, 0, -1), at(3)}, *col);
  CHECK(read<double>(*a) == values<double>({7, 8, 9, 300, 4, -1, 6, 200, 8, -1, 10, 100}));
}

TEST_CASE("slice updates of a pending value fuse and compute the right values") {
  H base = upload(DType::DFloat, {3, 3}, values<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}));
  H a = wrap(binaryOp(OpKind::Mul, op(*base), op(10.0)));
  std::vector<H> temps;
  // a[1..2, true] -= base[0..1, true]; a[true, 0] = 0
  subAssign(*a, {range(1, 2), all()}, *base, {range(0, 1), all()}, temps);
  assign(*a, {all(), at(0)}, Scalar::ofInt(0));
  CHECK(read<double>(*a) == values<double>({0, 20, 30, 0, 48, 57, 0, 75, 84}));
  // The held difference is right too.
  CHECK(read<double>(*temps[2]) == values<double>({39, 48, 57, 66, 75, 84}));
}

TEST_CASE("the 5-point stencil computes the Laplacian, with its held temporaries") {
  const int64_t n = 5, m = 6;
  std::vector<double> v(static_cast<size_t>(n * m), 0.0);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = double((i * 37) % 11) - 4.5;
  for (bool pendingInput : {false, true}) {
    CAPTURE(pendingInput);
    H vh = upload(DType::DFloat, {n, m}, v);
    if (pendingInput) // the stencil over a pending value: v + 0
      vh = wrap(binaryOp(OpKind::Add, op(*vh), op(0.0)));
    std::vector<H> temps;
    H ap = laplacian(*vh, temps);
    auto V = [&](int64_t i, int64_t j) {
      return i < 0 || j < 0 || i >= n || j >= m ? 0.0 : v[size_t(i * m + j)];
    };
    std::vector<double> want;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        want.push_back(4 * V(i, j) - V(i - 1, j) - V(i + 1, j) - V(i, j - 1) -
                       V(i, j + 1));
    CHECK(read<double>(*ap) == want);
    // The first difference: (4v)[1..-1, true] - v[0..-2, true].
    std::vector<double> d1;
    for (int64_t i = 1; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        d1.push_back(4 * V(i, j) - V(i - 1, j));
    CHECK(read<double>(*temps[2]) == d1);
    // The last: ap3[true, 0..-2] - v[true, 1..-1], ap3 after three updates.
    std::vector<double> d4;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j + 1 < m; ++j)
        d4.push_back(4 * V(i, j) - V(i - 1, j) - V(i + 1, j) - V(i, j - 1) -
                     V(i, j + 1));
    CHECK(read<double>(*temps[11]) == d4);
  }
}

TEST_CASE("a write no box fits takes the scatter path") {
  std::vector<double> seq(24);
  for (size_t i = 0; i < seq.size(); ++i)
    seq[i] = double(i);
  H a = upload(DType::DFloat, {4, 6}, seq);
  // b = a.reshape!(3, 8) shares a's storage; b[true, 1..2] crosses a's rows.
  H b = std::make_unique<ArrayHandle>(a->storageRef(), a->layout());
  b->reshapeInPlace({3, 8});
  assign(*b, {all(), range(1, 2)}, Scalar::ofFloat(-7));
  std::vector<double> want = seq;
  for (int r = 0; r < 3; ++r)
    want[size_t(8 * r + 1)] = want[size_t(8 * r + 2)] = -7;
  CHECK(read<double>(*a) == want);
  CHECK(read<double>(*b) == want);
  // An array value through the same path.
  H val = upload(DType::DFloat, {3, 2}, values<double>({10, 11, 12, 13, 14, 15}));
  assign(*b, {all(), range(6, 7)}, *val);
  want[6] = 10, want[7] = 11, want[14] = 12, want[15] = 13, want[22] = 14, want[23] = 15;
  CHECK(read<double>(*a) == want);
}

TEST_CASE("a scatter into a pending base keeps the base's other elements") {
  H src = upload(DType::Int32, {2, 3}, values<int>({1, 2, 3, 4, 5, 6}));
  H a = wrap(binaryOp(OpKind::Mul, op(*src), opInt(10)));
  H flat = std::make_unique<ArrayHandle>(a->storageRef(), a->layout());
  flat->reshapeInPlace({3, 2});
  // flat[true, 1] is a's elements 1, 3, 5: column 1 of a, then row 1.
  assign(*flat, {all(), at(1)}, Scalar::ofInt(-1));
  CHECK(read<int>(*a) == values<int>({10, -1, 30, -1, 50, -1}));
}

TEST_CASE("writes are visible through views taken before and after") {
  H a = upload(DType::DFloat, {3, 4}, values<double>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  H row = view(*a, {at(1), all()});
  H t = std::make_unique<ArrayHandle>(a->storageRef(),
                                      transposeLayout(a->layout(), {}, "transpose"));
  assign(*a, {all(), at(2)}, Scalar::ofFloat(99));
  CHECK(read<double>(*row) == values<double>({4, 5, 99, 7}));
  // A write through a view reaches the array and its other views.
  assign(*row, {range(0, 1)}, Scalar::ofFloat(-1));
  CHECK(read<double>(*a) == values<double>({0, 1, 99, 3, -1, -1, 99, 7, 8, 9, 99, 11}));
  // Through the transpose: t[0, true] is a's column 0.
  assign(*t, {at(0), all()}, Scalar::ofFloat(5));
  CHECK(read<double>(*a) == values<double>({5, 1, 99, 3, 5, -1, 99, 7, 5, 9, 99, 11}));
  CHECK(read<double>(*t) ==
        values<double>({5, 5, 5, 1, -1, 9, 99, 99, 99, 3, 7, 11}));
  // A view of a view.
  H rv = view(*row, {range(1, 3, 2)});
  assign(*rv, {all()}, Scalar::ofFloat(0));
  CHECK(read<double>(*row) == values<double>({5, 0, 99, 0}));
}

TEST_CASE("a pending reader of the old value keeps the old value (copy on write)") {
  H a = upload(DType::DFloat, {2, 2}, values<double>({1, 2, 3, 4}));
  H twice = wrap(binaryOp(OpKind::Mul, op(*a), op(2.0)));
  NodeRef old = a->value();
  assign(*a, {at(0), all()}, Scalar::ofFloat(100));
  CHECK(read<double>(*twice) == values<double>({2, 4, 6, 8}));
  CHECK(read<double>(*a) == values<double>({100, 100, 3, 4}));
  H oldH = wrap(old);
  CHECK(read<double>(*oldH) == values<double>({1, 2, 3, 4}));
  // The same with a pending base.
  H b = wrap(binaryOp(OpKind::Add, op(*a), op(1.0)));
  H reader = wrap(unaryOp(OpKind::Neg, *b));
  assign(*b, {all(), at(1)}, Scalar::ofFloat(0));
  CHECK(read<double>(*b) == values<double>({101, 0, 4, 0}));
  CHECK(read<double>(*reader) == values<double>({-101, -101, -4, -5}));
}

TEST_CASE("reading strided and 0-dim views gathers the right elements") {
  H a = wrap(seqNode(DType::Int32, {3, 4}, Scalar::ofInt(0), Scalar::ofInt(1)));
  engine().flush();
  H t = std::make_unique<ArrayHandle>(a->storageRef(),
                                      transposeLayout(a->layout(), {}, "transpose"));
  CHECK(read<int>(*t) == values<int>({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  H e = view(*a, {at(2), at(-1)});
  CHECK(e->ndim() == 0);
  CHECK(read<int>(*e) == values<int>({11}));
  H r = view(*a, {range(2, 0, -2), range(3, 0, -3)});
  CHECK(read<int>(*r) == values<int>({11, 8, 3, 0}));
  // A view of a materialized array reads it without a plan.
  uint64_t plans = Stats::get().plans_run;
  CHECK(read<int>(*view(*a, {at(1), all()})) == values<int>({4, 5, 6, 7}));
  CHECK(Stats::get().plans_run == plans);
}

TEST_CASE("reshape answers the elements in row-major order") {
  H a = wrap(seqNode(DType::DFloat, {2, 3}, Scalar::ofFloat(0), Scalar::ofFloat(1)));
  H t = std::make_unique<ArrayHandle>(a->storageRef(),
                                      transposeLayout(a->layout(), {}, "transpose"));
  // t is [3,2]: 0 3 / 1 4 / 2 5; reshaped to [6].
  H r = wrap(reshapeNode(*t, {6}));
  CHECK(read<double>(*r) == values<double>({0, 3, 1, 4, 2, 5}));
  H twice = wrap(binaryOp(OpKind::Mul, op(*a), op(2.0)));
  H r2 = wrap(reshapeNode(*twice, {3, 2}));
  CHECK(read<double>(*r2) == values<double>({0, 2, 4, 6, 8, 10}));
}

// ---- what a flush leaves behind --------------------------------------------

TEST_CASE("after a flush a stored node is materialized and has dropped its inputs") {
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {4}, values<double>({1, 2, 3, 4}));
  H t = wrap(binaryOp(OpKind::Mul, op(*a), op(3.0)));
  H u = wrap(binaryOp(OpKind::Add, op(*t), op(*a)));
  NodeRef tn = t->value(), un = u->value();
  CHECK(tn->isPending());
  CHECK_FALSE(un->inputs().empty());
  engine().flush();
  CHECK(PendingList::get().empty());
  CHECK(tn->isMaterialized());
  CHECK(un->isMaterialized());
  CHECK(tn->inputs().empty());
  CHECK(un->inputs().empty());
  CHECK(un->buffer());
  CHECK(un->layout() == Layout::contiguous({4}));
  CHECK(read<double>(*u) == values<double>({4, 8, 12, 16}));
}

TEST_CASE("a view that outlives the flush of its base becomes a view of the base's buffer") {
  // The cut of a loop can fall between a slice and the op that reads it:
  // the view must not stay pending outside the next flush's list.
  NoBudgetFlush guard;
  H a = upload(DType::DFloat, {2, 3}, values<double>({0, 1, 2, 3, 4, 5}));
  H t = wrap(binaryOp(OpKind::Mul, op(*a), op(10.0)));
  Layout stepped;  // elements 1 and 4, column 1: an affine view
  stepped.shape = {2};
  stepped.strides = {3};
  stepped.offset = 1;
  Layout flat = Layout::contiguous({4}, 1); // elements 1..4, across rows
  NodeRef steppedView = viewOfNode(t->value(), stepped);
  NodeRef flatView = viewOfNode(t->value(), flat);
  CHECK(steppedView->isPending());
  CHECK_FALSE(steppedView->extra().flatView);
  CHECK(flatView->extra().flatView);
  engine().flush();
  CHECK(t->value()->isMaterialized());
  REQUIRE(steppedView->isMaterialized());
  REQUIRE(flatView->isMaterialized());
  CHECK(steppedView->buffer() == t->value()->buffer());
  CHECK(steppedView->inputs().empty());
  H s(new ArrayHandle(steppedView)), f(new ArrayHandle(flatView));
  H sum = wrap(binaryOp(OpKind::Add, op(*s), op(1.0)));
  CHECK(read<double>(*sum) == values<double>({11, 41}));
  CHECK(read<double>(*f) == values<double>({10, 20, 30, 40}));
}

TEST_CASE("an unwrapped temporary is not stored") {
  NoBudgetFlush guard;
  engine().flush();
  H a = upload(DType::Int16, {5}, values<int>({1, 2, 3, 4, 5}));
  // A structure of its own (Int16: mul by 5, sub 1, neg), so no stored set
  // remembered from another test widens it.
  NodeRef t = binaryOp(OpKind::Mul, op(*a), opInt(5));
  H th(new ArrayHandle(t));
  H u = wrap(binaryOp(OpKind::Sub, op(*th), opInt(1)));
  th.reset();
  H w = wrap(unaryOp(OpKind::Neg, *u));
  engine().flush();
  CHECK(w->value()->isMaterialized());
  CHECK(u->value()->isMaterialized());
  CHECK(t->isPending()); // computed in registers, never written
  CHECK(read<int>(*w) == values<int>({-4, -9, -14, -19, -24}));
}

TEST_CASE("the stored set of a structure only grows (StoredSets union rule)") {
  NoBudgetFlush guard;
  engine().flush();
  H a = upload(DType::UInt16, {6}, values<int>({1, 2, 3, 4, 5, 6}));
  auto round = [&](bool holdT, NodeRef &tOut) {
    // t = a * 7; u = t - 2; v = u * t: the same structure every round.
    H t = wrap(binaryOp(OpKind::Mul, op(*a), opInt(7)));
    H u = wrap(binaryOp(OpKind::Sub, op(*t), opInt(2)));
    H v = wrap(binaryOp(OpKind::Mul, op(*u), op(*t)));
    tOut = t->value();
    if (!holdT)
      t.reset();
    engine().flush();
    return read<int64_t>(*v);
  };
  std::vector<int64_t> want;
  for (int64_t x = 1; x <= 6; ++x)
    want.push_back((7 * x - 2) * (7 * x));
  NodeRef t1, t2, t3;
  // First round: t is held, so stored.
  CHECK(round(true, t1) == want);
  CHECK(t1->isMaterialized());
  // Later rounds: the same structure with t dropped before the flush. The
  // remembered set keeps t in the plan, so the plan does not change; t is
  // an output nothing in the plan reads, so it gets no memory.
  uint64_t hits = Stats::get().plan_cache_hits;
  CHECK(round(false, t2) == want);
  CHECK_FALSE(t2->isMaterialized());
  CHECK(round(false, t3) == want);
  CHECK_FALSE(t3->isMaterialized());
  CHECK(Stats::get().plan_cache_hits == hits + 2);
  // Held again: stored again, by the same plan.
  NodeRef t4;
  CHECK(round(true, t4) == want);
  CHECK(t4->isMaterialized());
  CHECK(Stats::get().plan_cache_hits == hits + 3);
}

TEST_CASE("a structure first flushed without a temporary stores it once it is live") {
  NoBudgetFlush guard;
  engine().flush();
  H a = upload(DType::UInt32, {3}, values<int>({1, 2, 3}));
  auto round = [&](bool holdT, NodeRef &tOut) {
    H t = wrap(binaryOp(OpKind::Add, op(*a), opInt(9)));
    H v = wrap(binaryOp(OpKind::Mul, op(*t), op(*t)));
    tOut = t->value();
    if (!holdT)
      t.reset();
    engine().flush();
    return read<int64_t>(*v);
  };
  NodeRef t1, t2, t3;
  CHECK(round(false, t1) == values<int64_t>({100, 121, 144}));
  CHECK(t1->isPending());
  CHECK(round(true, t2) == values<int64_t>({100, 121, 144}));
  CHECK(t2->isMaterialized());
  // The union stays in the plan (a hit), and a t dropped again gets no
  // memory.
  uint64_t hits = Stats::get().plan_cache_hits;
  CHECK(round(false, t3) == values<int64_t>({100, 121, 144}));
  CHECK_FALSE(t3->isMaterialized());
  CHECK(Stats::get().plan_cache_hits == hits + 1);
}

TEST_CASE("an output a later kernel of its plan reads keeps its memory when dropped") {
  NoBudgetFlush guard;
  engine().flush();
  H a = upload(DType::Int32, {4}, values<int>({1, 2, 3, 4}));
  auto round = [&](bool holdT, NodeRef &tOut) {
    // s = t.sum reduces t; w = t * s needs s, so a second kernel reads t
    // back from memory.
    H t = wrap(binaryOp(OpKind::Mul, op(*a), opInt(3)));
    H s = wrap(reduceOp(OpKind::Sum, *t, {}, false));
    H w = wrap(binaryOp(OpKind::Mul, op(*t), op(*s)));
    tOut = t->value();
    if (!holdT)
      t.reset();
    engine().flush();
    return read<int>(*w);
  };
  NodeRef t1, t2;
  CHECK(round(true, t1) == values<int>({90, 180, 270, 360}));
  uint64_t hits = Stats::get().plan_cache_hits;
  // Dropped: the same plan, and t's buffer is still there for the kernel
  // that reads it (the answer), as a temporary of the plan: afterwards t
  // holds no memory.
  CHECK(round(false, t2) == values<int>({90, 180, 270, 360}));
  CHECK(Stats::get().plan_cache_hits == hits + 1);
  CHECK_FALSE(t2->isMaterialized());
}

TEST_CASE("budget flushes in the middle of recording keep every value right") {
  // A tiny budget makes the pending list flush inside op recording, also
  // between a temporary and the op that consumes it (dot's product).
  PendingList::Limits saved = PendingList::get().limits();
  engine().flush();
  PendingList::get().limits().nodes = 5;
  PendingList::get().limits().hardFactor = 2;
  uint64_t flushes = Stats::get().budget_flushes;
  std::vector<double> host = {1, -2, 3, -4, 5, -6, 7, -8};
  H x = upload(DType::DFloat, {8}, host);
  for (int k = 0; k < 40; ++k) {
    H t = wrap(binaryOp(OpKind::Mul, op(*x), op(0.5)));
    H d = wrap(dotOp(*t, *x));
    H y = wrap(binaryOp(OpKind::Add, op(*t), op(*d)));
    x = wrap(binaryOp(OpKind::Div, op(*y), op(*d)));
    double dot = 0;
    for (double v : host)
      dot += 0.5 * v * v;
    for (double &v : host)
      v = (0.5 * v + dot) / dot;
  }
  std::vector<double> got = read<double>(*x);
  PendingList::get().limits() = saved;
  CHECK(Stats::get().budget_flushes > flushes);
  for (size_t i = 0; i < host.size(); ++i)
    CHECK(got[i] == doctest::Approx(host[i]).epsilon(1e-12));
}

TEST_CASE("CG on the CPU executor matches the same CG on the host") {
  // examples/cg.rb in DFloat on a 6x6 grid, five iterations, with budget
  // flushes at the default budget and the temporaries of each iteration
  // collected at its end.
  const int64_t n = 6;
  const int iterations = 5;
  std::vector<double> b(static_cast<size_t>(n * n), 0.0);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = double((i * 7) % 13) / 13.0;
  H bh = upload(DType::DFloat, {n, n}, b);
  H x = wrap(fillNode(DType::DFloat, {n, n}, Scalar::ofInt(0)));
  H r = wrap(copyOf(*bh));
  H p = wrap(copyOf(*r));
  H rsOld = wrap(reduceOp(OpKind::Sum, *wrap(binaryOp(OpKind::Mul, op(*r), op(*r))), {}, false));
  for (int it = 0; it < iterations; ++it) {
    std::vector<H> temps;
    H ap = laplacian(*p, temps);
    H pap = wrap(reduceOp(OpKind::Sum, *wrap(binaryOp(OpKind::Mul, op(*p), op(*ap))), {}, false));
    H alpha = wrap(binaryOp(OpKind::Div, op(*rsOld), op(*pap)));
    x = wrap(binaryOp(OpKind::Add, op(*x), op(*wrap(binaryOp(OpKind::Mul, op(*p), op(*alpha))))));
    r = wrap(binaryOp(OpKind::Sub, op(*r), op(*wrap(binaryOp(OpKind::Mul, op(*ap), op(*alpha))))));
    H rsNew = wrap(reduceOp(OpKind::Sum, *wrap(binaryOp(OpKind::Mul, op(*r), op(*r))), {}, false));
    H beta = wrap(binaryOp(OpKind::Div, op(*rsNew), op(*rsOld)));
    p = wrap(binaryOp(OpKind::Add, op(*r), op(*wrap(binaryOp(OpKind::Mul, op(*p), op(*beta))))));
    rsOld = std::move(rsNew);
  }
  // The host reference.
  auto lap = [&](const std::vector<double> &v) {
    std::vector<double> out(v.size());
    auto V = [&](int64_t i, int64_t j) {
      return i < 0 || j < 0 || i >= n || j >= n ? 0.0 : v[size_t(i * n + j)];
    };
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[size_t(i * n + j)] = 4 * V(i, j) - V(i - 1, j) - V(i + 1, j) -
                                 V(i, j - 1) - V(i, j + 1);
    return out;
  };
  auto dot = [](const std::vector<double> &u, const std::vector<double> &v) {
    double s = 0;
    for (size_t i = 0; i < u.size(); ++i)
      s += u[i] * v[i];
    return s;
  };
  std::vector<double> hx(b.size(), 0.0), hr = b, hp = b;
  double hrs = dot(hr, hr);
  for (int it = 0; it < iterations; ++it) {
    std::vector<double> hap = lap(hp);
    double alpha = hrs / dot(hp, hap);
    for (size_t i = 0; i < hx.size(); ++i) {
      hx[i] += alpha * hp[i];
      hr[i] -= alpha * hap[i];
    }
    double rsNew = dot(hr, hr);
    for (size_t i = 0; i < hp.size(); ++i)
      hp[i] = hr[i] + hp[i] * (rsNew / hrs);
    hrs = rsNew;
  }
  std::vector<double> gx = read<double>(*x);
  for (size_t i = 0; i < hx.size(); ++i)
    CHECK(gx[i] == doctest::Approx(hx[i]).epsilon(1e-9));
  CHECK(read<double>(*rsOld)[0] == doctest::Approx(hrs).epsilon(1e-9));
}

// ---- more slice updates ------------------------------------------------------

TEST_CASE("a shifted self-assignment reads the old values") {
  for (bool pending : {false, true}) {
    CAPTURE(pending);
    H a = upload(DType::DFloat, {5}, values<double>({0, 1, 2, 3, 4}));
    if (pending)
      a = wrap(binaryOp(OpKind::Add, op(*a), op(0.0)));
    H src = view(*a, {range(0, 3)});
    assign(*a, {range(1, 4)}, *src);
    CHECK(read<double>(*a) == values<double>({0, 0, 1, 2, 3}));
  }
}

TEST_CASE("a single element and a length-one slice can be written") {
  H a = upload(DType::Int32, {2, 3}, values<int>({1, 2, 3, 4, 5, 6}));
  assign(*a, {at(1), at(2)}, Scalar::ofInt(-6));
  assign(*a, {range(0, 0), all()}, Scalar::ofInt(0));
  CHECK(read<int>(*a) == values<int>({0, 0, 0, 4, 5, -6}));
  H one = upload(DType::Int32, {1}, values<int>({9}));
  assign(*a, {at(1), range(0, 1)}, *one); // broadcast from [1]
  CHECK(read<int>(*a) == values<int>({0, 0, 0, 9, 9, -6}));
}

TEST_CASE("a view of a pending updated array reads the update") {
  H a = upload(DType::DFloat, {3, 3}, values<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}));
  H b = wrap(binaryOp(OpKind::Mul, op(*a), op(2.0)));
  assign(*b, {range(1, 2), range(1, 2)}, Scalar::ofFloat(0));
  H col = view(*b, {all(), at(1)});
  H c = wrap(binaryOp(OpKind::Add, op(*col), op(1.0)));
  CHECK(read<double>(*c) == values<double>({5, 1, 1}));
  H t = std::make_unique<ArrayHandle>(b->storageRef(),
                                      transposeLayout(b->layout(), {}, "transpose"));
  assign(*t, {at(2), all()}, Scalar::ofFloat(-1)); // b's column 2
  CHECK(read<double>(*b) == values<double>({2, 4, -1, 8, 0, -1, 14, 0, -1}));
}

TEST_CASE("reshape! of an offset view writes through the scatter path") {
  std::vector<double> seq(24);
  for (size_t i = 0; i < seq.size(); ++i)
    seq[i] = double(i);
  H a = upload(DType::DFloat, {4, 6}, seq);
  H rows = view(*a, {range(1, 2), all()}); // elements 6..17, contiguous
  rows->reshapeInPlace({3, 4});
  assign(*rows, {all(), at(1)}, Scalar::ofFloat(-1)); // elements 7, 11, 15
  // A second scatter on top of the first.
  assign(*rows, {at(2), range(2, 3)}, Scalar::ofFloat(-2)); // elements 16, 17
  std::vector<double> want = seq;
  want[7] = want[11] = want[15] = -1;
  want[16] = want[17] = -2;
  CHECK(read<double>(*a) == want);
}

TEST_CASE("a scatter whose value reads the base sees the old base") {
  std::vector<double> seq(12);
  for (size_t i = 0; i < seq.size(); ++i)
    seq[i] = double(i);
  H a = upload(DType::DFloat, {3, 4}, seq);
  H b = wrap(binaryOp(OpKind::Add, op(*a), op(0.0)));
  H flat = std::make_unique<ArrayHandle>(b->storageRef(), b->layout());
  flat->reshapeInPlace({2, 6});
  // flat[true, 1..2] = flat[true, 3..4] * 10
  H src = view(*flat, {all(), range(3, 4)});
  H val = wrap(binaryOp(OpKind::Mul, op(*src), op(10.0)));
  assign(*flat, {all(), range(1, 2)}, *val);
  CHECK(read<double>(*b) ==
        values<double>({0, 30, 40, 3, 4, 5, 6, 90, 100, 9, 10, 11}));
  CHECK(read<double>(*val) == values<double>({30, 40, 90, 100}));
}

TEST_CASE("a flat view of a pending value computes the right elements") {
  std::vector<double> seq(24);
  for (size_t i = 0; i < seq.size(); ++i)
    seq[i] = double(i);
  H a = upload(DType::DFloat, {4, 6}, seq);
  H e = wrap(unaryOp(OpKind::Neg, *a));
  e->reshapeInPlace({3, 8});
  H col = view(*e, {all(), range(1, 2)});
  H out = wrap(binaryOp(OpKind::Add, op(*col), op(1.0)));
  CHECK(read<double>(*out) == values<double>({0, -1, -8, -9, -16, -17}));
}

TEST_CASE("a held slice value is stored whole when the update is read through part of it") {
  // ap = a * 10; ap[1..4] -= a[0..3] (the difference is held, as Ruby holds
  // it); then only ap[1..2] is read and ap itself is collected. The held
  // difference must still hold all four elements.
  H a = upload(DType::DFloat, {5}, values<double>({0, 1, 2, 3, 4}));
  H ap = wrap(binaryOp(OpKind::Mul, op(*a), op(10.0)));
  std::vector<H> temps;
  subAssign(*ap, {range(1, 4)}, *a, {range(0, 3)}, temps);
  H diff = std::move(temps[2]);
  H part = view(*ap, {range(1, 2)});
  H w = wrap(binaryOp(OpKind::Add, op(*part), op(0.0)));
  temps.clear();
  part.reset();
  ap.reset();
  CHECK(read<double>(*w) == values<double>({10, 19}));
  CHECK(read<double>(*diff) == values<double>({10, 19, 28, 37}));
}

TEST_CASE("keepdims reductions broadcast back into the rows they reduced") {
  H a = upload(DType::DFloat, {2, 3}, values<double>({1, 2, 6, 4, 4, 7}));
  H mean = wrap(reduceOp(OpKind::Mean, *a, {1}, true));
  H centered = wrap(binaryOp(OpKind::Sub, op(*a), op(*mean)));
  CHECK(read<double>(*centered) == values<double>({-2, -1, 3, -1, -1, 2}));
  H mx = wrap(reduceOp(OpKind::Max, *centered, {0}, false));
  CHECK(read<double>(*mx) == values<double>({-1, -1, 3}));
}

TEST_CASE("reductions of 0-dim values and of Bit") {
  H a = upload(DType::DFloat, {4}, values<double>({1, 2, 3, 4}));
  H s = wrap(reduceOp(OpKind::Sum, *a, {}, false));
  H s2 = wrap(reduceOp(OpKind::Sum, *s, {}, false));
  CHECK(read<double>(*s2) == values<double>({10}));
  H bits = wrap(binaryOp(OpKind::Gt, op(*a), op(1.5)));
  H count = wrap(reduceOp(OpKind::Sum, *bits, {}, false));
  CHECK(count->dtype() == DType::Int64);
  CHECK(read<int64_t>(*count) == values<int64_t>({3}));
}

TEST_CASE("empty arrays compute nothing and read as nothing") {
  H e = wrap(fillNode(DType::DFloat, {0, 3}, Scalar::ofInt(1)));
  H f = wrap(binaryOp(OpKind::Mul, op(*e), op(2.0)));
  CHECK(read<double>(*f).empty());
  H a = upload(DType::DFloat, {3}, values<double>({1, 2, 3}));
  H none = upload(DType::DFloat, {0}, std::vector<double>());
  IndexItem empty = range(2, 2);
  empty.exclusive = true; // a[2...2]
  assign(*a, {empty}, *none);
  CHECK(read<double>(*a) == values<double>({1, 2, 3}));
}

TEST_CASE("a whole-array assignment from a strided view can be read flat") {
  // c[] = a.transpose makes c's value the transposed elements; c[1..3]
  // (one index into a 2-D array walks it in row-major order) and reshape!
  // must see them in c's own row-major order.
  H a = upload(DType::DFloat, {2, 3}, values<double>({0, 1, 2, 3, 4, 5}));
  engine().flush();
  H t = std::make_unique<ArrayHandle>(a->storageRef(),
                                      transposeLayout(a->layout(), {}, "transpose"));
  H c = wrap(fillNode(DType::DFloat, {3, 2}, Scalar::ofInt(0)));
  assign(*c, {}, *t);
  CHECK(read<double>(*c) == values<double>({0, 3, 1, 4, 2, 5}));
  H mid = view(*c, {range(1, 3)});
  CHECK(read<double>(*mid) == values<double>({3, 1, 4}));
  c->reshapeInPlace({6});
  CHECK(read<double>(*c) == values<double>({0, 3, 1, 4, 2, 5}));
}

TEST_CASE("a whole-array assignment from a broadcast can be read flat") {
  H row = upload(DType::DFloat, {2}, values<double>({7, 8}));
  engine().flush();
  H c = wrap(fillNode(DType::DFloat, {3, 2}, Scalar::ofInt(0)));
  assign(*c, {}, *row); // c[] = row, broadcast down the rows
  CHECK(read<double>(*c) == values<double>({7, 8, 7, 8, 7, 8}));
  H mid = view(*c, {range(1, 4)});
  CHECK(read<double>(*mid) == values<double>({8, 7, 8, 7}));
}

TEST_CASE("flat indexing, rest and new axes select what Numo selects") {
  H a = wrap(seqNode(DType::Int32, {2, 3, 4}, Scalar::ofInt(0), Scalar::ofInt(1)));
  CHECK(read<int>(*view(*a, {at(-1)})) == values<int>({23}));
  CHECK(read<int>(*view(*a, {range(5, 8)})) == values<int>({5, 6, 7, 8}));
  IndexItem rest;
  rest.kind = IndexItem::Kind::Rest;
  CHECK(read<int>(*view(*a, {at(1), rest, at(2)})) == values<int>({14, 18, 22}));
  IndexItem nw;
  nw.kind = IndexItem::Kind::NewAxis;
  H col = view(*a, {at(0), at(0), all(), nw}); // [4,1]
  CHECK(col->shape() == llvm::ArrayRef<int64_t>({4, 1}));
  H row = view(*a, {at(0), at(1), all()}); // [4]
  H outer = wrap(binaryOp(OpKind::Mul, op(*col), op(*row)));
  std::vector<int> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 4; j < 8; ++j)
      want.push_back(i * j);
  CHECK(read<int>(*outer) == want);
  IndexItem excl = range(0, -1);
  excl.exclusive = true; // 0...-1
  CHECK(read<int>(*view(*a, {at(0), at(2), excl})) == values<int>({8, 9, 10}));
  auto e = errorOf([&] { view(*a, {at(2), all(), all()}); });
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::Index);
  auto r = errorOf([&] { view(*a, {all(), range(1, 3), all()}); });
  REQUIRE(r);
  CHECK(r->kind() == ErrorKind::Range);
}

TEST_CASE("a CG loop that never reads flushes the same plan every time") {
  // DESIGN.md: the pending list cuts where the loop repeats, so every budget
  // flush after the first few runs the same plan: the same number of
  // iterations between flushes and the same kernels launched by each.
  engine().flush();
  // A budget of its own, for segments of a dozen iterations whatever the
  // default is.
  PendingList::Limits saved = PendingList::get().limits();
  PendingList::get().limits().nodes = 256;
  struct Restore {
    PendingList::Limits limits;
    ~Restore() { PendingList::get().limits() = limits; }
  } restore{saved};
  const int64_t n = 8;
  seedRandom(0);
  H b = wrap(randNode(DType::SFloat, {n, n}, Scalar::ofFloat(0), Scalar::ofFloat(1)));
  H x = wrap(fillNode(DType::SFloat, {n, n}, Scalar::ofInt(0)));
  H r = wrap(copyOf(*b));
  H p = wrap(copyOf(*r));
  H rsOld = wrap(reduceOp(OpKind::Sum, *wrap(binaryOp(OpKind::Mul, op(*r), op(*r))), {}, false));
  engine().flush();
  std::vector<int> itersBetween;
  std::vector<uint64_t> kernelsPer;
  uint64_t lastFlushes = Stats::get().budget_flushes;
  uint64_t lastKernels = Stats::get().kernels_launched;
  int lastIter = 0;
  for (int it = 1; it <= 120; ++it) {
    std::vector<H> temps;
    H ap = laplacian(*p, temps);
    H pap = wrap(reduceOp(OpKind::Sum, *wrap(binaryOp(OpKind::Mul, op(*p), op(*ap))), {}, false));
    H alpha = wrap(binaryOp(OpKind::Div, op(*rsOld), op(*pap)));
    x = wrap(binaryOp(OpKind::Add, op(*x), op(*wrap(binaryOp(OpKind::Mul, op(*p), op(*alpha))))));
    r = wrap(binaryOp(OpKind::Sub, op(*r), op(*wrap(binaryOp(OpKind::Mul, op(*ap), op(*alpha))))));
    H rsNew = wrap(reduceOp(OpKind::Sum, *wrap(binaryOp(OpKind::Mul, op(*r), op(*r))), {}, false));
    H beta = wrap(binaryOp(OpKind::Div, op(*rsNew), op(*rsOld)));
    p = wrap(binaryOp(OpKind::Add, op(*r), op(*wrap(binaryOp(OpKind::Mul, op(*p), op(*beta))))));
    rsOld = std::move(rsNew);
    if (Stats::get().budget_flushes != lastFlushes) {
      itersBetween.push_back(it - lastIter);
      kernelsPer.push_back(Stats::get().kernels_launched - lastKernels);
      lastIter = it;
      lastFlushes = Stats::get().budget_flushes;
      lastKernels = Stats::get().kernels_launched;
    }
  }
  CAPTURE(itersBetween);
  CAPTURE(kernelsPer);
  REQUIRE(itersBetween.size() >= 6);
  // Skip the first two flushes (the first segment, and the one that may
  // widen the stored set); the rest are the steady state.
  for (size_t i = 3; i < itersBetween.size(); ++i) {
    CHECK(itersBetween[i] == itersBetween[2]);
    CHECK(kernelsPer[i] == kernelsPer[2]);
  }
  // Memory stays flat: the pending list never holds more than its hard limit.
  const PendingList::Limits &l = PendingList::get().limits();
  CHECK(PendingList::get().liveCount() < l.nodes * l.hardFactor);
}

TEST_CASE("more fused shapes compute what they were written as") {
  SUBCASE("an update of a reduction's result") {
    H a = upload(DType::DFloat, {2, 3}, values<double>({1, 2, 3, 4, 5, 6}));
    H s = wrap(reduceOp(OpKind::Sum, *a, {0}, false));
    assign(*s, {at(1)}, Scalar::ofFloat(100));
    CHECK(read<double>(*s) == values<double>({5, 100, 9}));
  }
  SUBCASE("a reduction and shifted reads of a stencil's result") {
    std::vector<double> v(16);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = double(i * i % 7);
    H vh = upload(DType::DFloat, {4, 4}, v);
    std::vector<H> temps;
    H ap = laplacian(*vh, temps);
    temps.clear();
    std::vector<double> lap = read<double>(*ap);
    H fresh = upload(DType::DFloat, {4, 4}, v);
    H ap2 = laplacian(*fresh, temps);
    temps.clear();
    H total = wrap(reduceOp(OpKind::Sum, *ap2, {}, false));
    H lo = view(*ap2, {range(0, 2), all()});
    H hi = view(*ap2, {range(1, 3), all()});
    H sum = wrap(binaryOp(OpKind::Add, op(*lo), op(*hi)));
    lo.reset();
    hi.reset();
    ap2.reset();
    double t = 0;
    for (double x : lap)
      t += x;
    std::vector<double> want;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        want.push_back(lap[size_t(i * 4 + j)] + lap[size_t((i + 1) * 4 + j)]);
    CHECK(read<double>(*sum) == want);
    CHECK(read<double>(*total)[0] == doctest::Approx(t));
  }
  SUBCASE("a backwards slice update whose value reads the base shifted") {
    H a = upload(DType::Int64, {6}, values<int64_t>({0, 1, 2, 3, 4, 5}));
    H b = wrap(binaryOp(OpKind::Mul, op(*a), opInt(1)));
    // b[4..0 step -2] = b[5..1 step -2] * 10 + b[0..2]... written out:
    H src = view(*b, {range(5, 1, -2)});
    H src2 = view(*b, {range(0, 2)});
    H v1 = wrap(binaryOp(OpKind::Mul, op(*src), opInt(10)));
    H v = wrap(binaryOp(OpKind::Add, op(*v1), op(*src2)));
    assign(*b, {range(4, 0, -2)}, *v);
    // positions 4, 2, 0 get 50+0, 30+1, 10+2
    CHECK(read<int64_t>(*b) == values<int64_t>({12, 1, 31, 3, 50, 5}));
  }
  SUBCASE("a 0-dim view of a pending array") {
    H a = wrap(seqNode(DType::DFloat, {3, 3}, Scalar::ofFloat(1), Scalar::ofFloat(1)));
    H e = view(*a, {at(1), at(2)});
    H f = wrap(binaryOp(OpKind::Mul, op(*e), op(*a)));
    CHECK(read<double>(*e) == values<double>({6}));
    CHECK(read<double>(*f) == values<double>({6, 12, 18, 24, 30, 36, 42, 48, 54}));
  }
  SUBCASE("float division by zero is IEEE") {
    H a = upload(DType::SFloat, {3}, values<double>({1, -1, 0}));
    std::vector<float> d = read<float>(*wrap(binaryOp(OpKind::Div, op(*a), op(0.0))));
    CHECK(d[0] == INFINITY);
    CHECK(d[1] == -INFINITY);
    CHECK(std::isnan(d[2]));
  }
  SUBCASE("a comparison cast to a number and summed") {
    H a = upload(DType::Int32, {5}, values<int>({5, -1, 3, 0, 9}));
    H pos = wrap(binaryOp(OpKind::Gt, op(*a), opInt(0)));
    H n = wrap(castTo(*pos, DType::Int32));
    H m = wrap(binaryOp(OpKind::Mul, op(*n), op(*a)));
    CHECK(read<int>(*m) == values<int>({5, 0, 3, 0, 9}));
    CHECK(read<int64_t>(*wrap(reduceOp(OpKind::Sum, *m, {}, false))) ==
          values<int64_t>({17}));
  }
  SUBCASE("mean with keepdims over every axis") {
    H a = upload(DType::SFloat, {2, 2}, values<double>({1, 2, 3, 6}));
    H m = wrap(reduceOp(OpKind::Mean, *a, {}, true));
    CHECK(m->shape() == llvm::ArrayRef<int64_t>({1, 1}));
    CHECK(read<double>(*m) == values<double>({3}));
    H c = wrap(binaryOp(OpKind::Sub, op(*a), op(*m)));
    CHECK(read<double>(*c) == values<double>({-2, -1, 0, 3}));
  }
  SUBCASE("Int64 seq and rand over wide ranges") {
    H s = wrap(seqNode(DType::Int64, {3}, Scalar::ofInt(int64_t(1) << 40),
                       Scalar::ofInt(-(int64_t(1) << 41))));
    CHECK(read<int64_t>(*s) == values<int64_t>({int64_t(1) << 40, -(int64_t(1) << 40),
                                                -(int64_t(3) << 40)}));
    H r = wrap(randNode(DType::Int64, {200}, Scalar::ofInt(-(int64_t(1) << 50)),
                        Scalar::ofInt(int64_t(1) << 50)));
    for (int64_t v : read<int64_t>(*r)) {
      CHECK(v >= -(int64_t(1) << 50));
      CHECK(v < (int64_t(1) << 50));
    }
  }
}

TEST_CASE("GcCostModel: a GC pays once the optional bytes outweigh its time") {
  GcCostModel model;
  const size_t floor = size_t(64) << 20;
  // No GC timed yet: the floor (CUMO_GC_MIN_BYTES).
  CHECK(model.thresholdBytes(floor) == floor);
  // 40 us, the CG bench's heap: 80 MB at 2 TB/s, over the floor.
  model.noteGc(40000);
  CHECK(model.averageNs() == 40000);
  CHECK(model.thresholdBytes(floor) == size_t(40000 * GcCostModel::kStoreBytesPerNs));
  // A fast GC leaves the floor in charge.
  GcCostModel fast;
  fast.noteGc(1000);
  CHECK(fast.thresholdBytes(floor) == floor);
  // One slow GC moves the average a quarter of the way.
  model.noteGc(3000000);
  CHECK(model.averageNs() == (3 * 40000 + 3000000) / 4);
  // A heap of a million slots (3 ms a GC): gigabytes, so only the pool's
  // growth collects.
  for (int i = 0; i < 20; ++i)
    model.noteGc(3000000);
  CHECK(model.thresholdBytes(floor) > (size_t(5) << 30));
  // A bandwidth of 0 (CUMO_GC_STORE_BYTES_PER_NS=0): the floor alone.
  model.setStoreBytesPerNs(0);
  CHECK(model.thresholdBytes(floor) == floor);
}

TEST_CASE("GcCostModel: only what a GC costs whatever it frees sets the threshold") {
  GcCostModel model;
  const size_t floor = size_t(1) << 20;
  // The first GC asks for a bare one after it, and then every kBareEvery-th.
  model.noteGc(100000);
  CHECK(model.wantsBareGc());
  model.noteBareGc(30000);
  CHECK(model.fixedNs() == 30000);
  CHECK(model.thresholdBytes(floor) == size_t(30000 * GcCostModel::kStoreBytesPerNs));
  int asked = 0;
  for (uint64_t i = 0; i < 2 * GcCostModel::kBareEvery; ++i) {
    model.noteGc(100000);
    asked += model.wantsBareGc();
  }
  CHECK(asked == 2);
  // GCs that free twice the garbage take twice as long: the threshold stays
  // (it followed their time before, and a GC every other flush then held).
  for (int i = 0; i < 20; ++i)
    model.noteGc(200000);
  CHECK(model.averageNs() > 199000);
  CHECK(model.thresholdBytes(floor) == size_t(30000 * GcCostModel::kStoreBytesPerNs));
  // A bigger heap makes the bare GC slower, and the threshold follows.
  for (int i = 0; i < 20; ++i)
    model.noteBareGc(150000);
  CHECK(model.fixedNs() > 149000);
  CHECK(model.fixedNs() <= 150000);
  // Never above the whole GCs' average.
  GcCostModel odd;
  odd.noteGc(20000);
  odd.noteBareGc(50000);
  CHECK(odd.fixedNs() == 20000);
}
