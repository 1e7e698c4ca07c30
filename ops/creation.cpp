#include "ops/creation.h"

#include "core/device.h"
#include "core/error.h"
#include "ops/record.h"

namespace cumo {

namespace {
struct RandomState {
  uint64_t seed = 0x5eed5eed12345678ull;
  uint64_t counter = 0;
};
RandomState &randomState() {
  static RandomState state;
  return state;
}
} // namespace

void checkShape(std::string_view op, llvm::ArrayRef<int64_t> shape) {
  for (int64_t d : shape)
    if (d < 0)
      opError(ErrorKind::Argument, op,
              "negative extent in shape " + shapeToString(shape));
}

NodeRef fillNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &v) {
  NodeRef n = record(OpKind::Fill, dtype, shape);
  n->scalar = v;
  return n;
}

NodeRef seqNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &start,
                const Scalar &step) {
  NodeRef n = record(OpKind::Seq, dtype, shape);
  n->scalar = start;
  n->scalar2 = step;
  return n;
}

NodeRef randNode(DType dtype, llvm::ArrayRef<int64_t> shape, const Scalar &low,
                 const Scalar &high) {
  NodeRef n = record(OpKind::Rand, dtype, shape);
  n->scalar = low;
  n->scalar2 = high;
  RandomState &rs = randomState();
  n->seed = rs.seed;
  n->counter = rs.counter;
  rs.counter += uint64_t(numElements(shape));
  return n;
}

void seedRandom(uint64_t seed) {
  randomState().seed = seed;
  randomState().counter = 0;
}

NodeRef emptyNode(DType dtype, llvm::ArrayRef<int64_t> shape) {
  return record(OpKind::Empty, dtype, shape);
}

NodeRef uploadNode(DType dtype, llvm::ArrayRef<int64_t> shape, const void *bytes) {
  Device &dev = currentDevice();
  size_t n = size_t(numElements(shape)) * sizeOf(dtype);
  Ref<Buffer> buf = dev.pool().allocate(n);
  dev.upload(*buf, 0, bytes, n);
  return makeBufferNode(dtype, std::move(buf), Layout::contiguous(shape));
}

void assignValue(ArrayHandle &target, NodeRef value, std::string_view op) {
  if (target.frozen)
    opError(ErrorKind::Frozen, op, "can't modify frozen " +
                                       std::string("Cumo::") +
                                       std::string(nameOf(target.dtype())));
  Storage &s = target.storage();
  if (target.isWhole()) {
    // A storage's value, once materialized, lies contiguously in its
    // buffer; a strided alias (a transpose, a broadcast) is copied.
    if (value->isMaterialized() && !(value->layout().isContiguous() &&
                                     value->layout().size() == value->size()))
      value = record(OpKind::Copy, value->dtype(), value->shape(), {value});
    s.setCurrent(std::move(value));
    return;
  }
  if (target.size() == 0)
    return;
  NodeRef base = s.currentRef();
  NodeRef u = record(OpKind::Update, base->dtype(), base->shape(), {base, value});
  u->extra().target = target.layout();
  s.setCurrent(std::move(u));
}

} // namespace cumo
