// Host-time accounting for the engine's phases, on when CUMO_PROFILE is
// set: how long flushes spend planning, how long executors spend
// launching, how long reads wait for the device. Issue 6 asks for the host
// time per iteration against the device time; the rest of a loop's time is
// recording. Off, a phase costs one predictable branch.
#pragma once

#include <cstdint>

namespace cumo {

struct Profile {
  uint64_t planNs = 0;    ///< flushes: collect, key, plan lookup, bind
  uint64_t executeNs = 0; ///< executors: pack, upload, launch (or run, on CPU)
  uint64_t waitNs = 0;    ///< reads and syncs waiting for the device
  /// Device time of the plans launched (CUDA events around each graph
  /// replay), harvested as they complete; complete after Cumo.sync.
  uint64_t deviceNs = 0;
  /// CUMO_PROFILE=1 (or any flag's yes), CUMO_PROFILE=kernels or
  /// CUMO_PROFILE=cpu.
  static bool enabled();
  /// CUMO_PROFILE=cpu: the host phases count the thread's CPU time instead
  /// of wall time, so that on a machine shared with other work, time the
  /// process spent descheduled counts nowhere (waits then count ~0).
  static bool cpuClock();
  /// Now, in ns, on the clock the phases use.
  static uint64_t now();
  /// CUMO_PROFILE=kernels: also time every kernel (event nodes between
  /// the graph's kernels, a wait after each replay) and print the table at
  /// exit. Slower: for finding the kernel that takes the time.
  static bool kernels();
  static Profile &get();
};

/// Adds the time from construction to destruction to one phase.
class ProfileScope {
public:
  explicit ProfileScope(uint64_t Profile::*phase)
      : phase_(Profile::enabled() ? phase : nullptr) {
    if (phase_)
      start_ = Profile::now();
  }
  ~ProfileScope() {
    if (phase_)
      Profile::get().*phase_ += Profile::now() - start_;
  }
  ProfileScope(const ProfileScope &) = delete;
  ProfileScope &operator=(const ProfileScope &) = delete;

private:
  uint64_t Profile::*phase_;
  uint64_t start_ = 0;
};

} // namespace cumo
