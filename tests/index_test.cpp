// Index arrays whose values stay on the device (ops/device_index.h,
// ops/fancy_index.h), on the CPU executor: they select what the same
// values known on the host select, in the same shapes; recording reads
// nothing back; a position out of range raises IndexError at the next
// read, naming [] or []=; repeated positions take the last write; and the
// plan depends on no index value.
#include "core/device.h"
#include "core/stats.h"
#include "ops/device_index.h"
#include "ops/fancy_index.h"
#include "ops/portable_ops.h"

#include "test_helpers.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>

using namespace cumo;
using namespace cumo::test;

namespace {

/// An index item: a plain one, or an index array on the device.
FancyItem item(IndexItem it) {
  FancyItem f;
  f.item = it;
  return f;
}
FancyItem onDevice(const ArrayHandle &index) {
  FancyItem f;
  f.isList = true;
  f.device = &index;
  f.listShape = toShape(index.shape());
  return f;
}
FancyItem hostList(std::vector<int64_t> positions) {
  FancyItem f;
  f.isList = true;
  f.listShape = {int64_t(positions.size())};
  f.positions = std::move(positions);
  return f;
}

/// a[items], as ruby/indexing.cpp's [] records it.
H gather(const ArrayHandle &a, std::vector<FancyItem> items) {
  return wrap(gatherOp(a, fancySelection(a.shape(), items, "[]")));
}

/// a[items] = value (of the selection's shape and a's class).
void write(ArrayHandle &a, std::vector<FancyItem> items, const ArrayHandle &value) {
  Selection sel = fancySelection(a.shape(), items, "[]=");
  ArrayHandle whole(a.storageRef(), a.layout());
  NodeRef v = castNode(broadcastNode(value.value(), sel.shape, "[]="), a.dtype());
  assignValue(whole, indexWriteOp(a, sel, v), "[]=");
}

H seq(DType t, Shape shape) {
  engine();
  return wrap(seqNode(t, shape, Scalar::ofInt(0), Scalar::ofInt(1)));
}

} // namespace

TEST_CASE("index_normalize and index_add: a position, or -1 once out of range") {
  using cumo_ops::index_add;
  using cumo_ops::index_normalize;
  CHECK(index_normalize(3LL, 5LL) == 3);
  CHECK(index_normalize(-1LL, 5LL) == 4);
  CHECK(index_normalize(-5LL, 5LL) == 0);
  CHECK(index_normalize(5LL, 5LL) == -1);
  CHECK(index_normalize(-6LL, 5LL) == -1);
  CHECK(index_normalize(0LL, 0LL) == -1);
  CHECK(index_add(3LL, 4LL) == 7);
  CHECK(index_add(-7LL, 9LL) == -1); // -1 times a stride of 7
  CHECK(index_add(9LL, -1LL) == -1);
}

