#include "fusion/plan_print.h"

#include "fusion/cuda_codegen.h"
#include "fusion/kernel_order.h"

#include "ops/opaque.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

namespace cumo {

namespace {

std::string describeBuffer(const Plan &plan, uint32_t b) {
  const PlanBuffer &pb = plan.buffers[b];
  std::string role = pb.role == PlanBuffer::Role::Input    ? "in"
                     : pb.role == PlanBuffer::Role::Output ? "out"
                                                           : "tmp";
  const Node *n = pb.node.get();
  return "%" + std::to_string(b) + " " + std::string(nameOf(pb.dtype)) +
         shapeToString(n ? n->shape() : llvm::ArrayRef<int64_t>()) + " (" +
         role + ")";
}

std::string kindOf(const Kernel &k) {
  switch (k.kind) {
  case Kernel::Kind::Elementwise:
    return k.reduces.empty() ? "elementwise" : "reduction";
  case Kernel::Kind::AxisReduce:
    return "reduction";
  case Kernel::Kind::Scatter:
    return "copy";
  case Kernel::Kind::Opaque:
    return std::string(opaqueKindName(k.opaqueOp));
  case Kernel::Kind::Rowwise:
    return "rowwise";
  }
  return "elementwise";
}

} // namespace

std::vector<std::string> kernelOpNames(const Kernel &k) {
  // A cached template keeps only the kinds.
  llvm::SmallVector<OpKind, 8> kinds(k.ops.begin(), k.ops.end());
  if (!k.nodes.empty()) {
    kinds.clear();
    for (const Node *n : k.nodes)
      kinds.push_back(n->op());
  }
  std::vector<std::string> names;
  for (OpKind op : kinds)
    if (opCategory(op) != OpCategory::View && op != OpKind::Fill)
      names.push_back(std::string(opName(op)));
  return names;
}

std::vector<KernelSummary> summarize(const Plan &plan) {
  std::vector<KernelSummary> out;
  for (const Kernel &k : plan.kernels) {
    KernelSummary s;
    s.kind = kindOf(k);
    s.why = k.why;
    s.ops = kernelOpNames(k);
    KernelAccess access = kernelAccess(k);
    for (uint32_t b : access.reads)
      s.inputs.push_back(describeBuffer(plan, b));
    for (uint32_t b : access.writes)
      s.outputs.push_back(describeBuffer(plan, b));
    out.push_back(std::move(s));
  }
  return out;
}

std::string planToText(const Plan &plan) {
  std::vector<KernelSummary> ks = summarize(plan);
  // What each kernel waits for on a GPU (fusion/kernel_order.h), cuBLAS's
  // products one after another.
  std::vector<uint32_t> all(plan.kernels.size());
  for (uint32_t i = 0; i < all.size(); ++i)
    all[i] = i;
  auto waits =
      kernelWaits(plan, all, [&](uint32_t i) { return runsInLibrary(plan.kernels[i]); });
  std::string out = "Cumo::Plan: " + std::to_string(ks.size()) +
                    (ks.size() == 1 ? " kernel" : " kernels") + "\n";
  for (size_t i = 0; i < ks.size(); ++i) {
    const KernelSummary &s = ks[i];
    out += "  [" + std::to_string(i) + "] " + s.kind + " (";
    for (size_t j = 0; j < s.ops.size(); ++j)
      out += (j ? ", " : "") + s.ops[j];
    out += ")\n";
    for (const std::string &in : s.inputs)
      out += "      reads  " + in + "\n";
    for (const std::string &o : s.outputs)
      out += "      writes " + o + "\n";
    if (!s.why.empty())
      out += "      why: " + s.why + "\n";
    if (i > 0 && waits[i].empty())
      out += "      after: none (shares no buffer with the kernels before it)\n";
    else if (i > 0 && !(waits[i].size() == 1 && waits[i][0] == i - 1)) {
      out += "      after:";
      for (uint32_t j : waits[i])
        out += " [" + std::to_string(j) + "]";
      out += "\n";
    }
  }
  return out;
}

namespace {

std::string nodeLabel(const Node *n) {
  return std::string(opName(n->op())) + "\\n" + std::string(nameOf(n->dtype())) +
         shapeToString(n->shape());
}

/// Emits `n`'s box as `name` into `boxes` and its input edges into
/// `edges`. `sourceOf` names the box an input comes from, or "" for an
/// input outside the picture (a materialized buffer), which becomes an
/// ellipse numbered through `external`.
void emitNode(std::string &boxes, std::string &edges, const std::string &indent,
              const std::string &name, const Node *n, bool stored,
              llvm::function_ref<std::string(const Node *)> sourceOf,
              llvm::DenseMap<const Node *, size_t> &external) {
  boxes += indent + name + " [label=\"" + nodeLabel(n) + "\"" +
           (stored ? ", style=bold" : "") + "];\n";
  for (const NodeRef &in : n->inputs()) {
    std::string from = sourceOf(in.get());
    if (from.empty()) {
      auto [e, fresh] = external.try_emplace(in.get(), external.size());
      from = "x" + std::to_string(e->second);
      if (fresh)
        edges += "  " + from + " [shape=ellipse, label=\"buffer\\n" +
                 std::string(nameOf(in->dtype())) + shapeToString(in->shape()) + "\"];\n";
    }
    edges += "  " + from + " -> " + name + ";\n";
  }
}

const char *kDotHeader =
    "  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";

} // namespace

std::string dagToDot(llvm::ArrayRef<NodeRef> nodes,
                     llvm::function_ref<bool(size_t)> stored) {
  llvm::DenseMap<const Node *, size_t> id, external;
  for (size_t i = 0; i < nodes.size(); ++i)
    id[nodes[i].get()] = i;
  auto sourceOf = [&](const Node *in) {
    auto it = id.find(in);
    return it == id.end() ? std::string() : "n" + std::to_string(it->second);
  };
  std::string boxes, edges;
  for (size_t i = 0; i < nodes.size(); ++i)
    emitNode(boxes, edges, "  ", "n" + std::to_string(i), nodes[i].get(), stored(i), sourceOf,
             external);
  return std::string("digraph dag {\n") + kDotHeader + boxes + edges + "}\n";
}

std::string planToDot(const Plan &plan) {
  // Each kernel a cluster of the nodes it computes. A node recomputed by
  // several kernels (an inlined prologue) is drawn in each; an input from
  // another kernel comes from the first kernel that computed it.
  llvm::DenseMap<const Node *, size_t> id, home, external;
  for (size_t i = 0; i < plan.nodes.size(); ++i)
    id[plan.nodes[i].get()] = i;
  llvm::DenseMap<const Node *, bool> stored;
  for (const NodeRef &n : plan.storedNodes)
    stored[n.get()] = true;
  auto boxName = [&](size_t k, const Node *n) {
    return "k" + std::to_string(k) + "n" + std::to_string(id.lookup(n));
  };
  std::string boxes, edges;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const Kernel &kern = plan.kernels[k];
    auto sourceOf = [&](const Node *in) {
      if (!id.count(in))
        return std::string();
      if (llvm::is_contained(kern.nodes, in))
        return boxName(k, in);
      auto it = home.find(in);
      return it == home.end() ? std::string() : boxName(it->second, in);
    };
    boxes += "  subgraph cluster_" + std::to_string(k) + " {\n    label=\"kernel " +
             std::to_string(k) + ": " + kindOf(kern) + "\";\n";
    for (const Node *n : kern.nodes)
      if (id.count(n))
        emitNode(boxes, edges, "    ", boxName(k, n), n, stored.count(n) != 0, sourceOf,
                 external);
    boxes += "  }\n";
    for (const Node *n : kern.nodes)
      home.try_emplace(n, k);
  }
  return std::string("digraph plan {\n") + kDotHeader + boxes + edges + "}\n";
}

} // namespace cumo
