#include "core/profile.h"

#include "core/env_flag.h"

#include <cstdlib>
#include <cstring>

namespace cumo {

bool Profile::kernels() {
  static const bool on = [] {
    const char *v = std::getenv("CUMO_PROFILE");
    return v && std::strcmp(v, "kernels") == 0;
  }();
  return on;
}

bool Profile::enabled() {
  static const bool on = kernels() || envFlag("CUMO_PROFILE", false);
  return on;
}

Profile &Profile::get() {
  static Profile profile;
  return profile;
}

} // namespace cumo
