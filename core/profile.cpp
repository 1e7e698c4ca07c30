#include "core/profile.h"

#include "core/env_flag.h"

namespace cumo {

bool Profile::enabled() {
  static const bool on = envFlag("CUMO_PROFILE", false);
  return on;
}

Profile &Profile::get() {
  static Profile profile;
  return profile;
}

} // namespace cumo
