#include "graph/cuda/launch_profiler.h"

#include "core/cuda/cuda_check.h"
#include "core/profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace cumo {

namespace {
// The executor (and with it its profiler) lives until the process ends and
// is never destroyed, so the table is printed from an exit handler.
const LaunchProfiler *tableAtExit = nullptr;
void printTableAtExit() {
  if (tableAtExit)
    tableAtExit->printTable();
}
} // namespace

cudaEvent_t LaunchProfiler::newEvent() {
  cudaEvent_t e = nullptr;
  cudaCheck(cudaEventCreate(&e), "cudaEventCreate");
  owned_.push_back(e);
  return e;
}

cudaEvent_t LaunchProfiler::placeholderEvent() {
  if (!placeholder_)
    placeholder_ = newEvent();
  return placeholder_;
}

LaunchProfiler::Pair LaunchProfiler::takePair() {
  if (!free_.empty()) {
    Pair p = free_.back();
    free_.pop_back();
    return p;
  }
  return Pair{newEvent(), newEvent()};
}

void LaunchProfiler::begin(cudaStream_t stream) {
  harvest();
  pending_.push_back(takePair());
  cudaCheck(cudaEventRecord(pending_.back().start, stream), "cudaEventRecord");
}

LaunchProfiler::Pair LaunchProfiler::beginInGraph() {
  harvest();
  pending_.push_back(takePair());
  return pending_.back();
}

void LaunchProfiler::end(cudaStream_t stream) {
  cudaCheck(cudaEventRecord(pending_.back().end, stream), "cudaEventRecord");
}

void LaunchProfiler::harvest() {
  while (!pending_.empty() && cudaEventQuery(pending_.front().end) == cudaSuccess) {
    Pair p = pending_.front();
    pending_.pop_front();
    float ms = 0;
    if (cudaEventElapsedTime(&ms, p.start, p.end) == cudaSuccess)
      Profile::get().deviceNs += uint64_t(double(ms) * 1e6);
    free_.push_back(p);
  }
  cudaGetLastError(); // a query that answered "not ready" is no error
}

LaunchProfiler::KernelRecord *LaunchProfiler::record(const std::string &entry,
                                                     const std::string &ops) {
  if (!tableAtExit) {
    tableAtExit = this;
    std::atexit(printTableAtExit);
  }
  KernelRecord &r = kernels_[entry];
  if (r.ops.empty())
    r.ops = ops;
  return &r;
}

void LaunchProfiler::addKernelTimes(const std::vector<cudaEvent_t> &events,
                                    const std::vector<KernelRecord *> &records) {
  if (events.empty())
    return;
  cudaCheck(cudaEventSynchronize(events.back()), "cudaEventSynchronize");
  for (size_t i = 0; i + 1 < events.size() && i < records.size(); ++i) {
    float ms = 0;
    cudaCheck(cudaEventElapsedTime(&ms, events[i], events[i + 1]),
              "cudaEventElapsedTime");
    records[i]->launches += 1;
    records[i]->totalNs += double(ms) * 1e6;
  }
}

void LaunchProfiler::printTable() const {
  std::vector<std::pair<std::string, KernelRecord>> rows(kernels_.begin(), kernels_.end());
  std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
    return a.second.totalNs > b.second.totalNs;
  });
  std::fprintf(stderr, "cumo kernel profile (CUMO_PROFILE=kernels): %zu kernels\n",
               rows.size());
  std::fprintf(stderr, "%10s %10s %10s  %-26s %s\n", "total ms", "launches", "mean us",
               "entry", "ops");
  for (const auto &[entry, r] : rows)
    std::fprintf(stderr, "%10.3f %10llu %10.2f  %-26s %s\n", r.totalNs / 1e6,
                 (unsigned long long)r.launches,
                 r.launches ? r.totalNs / 1e3 / double(r.launches) : 0.0,
                 entry.c_str(), r.ops.c_str());
}

} // namespace cumo
