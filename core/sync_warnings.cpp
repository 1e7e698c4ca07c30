#include "core/sync_warnings.h"

#include "core/env_flag.h"
#include "core/host_hooks.h"

#include <cstdio>

namespace cumo {

SyncWarnings &SyncWarnings::get() {
  static SyncWarnings warnings;
  return warnings;
}

void SyncWarnings::readEnvironment() {
  if (read_)
    return;
  read_ = true;
  enabled_ = envFlag("CUMO_SHOW_WARNING", false);
  once_ = envFlag("CUMO_SHOW_WARNING_ONCE", true);
}

bool SyncWarnings::enabled() {
  readEnvironment();
  return enabled_;
}

bool SyncWarnings::once() {
  readEnvironment();
  return once_;
}

void SyncWarnings::configure(std::optional<bool> enabled, std::optional<bool> once) {
  readEnvironment();
  if (enabled)
    enabled_ = *enabled;
  if (once)
    once_ = *once;
}

std::string SyncWarnings::message(const std::string &location) {
  return "[Cumo] host sync at " + location +
         ": the host waits for the device (CUMO_SHOW_WARNING)";
}

void SyncWarnings::note() {
  if (!enabled())
    return;
  const HostHooks &hooks = HostHooks::get();
  std::string where =
      hooks.sourceLocation ? hooks.sourceLocation() : std::string("(unknown)");
  if (once() && !seen_.insert(where).second)
    return;
  std::string msg = message(where);
  if (hooks.warn)
    hooks.warn(msg);
  else
    std::fprintf(stderr, "warning: %s\n", msg.c_str());
}

} // namespace cumo
