#include "core/profile.h"

#include "core/env_flag.h"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <cstring>

namespace cumo {

bool Profile::kernels() {
  static const bool on = [] {
    const char *v = std::getenv("CUMO_PROFILE");
    return v && std::strcmp(v, "kernels") == 0;
  }();
  return on;
}

bool Profile::cpuClock() {
  static const bool on = [] {
    const char *v = std::getenv("CUMO_PROFILE");
    return v && std::strcmp(v, "cpu") == 0;
  }();
  return on;
}

bool Profile::enabled() {
  static const bool on = kernels() || cpuClock() || envFlag("CUMO_PROFILE", false);
  return on;
}

uint64_t Profile::now() {
  if (cpuClock()) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
  }
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

Profile &Profile::get() {
  static Profile profile;
  return profile;
}

} // namespace cumo
