#include "fusion/row_groups.h"

#include "core/node.h"
#include "fusion/schedule.h"

#include <algorithm>

namespace cumo {

bool isElementShape(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> domain) {
  return shape == domain;
}

namespace {
bool allOnes(llvm::ArrayRef<int64_t> shape) {
  return llvm::all_of(shape, [](int64_t e) { return e == 1; });
}
} // namespace

bool isRowShape(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> domain) {
  llvm::ArrayRef<int64_t> rows = domain.drop_back();
  if (shape == rows)
    return true;
  if (shape.size() == domain.size() && shape.drop_back() == rows && shape.back() == 1)
    return true;
  // One row: any shape of one element (a full reduction's 0-dim answer).
  return allOnes(rows) && allOnes(shape) && shape.size() <= domain.size();
}

AffineMap rowMemberMap(llvm::ArrayRef<int64_t> domain, llvm::ArrayRef<int64_t> shape) {
  int64_t rank = int64_t(domain.size());
  AffineMap m;
  m.outRank = rank;
  m.inRank = int64_t(shape.size());
  m.matrix.assign(size_t(m.inRank * m.outRank), 0);
  m.offset.assign(size_t(m.inRank), 0);
  // (A member of one element in a group of one row has every coordinate
  // 0: a map of zeros.)
  for (int64_t k = 0; k < rank - 1 && k < m.inRank; ++k)
    m.at(k, k) = 1;
  if (isElementShape(shape, domain))
    m.at(rank - 1, rank - 1) = 1;
  return m;
}

namespace {

/// Whether the reduction `n` folds exactly the last axis of an input that
/// has rows of at least kMinRowLength, or every axis of an input of one
/// such row (a full reduction of [1, n]: `logits.argmax` of a decode
/// step's [1, vocabulary]) no longer than kMaxOneRowLength.
bool isRowReduction(const Node *n) {
  switch (n->op()) {
  case OpKind::Sum:
  case OpKind::Prod:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Mean:
  case OpKind::QuantizeScale:
    break;
  default:
    return false;
  }
  const Node *x = n->input(0);
  llvm::ArrayRef<int64_t> axes = n->extra().axes;
  if (x->ndim() < 2 || x->size() == 0 || x->shape().back() < kMinRowLength)
    return false;
  if (axes.size() == 1 && axes[0] == x->ndim() - 1)
    return true;
  return int64_t(axes.size()) == x->ndim() && allOnes(x->shape().drop_back()) &&
         x->shape().back() <= kMaxOneRowLength;
}

/// Whether reading `x` through `toX` (a map from the reader's coordinates,
/// of `reader` shape, to x's) keeps every row of `domain` in its row: the
/// reader's element (row r, position j) reads x's element (r, j), or x's
/// value of row r for a row-shaped x. Axes of extent one are skipped: their
/// coordinate is 0 whatever the map says.
bool keepsRows(const AffineMap &toX, llvm::ArrayRef<int64_t> reader, llvm::ArrayRef<int64_t> x,
               llvm::ArrayRef<int64_t> domain) {
  AffineMap got = toX.compose(rowMemberMap(domain, reader));
  AffineMap want = rowMemberMap(domain, x);
  for (int64_t k = 0; k < got.inRank; ++k) {
    if (x[k] == 1)
      continue;
    if (got.offset[k] != want.offset[k])
      return false;
    for (int64_t d = 0; d < got.outRank; ++d)
      if (domain[d] != 1 && got.at(k, d) != want.at(k, d))
        return false;
  }
  return true;
}

} // namespace

std::optional<AffineMap> unitAxisReshapeMap(const Node *r) {
  llvm::ArrayRef<int64_t> out = r->shape(), in = r->input(0)->shape();
  AffineMap m;
  m.outRank = int64_t(out.size());
  m.inRank = int64_t(in.size());
  m.matrix.assign(size_t(m.inRank * m.outRank), 0);
  m.offset.assign(size_t(m.inRank), 0);
  if (out.size() == in.size() + 1 && out.drop_back() == in && out.back() == 1) {
    for (int64_t k = 0; k < m.inRank; ++k)
      m.at(k, k) = 1;
    return m;
  }
  if (in.size() == out.size() + 1 && in.drop_back() == out && in.back() == 1) {
    for (int64_t k = 0; k < m.outRank; ++k)
      m.at(k, k) = 1;
    return m;
  }
  return std::nullopt;
}

namespace {

class Finder {
public:
  explicit Finder(const Schedule &s) : s_(s), member_(s.nodes.size(), -1),
                                       deps_(s.nodes.size()) {}

  llvm::SmallVector<RowGroup, 2> run() {
    for (uint32_t i = 0; i < s_.nodes.size(); ++i)
      visit(i);
    llvm::SmallVector<RowGroup, 2> out;
    llvm::SmallVector<int, 4> slot(groups_.size(), -1);
    for (uint32_t i = 0; i < s_.nodes.size(); ++i) {
      if (member_[i] < 0)
        continue;
      int g = find(member_[i]);
      if (!groups_[g].hasElement)
        continue;
      if (slot[g] < 0) {
        slot[g] = int(out.size());
        out.push_back(RowGroup{groups_[g].domain, {}, {}});
      }
      RowGroup &rg = out[slot[g]];
      rg.members.push_back(i);
      if (isReduction(s_.nodes[i]->op()))
        rg.reductions.push_back(i);
    }
    return out;
  }

private:
  struct Group {
    Shape domain;
    int parent;
    bool hasElement = false;
    /// Groups that some input from outside depends on.
    llvm::SmallVector<int, 2> deps;
  };

