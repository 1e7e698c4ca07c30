// CUMO_SHOW_WARNING: a warning for each host sync (a read that waits for
// the device: to_a, Float(), inspect, each, ==, Cumo.sync ...), naming the
// host line that caused it; with CUMO_SHOW_WARNING_ONCE (on by default)
// each line warns only the first time. The engine calls note() at its sync
// entry points; the host line and the printing come through HostHooks.
#pragma once

#include "llvm/ADT/StringSet.h"

#include <optional>

namespace cumo {

class SyncWarnings {
public:
  static SyncWarnings &get();

  /// A host sync is happening now: warns when enabled (and, in once mode,
  /// when this host line has not warned before).
  void note();

  /// Overrides the flags read from the environment (nullopt: read them).
  void configure(std::optional<bool> enabled, std::optional<bool> once);
  bool enabled();
  bool once();

  /// Forgets which lines have warned.
  void reset() { seen_.clear(); }

  /// The text of one warning about a sync at `location`.
  static std::string message(const std::string &location);

private:
  void readEnvironment();

  bool read_ = false;
  bool enabled_ = false;
  bool once_ = true;
  llvm::StringSet<> seen_;
};

} // namespace cumo
