// When a minor GC before a flush is worth its time (Engine::collectBefore).
// A GC frees the wrappers of temporaries Ruby dropped, so the plan skips
// their optional outputs: the device is spared those writes, the host pays
// the GC. Ruby's minor GC sweeps the whole heap, so its cost is the
// program's, not ours: 30-50 us at the CG bench's 30,000 live slots, 3 ms
// at a million (development machine). The rule: collect once the optional
// bytes since the last GC would take the device longer to write than a
// GC takes the host.
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
  void setStoreBytesPerNs(double v) { storeBytesPerNs_ = v; }

  /// A GC took `ns`: the average moves a quarter of the way, so one slow
  /// GC (a page fault, a burst of garbage) does not set the rule alone.
  void noteGc(uint64_t ns) { averageNs_ = averageNs_ == 0 ? ns : (3 * averageNs_ + ns) / 4; }

  /// The optional bytes after which the next GC pays: `floorBytes`
  /// (CUMO_GC_MIN_BYTES), or what the device writes in a GC's time, if more.
  size_t thresholdBytes(size_t floorBytes) const {
    double worth = double(averageNs_) * storeBytesPerNs_;
    return std::max(floorBytes, size_t(std::min(worth, 1e18)));
  }

  uint64_t averageNs() const { return averageNs_; }

private:
  uint64_t averageNs_ = 0;
  double storeBytesPerNs_ = kStoreBytesPerNs;
};

} // namespace cumo