  int find(int g) {
    while (groups_[g].parent != g) {
      groups_[g].parent = groups_[groups_[g].parent].parent;
      g = groups_[g].parent;
    }
    return g;
  }

  /// Whether group `a` depends on group `b` through inputs from outside.
  bool dependsOn(int a, int b) {
    llvm::SmallVector<int, 8> stack{find(a)}, seen;
    b = find(b);
    while (!stack.empty()) {
      int g = stack.pop_back_val();
      if (llvm::is_contained(seen, g))
        continue;
      seen.push_back(g);
      for (int d : groups_[g].deps) {
        int r = find(d);
        if (r == b)
          return true;
        stack.push_back(r);
      }
    }
    return false;
  }

  /// The groups the value of node `x` depends on (its own if a member).
  llvm::SmallVector<int, 2> depsOf(const Node *x) {
    auto it = s_.index.find(x);
    if (it == s_.index.end())
      return {};
    if (member_[it->second] >= 0)
      return {find(member_[it->second])};
    llvm::SmallVector<int, 2> out;
    for (int d : deps_[it->second])
      if (!llvm::is_contained(out, find(d)))
        out.push_back(find(d));
    return out;
  }

  int memberGroup(const Node *x) {
    auto it = s_.index.find(x);
    if (it == s_.index.end() || member_[it->second] < 0)
      return -1;
    return find(member_[it->second]);
  }

  void addDeps(llvm::SmallVectorImpl<int> &to, llvm::ArrayRef<int> from) {
    for (int d : from)
      if (!llvm::is_contained(to, d))
        to.push_back(d);
  }

  void visit(uint32_t i) {
    const Node *n = s_.nodes[i].get();
    if (isReduction(n->op()) && isRowReduction(n) && joinAsReduction(i))
      return;
    if (tryJoin(i))
      return;
    // Not a member: it depends on whatever its inputs depend on.
    for (const NodeRef &in : n->inputs())
      addDeps(deps_[i], depsOf(in.get()));
  }

  bool joinAsReduction(uint32_t i) {
    const Node *x = s_.nodes[i]->input(0);
    int g = memberGroup(x);
    if (g >= 0 && isElementShape(x->shape(), groups_[g].domain)) {
      member_[i] = g;
      return true;
    }
    Group fresh;
    fresh.domain = toShape(x->shape());
    fresh.parent = int(groups_.size());
    fresh.deps = depsOf(x);
    member_[i] = fresh.parent;
    groups_.push_back(std::move(fresh));
    return true;
  }

  /// The map through which `n` reads its input `k`, when it is one that
  /// can keep rows (elementwise broadcasts, views, unit-axis reshapes).
  std::optional<AffineMap> readMap(const Node *n, size_t k) {
    const Node *x = n->input(k);
    switch (opCategory(n->op())) {
    case OpCategory::Unary:
    case OpCategory::Binary:
    case OpCategory::Compare:
      return AffineMap::broadcast(x->shape(), n->shape());
    case OpCategory::View:
      if (n->extra().flatView)
        return std::nullopt;
      return n->extra().view;
    case OpCategory::Reshape:
      return unitAxisReshapeMap(n);
    default:
      return std::nullopt;
    }
  }

  bool tryJoin(uint32_t i) {
    const Node *n = s_.nodes[i].get();
    OpCategory c = opCategory(n->op());
    if (c != OpCategory::Unary && c != OpCategory::Binary && c != OpCategory::Compare &&
        c != OpCategory::View && c != OpCategory::Reshape)
      return false;
    // The groups it reads members of; they must share a domain and be
    // independent of each other to become one.
    llvm::SmallVector<int, 2> read;
    for (const NodeRef &in : n->inputs())
      if (int g = memberGroup(in.get()); g >= 0 && !llvm::is_contained(read, g))
        read.push_back(g);
    if (read.empty())
      return false;
    const Shape &domain = groups_[read[0]].domain;
    for (size_t a = 0; a < read.size(); ++a) {
      if (groups_[read[a]].domain != domain)
        return false;
      for (size_t b = 0; b < read.size(); ++b)
        if (a != b && dependsOn(read[a], read[b]))
          return false;
    }
    bool element = isElementShape(n->shape(), domain);
    if (!element && !isRowShape(n->shape(), domain))
      return false;
    llvm::SmallVector<int, 2> external;
    for (size_t k = 0; k < n->inputs().size(); ++k) {
      const Node *x = n->input(k);
      if (memberGroup(x) >= 0) {
        auto map = readMap(n, k);
        if (!map || !keepsRows(*map, n->shape(), x->shape(), domain))
          return false;
        continue;
      }
      // From outside: it must not need the group's results.
      for (int d : depsOf(x))
        for (int g : read)
          if (d == g || dependsOn(d, g))
            return false;
      addDeps(external, depsOf(x));
    }
    int g = read[0];
    for (size_t a = 1; a < read.size(); ++a) {
      int h = read[a];
      groups_[h].parent = g;
      groups_[g].hasElement |= groups_[h].hasElement;
      addDeps(groups_[g].deps, groups_[h].deps);
    }
    addDeps(groups_[g].deps, external);
    groups_[g].hasElement |= element && c != OpCategory::View && c != OpCategory::Reshape;
    member_[i] = g;
    return true;
  }

  const Schedule &s_;
  llvm::SmallVector<Group, 4> groups_;
  /// Per node: its group (not yet resolved by find), or -1.
  llvm::SmallVector<int, 16> member_;
  /// Per node that is no member: the groups its value depends on.
  llvm::SmallVector<llvm::SmallVector<int, 1>, 16> deps_;
};

} // namespace

llvm::SmallVector<RowGroup, 2> findRowGroups(const Schedule &s) { return Finder(s).run(); }

} // namespace cumo