TEST_CASE("an index array on the device selects what its values on the host select") {
  H a = seq(DType::DFloat, {3, 4});
  SUBCASE("a single index: flat, in the index's shape, any integer class") {
    for (DType t : {DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8,
                    DType::UInt16, DType::UInt32, DType::UInt64}) {
      CAPTURE(nameOf(t));
      H idx = upload(t, {2, 2}, values<int64_t>({5, 0, 11, 6}));
      H g = gather(*a, {onDevice(*idx)});
      CHECK(g->shape() == llvm::ArrayRef<int64_t>({2, 2}));
      CHECK(read<double>(*g) == values<double>({5, 0, 11, 6}));
    }
    H neg = upload(DType::Int32, {3}, values<int64_t>({-1, -12, 3}));
    CHECK(read<double>(*gather(*a, {onDevice(*neg)})) == values<double>({11, 0, 3}));
  }
  SUBCASE("along an axis, with ranges, integers, true and new axes") {
    H rows = upload(DType::Int32, {3}, values<int64_t>({2, -3, 2}));
    H cols = upload(DType::Int64, {2}, values<int64_t>({-1, 1}));
    H g = gather(*a, {onDevice(*rows), item(all())});
    CHECK(g->shape() == llvm::ArrayRef<int64_t>({3, 4}));
    CHECK(read<double>(*g) == values<double>({8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
    H h = gather(*a, {item(range(1, 2)), onDevice(*cols)});
    CHECK(read<double>(*h) == values<double>({7, 5, 11, 9}));
    H i = gather(*a, {item(at(-1)), onDevice(*cols)});
    CHECK(i->shape() == llvm::ArrayRef<int64_t>({2}));
    CHECK(read<double>(*i) == values<double>({11, 9}));
    IndexItem newAxis;
    newAxis.kind = IndexItem::Kind::NewAxis;
    H j = gather(*a, {item(newAxis), onDevice(*rows), onDevice(*cols)});
    CHECK(j->shape() == llvm::ArrayRef<int64_t>({1, 3, 2}));
    CHECK(read<double>(*j) == values<double>({11, 9, 3, 1, 11, 9}));
  }
  SUBCASE("a 0-dim index removes its axis, as an integer does") {
    H tok = upload(DType::Int32, {}, values<int64_t>({-2}));
    H row = gather(*a, {onDevice(*tok), item(all())});
    CHECK(row->shape() == llvm::ArrayRef<int64_t>({4}));
    CHECK(read<double>(*row) == values<double>({4, 5, 6, 7}));
    H one = gather(*a, {onDevice(*tok), onDevice(*tok)});
    CHECK(one->shape().empty());
    CHECK(read<double>(*one) == values<double>({6}));
    H flat = gather(*a, {onDevice(*tok)});
    CHECK(flat->shape().empty());
    CHECK(read<double>(*flat) == values<double>({10}));
  }
  SUBCASE("an index of several axes among others lies along one axis, row-major") {
    H two = upload(DType::Int16, {2, 2}, values<int64_t>({3, 0, 0, 1}));
    H g = gather(*a, {item(at(1)), onDevice(*two)});
    CHECK(g->shape() == llvm::ArrayRef<int64_t>({4}));
    CHECK(read<double>(*g) == values<double>({7, 4, 4, 5}));
  }
  SUBCASE("beside a host-known list, and through a strided view") {
    H cols = upload(DType::UInt8, {2}, values<int64_t>({3, 0}));
    H g = gather(*a, {hostList({0, -1}), onDevice(*cols)});
    CHECK(read<double>(*g) == values<double>({3, 0, 11, 8}));
    ArrayHandle t(a->storageRef(), transposeLayout(a->layout(), {}, "transpose"));
    H rows = upload(DType::Int32, {2}, values<int64_t>({3, 1}));
    H h = gather(t, {onDevice(*rows), item(range(0, 1))});
    CHECK(read<double>(*h) == values<double>({3, 7, 1, 5}));
  }
  SUBCASE("an index computed by pending ops") {
    H base = upload(DType::Int32, {2}, values<int64_t>({1, 2}));
    H idx = wrap(binaryOp(OpKind::Mul, op(*base), opInt(3)));
    CHECK(read<double>(*gather(*a, {onDevice(*idx)})) == values<double>({3, 6}));
  }
}

TEST_CASE("writes at device positions: the last write of a position wins") {
  H a = seq(DType::Int32, {3, 4});
  H rows = upload(DType::Int64, {3}, values<int64_t>({2, -1, 0}));
  H v = upload(DType::Int32, {3, 4}, values<int64_t>({1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  write(*a, {onDevice(*rows), item(all())}, *v);
  CHECK(read<int>(*a) == values<int>({3, 3, 3, 3, 4, 5, 6, 7, 2, 2, 2, 2}));
  H flat = upload(DType::UInt16, {5}, values<int64_t>({1, 9, 1, 1, 9}));
  H w = upload(DType::Int32, {5}, values<int64_t>({10, 20, 30, 40, 50}));
  write(*a, {onDevice(*flat)}, *w);
  CHECK(read<int>(*a) == values<int>({3, 40, 3, 3, 4, 5, 6, 7, 2, 50, 2, 2}));
  H pos = upload(DType::Int32, {}, values<int64_t>({1}));
  H row = upload(DType::Int32, {4}, values<int64_t>({-1, -2, -3, -4}));
  write(*a, {onDevice(*pos), item(all())}, *row);
  CHECK(read<int>(*a) == values<int>({3, 40, 3, 3, -1, -2, -3, -4, 2, 50, 2, 2}));
  // Host-known positions are resolved on the host, to the same answer.
  H b = seq(DType::Int32, {4});
  H x = upload(DType::Int32, {3}, values<int64_t>({7, 8, 9}));
  write(*b, {hostList({0, 0, 3})}, *x);
  CHECK(read<int>(*b) == values<int>({8, 1, 2, 9}));
}

TEST_CASE("a write whose positions cannot repeat says so; one that can does not") {
  H a = seq(DType::SFloat, {2, 3, 8, 4});
  auto distinct = [&](std::vector<FancyItem> items) {
    return positionsAreDistinct(fancySelection(a->shape(), items, "[]=").device);
  };
  H pos = upload(DType::Int32, {1}, values<int64_t>({5}));
  H scalar = upload(DType::Int32, {}, values<int64_t>({5}));
  H two = upload(DType::Int32, {2}, values<int64_t>({5, 5}));
  // decode's cache write: ranges and a one-element index
  CHECK(distinct({item(all()), item(all()), onDevice(*pos), item(all())}));
  CHECK(distinct({item(at(1)), item(range(0, 2, 2)), onDevice(*scalar), item(all())}));
  CHECK(distinct({item(all()), hostList({2, 0}), onDevice(*pos), item(at(3))}));
  // an index of two elements may name one position twice, as may a list
  CHECK_FALSE(distinct({item(all()), item(all()), onDevice(*two), item(all())}));
  CHECK_FALSE(distinct({item(all()), hostList({1, 1}), onDevice(*pos), item(all())}));
  H flat = upload(DType::Int64, {2}, values<int64_t>({3, 3}));
  CHECK_FALSE(distinct({onDevice(*flat)}));
}

TEST_CASE("a write into an array nothing else sees goes into its buffer; a seen one is copied") {
  H a = seq(DType::SFloat, {2, 8, 4});
  H pos = upload(DType::Int32, {1}, values<int64_t>({3}));
  H row = upload(DType::SFloat, {2, 1, 4}, values<int64_t>({-1, -2, -3, -4, -5, -6, -7, -8}));
  read<float>(*a); // settled
  const void *memory = a->value()->buffer()->data();
  auto copies = [](const Plan &p) {
    return llvm::count_if(p.kernels, [](const Kernel &k) {
      return k.kind == Kernel::Kind::Elementwise && k.domain == Shape({2, 8, 4});
    });
  };
  std::vector<float> want = read<float>(*a);
  auto written = [&](std::vector<float> w, int64_t p) {
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 4; ++c)
        w[size_t(b * 32 + p * 4 + c)] = -float(b * 4 + c + 1);
    return w;
  };

  SUBCASE("in place: no copy, the same memory") {
    write(*a, {item(all()), onDevice(*pos), item(all())}, *row);
    // (A plan holds its inputs: one kept alive would keep the write a copy.)
    CHECK(copies(engine().explain({a->value()})) == 0);
    Stats before = Stats::get();
    CHECK(read<float>(*a) == written(want, 3));
    CHECK(a->value()->buffer()->data() == memory);
    CHECK(Stats::get().bytes_allocated == before.bytes_allocated);
  }
  SUBCASE("a view shares the array's storage: it sees the write, made in place") {
    H part = view(*a, {range(0, 0), all(), all()});
    write(*a, {item(all()), onDevice(*pos), item(all())}, *row);
    CHECK(copies(engine().explain({a->value()})) == 0);
    CHECK(read<float>(*a) == written(want, 3));
    std::vector<float> first = written(want, 3);
    first.resize(32);
    CHECK(read<float>(*part) == first);
  }
  SUBCASE("a reshape shares the old value's buffer: copied, and it keeps the old value") {
    H flat = wrap(reshapeNode(*a, {64}));
    write(*a, {item(all()), onDevice(*pos), item(all())}, *row);
    CHECK(copies(engine().explain({a->value()})) == 1);
    CHECK(read<float>(*a) == written(want, 3));
    CHECK(a->value()->buffer()->data() != memory);
    CHECK(read<float>(*flat) == want);
  }
  SUBCASE("a pending reader of the old value recorded before the write: copied") {
    H twice = wrap(binaryOp(OpKind::Mul, op(*a), op(2.0)));
    write(*a, {item(all()), onDevice(*pos), item(all())}, *row);
    CHECK(copies(engine().explain({a->value(), twice->value()})) == 1);
    CHECK(read<float>(*a) == written(want, 3));
    std::vector<float> doubled;
    for (float v : want)
      doubled.push_back(v * 2);
    CHECK(read<float>(*twice) == doubled);
  }
}

TEST_CASE("writes at one device position share its table until the position changes") {
  H k = seq(DType::SFloat, {2, 6, 3});
  H v = seq(DType::SFloat, {2, 6, 3});
  H pos = upload(DType::Int32, {1}, values<int64_t>({4}));
  H row = upload(DType::SFloat, {2, 1, 3}, values<int64_t>({-1, -2, -3, -4, -5, -6}));
  read<float>(*k);
  read<float>(*v);
  std::vector<float> want = read<float>(*k);
  auto tables = [](const Plan &p) {
    return llvm::count_if(p.buffers, [](const PlanBuffer &b) {
      return b.role != PlanBuffer::Role::Input && b.dtype == DType::Int64;
    });
  };
  write(*k, {item(all()), onDevice(*pos), item(all())}, *row);
  write(*v, {item(all()), onDevice(*pos), item(all())}, *row);
  CHECK(tables(engine().explain({k->value(), v->value()})) == 1);
  // The position moves (a write into its array): a table of its own.
  H one = upload(DType::Int32, {1}, values<int64_t>({1}));
  assign(*pos, {all()}, *one);
  write(*k, {item(all()), onDevice(*pos), item(all())}, *row);
  CHECK(tables(engine().explain({k->value(), v->value()})) == 2);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 3; ++c) {
      want[size_t(b * 18 + 4 * 3 + c)] = -float(b * 3 + c + 1);
      want[size_t(b * 18 + 1 * 3 + c)] = -float(b * 3 + c + 1);
    }
  CHECK(read<float>(*k) == want);
}

TEST_CASE("writes of one stage at one table's positions into several arrays are one kernel") {
  H k = seq(DType::SFloat, {2, 6, 3});
  H v = seq(DType::SFloat, {2, 6, 3});
  H w = seq(DType::SFloat, {2, 6, 3});
  H pos = upload(DType::Int32, {1}, values<int64_t>({4}));
  H kr = upload(DType::SFloat, {2, 1, 3}, values<int64_t>({-1, -2, -3, -4, -5, -6}));
  H vr = upload(DType::SFloat, {2, 1, 3}, values<int64_t>({10, 20, 30, 40, 50, 60}));
  std::vector<float> want = read<float>(*k);
  read<float>(*v);
  read<float>(*w);
  auto writes = [](const Plan &p) {
    return llvm::count_if(p.kernels, [](const Kernel &kk) {
      return kk.kind == Kernel::Kind::Opaque && kk.opaqueOp == OpKind::IndexWrite;
    });
  };
  write(*k, {item(all()), onDevice(*pos), item(all())}, *kr);
  write(*v, {item(all()), onDevice(*pos), item(all())}, *vr);
  // A write of another shape (one row) stays a kernel of its own.
  H one = upload(DType::SFloat, {1, 1, 3}, values<int64_t>({7, 8, 9}));
  write(*w, {item(range(0, 0)), onDevice(*pos), item(all())}, *one);
  CHECK(writes(engine().explain({k->value(), v->value(), w->value()})) == 2);
  std::vector<float> wantK = want, wantV = want, wantW = want;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 3; ++c) {
      wantK[size_t(b * 18 + 12 + c)] = -float(b * 3 + c + 1);
      wantV[size_t(b * 18 + 12 + c)] = 10 * float(b * 3 + c + 1);
    }
  for (int64_t c = 0; c < 3; ++c)
    wantW[size_t(12 + c)] = float(7 + c);
  CHECK(read<float>(*k) == wantK);
  CHECK(read<float>(*v) == wantV);
  CHECK(read<float>(*w) == wantW);
}

TEST_CASE("a device position out of range raises IndexError at the next read") {
  H a = seq(DType::SFloat, {3, 4});
  SUBCASE("a read names [] and answers 0 there") {
    H idx = upload(DType::Int32, {3}, values<int64_t>({1, 3, -4}));
    H g = gather(*a, {onDevice(*idx), item(all())});
    auto e = errorOf([&] { read<double>(*g); });
    REQUIRE(e);
    CHECK(e->kind() == ErrorKind::Index);
    CHECK(e->message().rfind("[[]] index out of range", 0) == 0);
    // The flag is cleared once raised; the positions in range were read.
    CHECK(read<double>(*g) == values<double>({4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0}));
    H ok = gather(*a, {onDevice(*upload(DType::Int32, {1}, values<int64_t>({0})))});
    CHECK(read<double>(*ok) == values<double>({0}));
  }
  SUBCASE("a flat index past the last element") {
    H idx = upload(DType::Int64, {}, values<int64_t>({12}));
    auto e = errorOf([&] { read<double>(*gather(*a, {onDevice(*idx)})); });
    REQUIRE(e);
    CHECK(e->kind() == ErrorKind::Index);
  }
  SUBCASE("a write names []= and writes the positions in range") {
    H idx = upload(DType::Int32, {2}, values<int64_t>({9, 0}));
    H v = upload(DType::SFloat, {2, 4}, values<double>({1, 1, 1, 1, 2, 2, 2, 2}));
    write(*a, {onDevice(*idx), item(all())}, *v);
    auto e = errorOf([&] { read<double>(*a); });
    REQUIRE(e);
    CHECK(e->kind() == ErrorKind::Index);
    CHECK(e->message().rfind("[[]=] index out of range", 0) == 0);
    CHECK(read<double>(*a) == values<double>({2, 2, 2, 2, 4, 5, 6, 7, 8, 9, 10, 11}));
  }
}

TEST_CASE("of several checks run before a read, the error names the first that failed") {
  // Tags (Kernel::checkTag) tell the engine which op flagged: not merely
  // the first one that ran.
  H a = seq(DType::Int32, {4});
  H good = upload(DType::Int32, {1}, values<int64_t>({1}));
  H bad = upload(DType::Int32, {1}, values<int64_t>({4}));
  H first = gather(*a, {onDevice(*good)});
  H v = upload(DType::Int32, {1}, values<int64_t>({9}));
  write(*a, {onDevice(*bad)}, *v);
  H later = gather(*a, {onDevice(*bad)});
  auto e = errorOf([&] { read<int>(*first); });
  REQUIRE(e);
  CHECK(e->message().rfind("[[]=] index out of range", 0) == 0);
  CHECK(read<int>(*later) == values<int>({0}));
}

TEST_CASE("device indices are recorded without a sync, and their values never change the plan") {
  H wte = seq(DType::DFloat, {50, 8});
  read<double>(*wte);
  H tok = upload(DType::Int32, {}, values<int64_t>({3}));
  auto step = [&](int64_t shift) {
    // tok = (tok + shift) % 50; x = wte[tok, true]; wte[tok, true] = x * 2
    H next = wrap(binaryOp(OpKind::Add, op(*tok), opInt(shift)));
    tok = wrap(binaryOp(OpKind::Mod, op(*next), opInt(50)));
    H x = gather(*wte, {onDevice(*tok), item(all())});
    H twice = wrap(binaryOp(OpKind::Mul, op(*x), op(2.0)));
    write(*wte, {onDevice(*tok), item(all())}, *twice);
    return x;
  };
  uint64_t syncs = Stats::get().host_syncs;
  H x = step(7);
  CHECK(Stats::get().host_syncs == syncs);
  CHECK(read<double>(*x) == values<double>({80, 81, 82, 83, 84, 85, 86, 87}));
  for (int i = 0; i < 3; ++i)
    read<double>(*step(i));
  uint64_t hits = Stats::get().plan_cache_hits, misses = Stats::get().plan_cache_misses;
  for (int i = 0; i < 5; ++i)
    read<double>(*step(11 + i));
  CHECK(Stats::get().plan_cache_misses == misses);
  CHECK(Stats::get().plan_cache_hits >= hits + 5);
}
