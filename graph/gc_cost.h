// When a minor GC before a flush is worth its time (Engine::collectBefore).
// A GC frees the wrappers of temporaries Ruby dropped, so the plan skips
// their optional outputs: the device is spared those writes, the host pays
// the GC. The rule: collect once the optional bytes since the last GC
// would take the device longer to write than a GC takes the host.
//
// What a GC takes has two parts. Ruby's minor GC marks its roots and sweeps
// the whole heap whatever the garbage, so that part is the program's, not
// ours: 30-70 us at the CG bench's 20,000 live slots, 3 ms at a million
// (development machine). Freeing the dead wrappers (and our release of
// their handles) grows with the garbage, and that work is paid by whichever
// GC comes, ours or Ruby's own: skipping a GC does not save it. So the
// rule weighs the fixed part alone. Weighing the whole time made the rule
// bistable: a GC after two flushes frees twice the garbage, takes twice as
// long, which doubled the threshold, so the next GC came after two flushes
// again and every other flush stored its optional outputs (CG 512x512, CPU
// executor with kernels skipped: 6.9 MB stored and 22 us an iteration
// against 0.15 MB and 14.7 with a GC before every flush, the same build
// from run to run). The fixed part is measured by a second GC right after
// one, which has nothing to free: at the first GC and every kBareEvery-th.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cumo {

class GcCostModel {
public:
  /// The device's store bandwidth the rule assumes, in bytes a nanosecond:
  /// 2 TB/s, under the 3-4 TB/s of an H100's or H200's copies.
  /// CUMO_GC_STORE_BYTES_PER_NS sets another; 0 leaves the floor alone.
  static constexpr double kStoreBytesPerNs = 2000;
  /// GCs between two samples of the bare cost (the heap changes slowly).
  static constexpr uint64_t kBareEvery = 32;
  void setStoreBytesPerNs(double v) { storeBytesPerNs_ = v; }

  /// A GC before a flush took `ns`, freeing whatever garbage had built up.
  void noteGc(uint64_t ns) {
    averageNs_ = moveTowards(averageNs_, ns);
    ++gcs_;
  }
  /// Whether the GC just noted should be followed by a bare one.
  bool wantsBareGc() const { return gcs_ % kBareEvery == 1; }
  /// A GC with nothing to free (right after another) took `ns`. The
  /// average moves a quarter of the way, so one slow GC (a page fault)
  /// does not set the rule alone.
  void noteBareGc(uint64_t ns) { bareNs_ = moveTowards(bareNs_, ns); }

  /// The optional bytes after which the next GC pays: `floorBytes`
  /// (CUMO_GC_MIN_BYTES), or what the device writes in a bare GC's time,
  /// if more (the whole GC's time until a bare one was measured).
  size_t thresholdBytes(size_t floorBytes) const {
    double worth = double(fixedNs()) * storeBytesPerNs_;
    return std::max(floorBytes, size_t(std::min(worth, 1e18)));
  }

  uint64_t averageNs() const { return averageNs_; }
  /// What a GC costs whatever it frees: the bare GCs' average, or the
  /// GCs' average before the first bare one (never more than it).
  uint64_t fixedNs() const { return bareNs_ ? std::min(bareNs_, averageNs_) : averageNs_; }

private:
  static uint64_t moveTowards(uint64_t average, uint64_t ns) {
    return average == 0 ? ns : (3 * average + ns) / 4;
  }
  uint64_t averageNs_ = 0;
  uint64_t bareNs_ = 0;
  uint64_t gcs_ = 0;
  double storeBytesPerNs_ = kStoreBytesPerNs;
};

} // namespace cumo
