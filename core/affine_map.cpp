#include "core/affine_map.h"

#include "llvm/ADT/Hashing.h"

namespace cumo {

AffineMap AffineMap::identity(int64_t rank) {
  AffineMap m;
  m.inRank = m.outRank = rank;
  m.matrix.assign(rank * rank, 0);
  m.offset.assign(rank, 0);
  for (int64_t i = 0; i < rank; ++i)
    m.at(i, i) = 1;
  return m;
}

AffineMap AffineMap::broadcast(llvm::ArrayRef<int64_t> inShape,
                               llvm::ArrayRef<int64_t> outShape) {
  AffineMap m;
  m.inRank = inShape.size();
  m.outRank = outShape.size();
  m.matrix.assign(m.inRank * m.outRank, 0);
  m.offset.assign(m.inRank, 0);
  int64_t lead = m.outRank - m.inRank;
  // An axis the input shares with the output moves with it; one of length
  // one against a longer axis stays at 0.
  for (int64_t k = 0; k < m.inRank; ++k)
    m.at(k, lead + k) = inShape[k] == outShape[lead + k] ? 1 : 0;
  return m;
}

bool AffineMap::isIdentity() const {
  if (inRank != outRank)
    return false;
  for (int64_t k = 0; k < inRank; ++k) {
    if (offset[k] != 0)
      return false;
    for (int64_t d = 0; d < outRank; ++d)
      if (at(k, d) != (k == d ? 1 : 0))
        return false;
  }
  return true;
}

AffineMap AffineMap::compose(const AffineMap &inner) const {
  AffineMap r;
  r.inRank = inRank;
  r.outRank = inner.outRank;
  r.matrix.assign(r.inRank * r.outRank, 0);
  r.offset.assign(r.inRank, 0);
  for (int64_t k = 0; k < inRank; ++k) {
    int64_t off = offset[k];
    for (int64_t j = 0; j < outRank; ++j)
      off += at(k, j) * inner.offset[j];
    r.offset[k] = off;
    for (int64_t d = 0; d < r.outRank; ++d) {
      int64_t v = 0;
      for (int64_t j = 0; j < outRank; ++j)
        v += at(k, j) * inner.at(j, d);
      r.at(k, d) = v;
    }
  }
  return r;
}

void AffineMap::applyToLayout(llvm::ArrayRef<int64_t> strides, int64_t offset_,
                              llvm::SmallVectorImpl<int64_t> &outStrides,
                              int64_t &outOffset) const {
  outOffset = offset_;
  for (int64_t k = 0; k < inRank; ++k)
    outOffset += strides[k] * offset[k];
  outStrides.assign(outRank, 0);
  for (int64_t d = 0; d < outRank; ++d)
    for (int64_t k = 0; k < inRank; ++k)
      outStrides[d] += strides[k] * at(k, d);
}

uint64_t AffineMap::hash() const {
  return llvm::hash_combine(
      inRank, outRank, llvm::hash_combine_range(matrix.begin(), matrix.end()),
      llvm::hash_combine_range(offset.begin(), offset.end()));
}

} // namespace cumo
