#include "fusion/library_epilogue.h"

#include "core/error.h"
#include "core/node.h"
#include "fusion/schedule.h"
#include "ops/matmul.h"

namespace cumo {

namespace {

/// `strides` (of an array of shape `shape`) as they step over `domain`,
/// the array broadcast against its trailing axes: 0 along a broadcast axis.
llvm::SmallVector<int64_t, 4> broadcastStrides(llvm::ArrayRef<int64_t> shape,
                                               llvm::ArrayRef<int64_t> strides,
                                               llvm::ArrayRef<int64_t> domain) {
  llvm::SmallVector<int64_t, 4> out(domain.size(), 0);
  size_t lead = domain.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1)
      out[lead + d] = strides[d];
  return out;
}

/// Row-major over `domain`, axes of extent 1 aside.
bool isRowMajor(llvm::ArrayRef<int64_t> domain, llvm::ArrayRef<int64_t> strides) {
  if (strides.size() != domain.size())
    return false;
  Strides rowMajor = contiguousStrides(domain);
  for (size_t d = 0; d < domain.size(); ++d)
    if (domain[d] != 1 && strides[d] != rowMajor[d])
      return false;
  return true;
}

} // namespace

bool takesLibraryEpilogue(const Node *n) {
  if (n->op() != OpKind::MatMul)
    return false;
  DType t = n->dtype();
  return (t == DType::SFloat || t == DType::DFloat) && n->scalar.isOne() &&
         !isSmallProduct(t, n->input(0)->shape(), n->input(1)->shape());
}

std::optional<LibraryEpilogueKind> addendKind(llvm::ArrayRef<int64_t> domain,
                                              llvm::ArrayRef<int64_t> strides) {
  if (domain.empty() || strides.size() != domain.size())
    return std::nullopt;
  // Row-major is the sum's own layout, which cuBLASLt reads as C whatever
  // the product's shape; a bias is what broadcasts along an axis.
  if (isRowMajor(domain, strides))
    return LibraryEpilogueKind::Residual;
  size_t last = domain.size() - 1;
  bool bias = domain[last] == 1 || strides[last] == 1;
  for (size_t d = 0; d < last && bias; ++d)
    bias = domain[d] == 1 || strides[d] == 0;
  if (bias)
    return LibraryEpilogueKind::Bias;
  return std::nullopt;
}

const Node *libraryAddend(const Node *product, const Node *consumer) {
  if (!takesLibraryEpilogue(product) || consumer->op() != OpKind::Add ||
      consumer->dtype() != product->dtype() || consumer->shape() != product->shape())
    return nullptr;
  const Node *o = consumer->input(0) == product ? consumer->input(1) : consumer->input(0);
  if (o == product || (consumer->input(0) != product && consumer->input(1) != product) ||
      o->dtype() != product->dtype())
    return nullptr;
  llvm::ArrayRef<int64_t> shape = product->shape(), os = o->shape();
  bool residual = os == shape;
  // A bias broadcasts along the result's last axis, which is cuBLAS's
  // rows only when the second operand is a matrix (a vector b makes the
  // result's last axis the first operand's rows).
  bool bias = !residual && !os.empty() && os.size() <= shape.size() && os.back() == shape.back() &&
              product->input(1)->ndim() >= 2;
  for (size_t d = 0; bias && d + 1 < os.size(); ++d)
    bias = os[d] == 1;
  if (!residual && !bias)
    return nullptr;
  // Pending values are stored row-major by the plan; a materialized one
  // lies where its layout says. What cuBLASLt reads as a bias must run
  // along cuBLAS's rows, which takes a matrix b (a full-shape addend with
  // a broadcast axis reads as one too).
  if (o->isMaterialized()) {
    const Layout &l = o->layout();
    std::optional<LibraryEpilogueKind> kind =
        addendKind(shape, broadcastStrides(l.shape, l.strides, shape));
    if (!kind || (*kind == LibraryEpilogueKind::Bias && product->input(1)->ndim() < 2))
      return nullptr;
  }
  return o;
}

llvm::SmallVector<uint32_t, 4>
findLibraryEpilogue(const Schedule &s, uint32_t product,
                    llvm::ArrayRef<llvm::SmallVector<uint32_t, 2>> readers) {
  const Node *p = s.nodes[product].get();
  // Read by another kernel, the product would be computed alone every
  // time (see the header).
  if (readers[product].size() != 1)
    return {};
  uint32_t c = readers[product][0];
  const Schedule::Facts &cf = s.facts[c];
  if (cf.rowGroup >= 0 || cf.epilogue >= 0 || cf.prologue >= 0)
    return {};
  const Node *o = libraryAddend(p, s.nodes[c].get());
  if (!o)
    return {};
  if (auto it = s.index.find(o); it != s.index.end()) {
    const Schedule::Facts &of = s.facts[it->second];
    // Stored only for cuBLASLt to read, it would cost the pass the
    // epilogue saves; recorded after the product, its analysis would come
    // after the product's, which places the product after it.
    if (it->second > product || (!of.buffered && Schedule::isInlineable(o, of)) ||
        of.rowGroup >= 0 || of.prologue >= 0)
      return {};
  }
  return {c};
}

std::optional<LibraryEpilogue> libraryEpilogueOf(const Kernel &k) {
  if (!k.hasEpilogue() || k.opaqueOp != OpKind::MatMul || k.values.size() != 3 ||
      k.loads.size() != 1 || k.stores.empty() || k.stores.size() > 2 || !k.params.empty() ||
      !k.generators.empty() || k.bases.size() != 1 || k.hasPrologue())
    return std::nullopt;
  const Value &result = k.values[0], &load = k.values[1], &sum = k.values[2];
  if (result.kind != Value::Kind::Result || load.kind != Value::Kind::Load ||
      sum.kind != Value::Kind::Op || sum.op != OpKind::Add || sum.args.size() != 2 ||
      !((sum.args[0] == 0 && sum.args[1] == 1) || (sum.args[0] == 1 && sum.args[1] == 0)))
    return std::nullopt;
  DType t = k.opaqueDtype;
  const Load &addend = k.loads[load.ref];
  if (result.dtype != t || sum.dtype != t || addend.dtype != t || addend.index.basis != 0)
    return std::nullopt;
  std::optional<LibraryEpilogueKind> kind = addendKind(k.domain, addend.index.strides);
  if (!kind || (*kind == LibraryEpilogueKind::Bias && k.operandShapes[1].size() < 2))
    return std::nullopt;
  LibraryEpilogue e{*kind, addend, Store(), std::nullopt};
  bool sumStored = false;
  for (const Store &st : k.stores) {
    // Each written whole, row-major, from offset 0: the sum once, and the
    // product (value 0) at most once.
    if (st.dtype != t || st.index.basis != 0 || !st.zeroAxes.empty() || st.index.offset != 0 ||
        !isRowMajor(k.domain, st.index.strides))
      return std::nullopt;
    if (st.value == 2 && !sumStored) {
      e.out = st;
      sumStored = true;
    } else if (st.value == 0 && !e.product) {
      e.product = st;
    } else {
      return std::nullopt;
    }
  }
  if (!sumStored)
    return std::nullopt;
  return e;
}

LibraryEpilogue requireLibraryEpilogue(const Kernel &k) {
  std::optional<LibraryEpilogue> e = libraryEpilogueOf(k);
  if (!e)
    throw Error(ErrorKind::Internal,
                "[matmul] a cuBLAS product's epilogue is not one cuBLASLt computes");
  return *e;
}

} // namespace cumo
