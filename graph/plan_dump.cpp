#include "graph/plan_dump.h"

#include "core/host_hooks.h"
#include "fusion/cuda_codegen.h"
#include "fusion/plan_print.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>

namespace cumo {

namespace {

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return bool(out);
}

} // namespace

PlanDumper::PlanDumper() {
  if (const char *d = std::getenv("CUMO_DUMP_GRAPH"))
    dir_ = d;
}

void PlanDumper::dump(Plan &plan, llvm::ArrayRef<NodeRef> dag,
                      llvm::function_ref<bool(size_t)> stored, const DeviceModel &model) {
  if (!active())
    return;
  ::mkdir(dir_.c_str(), 0755); // may exist already
  char stem[32];
  std::snprintf(stem, sizeof(stem), "/plan-%04u", count_++);
  std::string base = dir_ + stem;
  bool ok = writeFile(base + ".txt", planToText(plan)) &&
            writeFile(base + "-dag.dot", dagToDot(dag, stored)) &&
            writeFile(base + ".dot", planToDot(plan));
  for (size_t k = 0; ok && k < plan.kernels.size(); ++k) {
    std::string source;
    try {
      source = generateCuda(plan.kernels[k], model).source;
    } catch (const std::exception &e) {
      source = std::string("// no CUDA source: ") + e.what() + "\n";
    }
    ok = writeFile(base + "-k" + std::to_string(k) + ".cu", source);
  }
  if (!ok) {
    if (HostHooks::get().warn)
      HostHooks::get().warn("Cumo: CUMO_DUMP_GRAPH: cannot write to " + dir_ +
                            "; dumping stops");
    dir_.clear();
    return;
  }
  // The CUDA executor prints its graph here when it builds one.
  plan.dumpStem = base;
  // An SVG beside each .dot when graphviz is installed; quietly none when not.
  for (const char *suffix : {"-dag", ""}) {
    std::string stemOf = base + suffix;
    std::string cmd = "command -v dot >/dev/null 2>&1 && dot -Tsvg '" + stemOf +
                      ".dot' -o '" + stemOf + ".svg' 2>/dev/null";
    if (std::system(cmd.c_str()) != 0) {
      // no graphviz: the .dot is there
    }
  }
}

} // namespace cumo
