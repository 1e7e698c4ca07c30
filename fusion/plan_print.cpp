#include "fusion/plan_print.h"

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
    llvm::SmallVector<uint32_t, 8> reads, writes;
    for (const Load &l : k.loads)
      if (!llvm::is_contained(reads, l.buffer))
        reads.push_back(l.buffer);
    for (const Store &st : k.stores)
      if (!llvm::is_contained(writes, st.buffer))
        writes.push_back(st.buffer);
    for (const Reduce &r : k.reduces)
      if (!llvm::is_contained(writes, r.buffer))
        writes.push_back(r.buffer);
    for (uint32_t b : reads)
      s.inputs.push_back(describeBuffer(plan, b));
    for (uint32_t b : writes)
      s.outputs.push_back(describeBuffer(plan, b));
    out.push_back(std::move(s));
  }
  return out;
}

std::string planToText(const Plan &plan) {
  std::vector<KernelSummary> ks = summarize(plan);
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
  }
  return out;
}

std::string planToDot(const Plan &plan) {
  // Nodes as boxes, each kernel's nodes as a cluster; edges follow inputs.
  llvm::DenseMap<const Node *, size_t> id;
  for (size_t i = 0; i < plan.nodes.size(); ++i)
    id[plan.nodes[i].get()] = i;
  llvm::DenseMap<const Node *, size_t> external;
  std::string out = "digraph plan {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  auto label = [](const Node *n) {
    return std::string(opName(n->op())) + "\\n" + std::string(nameOf(n->dtype())) +
           shapeToString(n->shape());
  };
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const Kernel &kern = plan.kernels[k];
    out += "  subgraph cluster_" + std::to_string(k) + " {\n    label=\"kernel " +
           std::to_string(k) + ": " + kindOf(kern) + "\";\n";
    for (const Node *n : kern.nodes)
      if (id.count(n))
        out += "    n" + std::to_string(id[n]) + ";\n";
    out += "  }\n";
  }
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const Node *n = plan.nodes[i].get();
    out += "  n" + std::to_string(i) + " [label=\"" + label(n) + "\"];\n";
    for (const NodeRef &in : n->inputs()) {
      std::string from;
      auto it = id.find(in.get());
      if (it != id.end()) {
        from = "n" + std::to_string(it->second);
      } else {
        auto [e, fresh] = external.try_emplace(in.get(), external.size());
        from = "x" + std::to_string(e->second);
        if (fresh)
          out += "  " + from + " [shape=ellipse, label=\"buffer\\n" +
                 std::string(nameOf(in->dtype())) + shapeToString(in->shape()) +
                 "\"];\n";
      }
      out += "  " + from + " -> n" + std::to_string(i) + ";\n";
    }
  }
  out += "}\n";
  return out;
}

} // namespace cumo
