// graph/direct_access.h: an array's memory handed outside the engine's
// plans, on the CPU executor (the same code serves the GPU's).
#include "graph/direct_access.h"

#include "test_helpers.h"

#include <doctest/doctest.h>

#include <cstring>

using namespace cumo;
using namespace cumo::test;

TEST_CASE("pending work is computed first; the memory is the elements, row-major") {
  H a = upload(DType::DFloat, {2, 3}, values<double>({1, 2, 3, 4, 5, 6}));
  H b = wrap(binaryOp(OpKind::Mul, op(*a), op(10.0)));
  ElementMemory m = readableElements(*b, "get");
  CHECK(m.bytes == 6 * sizeof(double));
  double got[6];
  std::memcpy(got, m.address(), sizeof got);
  CHECK(got[5] == 60.0);
  // A contiguous view: its first element.
  H row = view(*a, {at(1), all()});
  ElementMemory r = readableElements(*row, "get");
  CHECK(r.bytes == 3 * sizeof(double));
  CHECK(static_cast<double *>(r.address())[0] == 4.0);
}

TEST_CASE("a writer gets values of its own: a shared value is copied first") {
  H a = upload(DType::SFloat, {4}, values<double>({1, 2, 3, 4}));
  ElementMemory own = writableElements(*a, "set");
  // Nothing else holds a's value: no copy.
  CHECK(own.buffer == a->storage().current()->buffer());
  // Another holder of the node (as a pending op or a second array's value
  // would be) makes the next writer copy.
  NodeRef other = a->storage().currentRef();
  ElementMemory fresh = writableElements(*a, "set");
  CHECK(fresh.buffer != other->buffer());
  static_cast<float *>(fresh.address())[0] = 100;
  CHECK(read<double>(*a) == values<double>({100, 2, 3, 4}));
  float kept;
  std::memcpy(&kept, other->buffer()->data(), sizeof kept);
  CHECK(kept == 1.0f);
  // A view writes into its base.
  H v = view(*a, {range(1, 2)});
  ElementMemory w = writableElements(*v, "set");
  static_cast<float *>(w.address())[1] = 30;
  CHECK(read<double>(*a) == values<double>({100, 2, 30, 4}));
}

TEST_CASE("a strided view: element 0's address and its own strides") {
  H a = upload(DType::Int32, {2, 4}, values<double>({0, 1, 2, 3, 4, 5, 6, 7}));
  H reversed = view(*a, {all(), range(3, 0, -1)});
  ElementMemory m = stridedElements(*reversed, "launch", false);
  const auto *first = static_cast<const int32_t *>(m.address());
  CHECK(first[0] == 3); // element (0, 0) of the view
  llvm::ArrayRef<int64_t> s = reversed->layout().strides;
  CHECK(first[1 * s[0] + 2 * s[1]] == 5); // element (1, 2): a[1, 1]
  // A writer of a shared value writes a copy.
  NodeRef other = a->storage().currentRef();
  ElementMemory w = stridedElements(*reversed, "launch", true);
  static_cast<int32_t *>(w.address())[0] = 30;
  CHECK(read<double>(*a)[3] == 30);
  int32_t kept;
  std::memcpy(&kept, static_cast<const char *>(other->buffer()->data()) + 3 * sizeof(int32_t),
              sizeof kept);
  CHECK(kept == 3);
}

TEST_CASE("an array never written gets memory; strided views and Bit are refused") {
  H e = wrap(emptyNode(DType::Int32, {5}));
  ElementMemory m = writableElements(*e, "launch");
  CHECK(m.bytes == 5 * sizeof(int32_t));
  CHECK(e->storage().current()->isMaterialized());
  H a = upload(DType::SFloat, {6}, values<double>({1, 2, 3, 4, 5, 6}));
  H stepped = view(*a, {range(0, 5, 2)});
  std::optional<Error> s = errorOf([&] { readableElements(*stepped, "get"); });
  REQUIRE(s);
  CHECK(s->kind() == ErrorKind::Argument);
  CHECK(s->message().find("[get] the array must be contiguous") == 0);
  H bits = upload(DType::Bit, {3}, values<double>({1, 0, 1}));
  std::optional<Error> b = errorOf([&] { writableElements(*bits, "set"); });
  REQUIRE(b);
  CHECK(b->kind() == ErrorKind::Type);
}
