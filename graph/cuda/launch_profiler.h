// CUMO_PROFILE's device side. Each plan replay is bracketed by two CUDA
// events, recorded by the graph itself (event nodes before and after its
// work) or, for plans run kernel by kernel and with CUMO_PROFILE=kernels,
// on the stream. A stream's event before a replay on an idle stream (after
// a read) is recorded at once, and the time the host then takes to submit
// the graph counted as the device's: 5-9 us a replay on an H100's host
// (bench/probes/launch_overhead.cu, 2026-12-05). Their elapsed time is
// added to Profile::deviceNs once they complete, so a benchmark can set the device
// time per iteration against the host time. With CUMO_PROFILE=kernels the
// graphs also carry an event node between consecutive kernels; after each
// replay the profiler waits for it and adds each kernel's time to a table
// printed to stderr at exit (entry name, ops, launches, mean time).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace cumo {

class LaunchProfiler {
public:
  struct KernelRecord {
    std::string ops;
    uint64_t launches = 0;
    double totalNs = 0;
  };

  /// Brackets one launch on `stream`: begin before it, end after.
  void begin(cudaStream_t stream);
  void end(cudaStream_t stream);
  /// The pair for a graph that records its own first and last events
  /// (event nodes around its work): taken as begin takes one, recorded by
  /// the graph's replay rather than by the stream.
  struct Pair {
    cudaEvent_t start = nullptr, end = nullptr;
  };
  Pair beginInGraph();
  /// Adds the launches that have completed (all after a synchronize).
  void harvest();

  /// Kernel mode: the record of kernel `entry` (created on first use).
  KernelRecord *record(const std::string &entry, const std::string &ops);
  /// Waits for `events.back()` and adds the time between consecutive
  /// events to each kernel's record (records[i]: events i to i + 1).
  void addKernelTimes(const std::vector<cudaEvent_t> &events,
                      const std::vector<KernelRecord *> &records);
  /// A timing event (for a graph's event nodes), owned by the profiler.
  cudaEvent_t newEvent();
  /// The event a graph's bracketing nodes are built with, before each
  /// replay sets its own pair; never read.
  cudaEvent_t placeholderEvent();
  /// The kernel table, to stderr (at exit, once a kernel was recorded).
  void printTable() const;

private:
  Pair takePair();

  std::deque<Pair> pending_;
  std::vector<Pair> free_;
  std::vector<cudaEvent_t> owned_;
  cudaEvent_t placeholder_ = nullptr;
  std::map<std::string, KernelRecord> kernels_;
};

} // namespace cumo
