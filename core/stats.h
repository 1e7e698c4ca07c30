// Counters that Cumo.stats reports. Plain integers: the engine runs under
// one lock.
#pragma once

#include <cstdint>

namespace cumo {

#define CUMO_STATS(X)                                                          \
  X(kernels_launched)                                                          \
  X(graphs_built)                                                              \
  X(graph_instantiations)                                                      \
  X(graph_updates)                                                             \
  X(graph_replays)                                                             \
  X(graph_cache_hits)                                                          \
  X(graph_cache_misses)                                                        \
  X(graph_fallbacks)                                                           \
  X(early_starts)                                                              \
  X(nvrtc_compiles)                                                            \
  X(disk_cache_hits)                                                           \
  X(host_syncs)                                                                \
  X(bytes_allocated)                                                           \
  X(plans_run)                                                                 \
  X(nodes_recorded)                                                            \
  X(budget_flushes)                                                            \
  X(plan_cache_hits)                                                           \
  X(plan_cache_misses)                                                         \
  X(stored_bytes)                                                              \
  X(gcs_before_flush)                                                          \
  X(gc_before_flush_ns)                                                        \
  X(gc_bare_samples)                                                           \
  X(gc_bare_ns)                                                                \
  X(matmul_copies)                                                             \
  X(library_captures)                                                          \
  X(library_epilogues)                                                         \
  X(library_epilogue_adds)

struct Stats {
#define CUMO_STAT_FIELD(name) uint64_t name = 0;
  CUMO_STATS(CUMO_STAT_FIELD)
#undef CUMO_STAT_FIELD

  static Stats &get();
  void reset() { *this = Stats(); }
};

} // namespace cumo
