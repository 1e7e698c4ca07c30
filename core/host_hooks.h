// What the lower floors need from the host language, asked through
// callbacks that ruby/ registers: the core never includes ruby.h.
#pragma once

#include <functional>
#include <string>

namespace cumo {

struct HostHooks {
  /// Runs the garbage collector so that dead wrappers release their
  /// storages (memory pressure, before the pool grows).
  std::function<void()> collectGarbage;
  /// A minor collection (young objects only): what a flush may ask for so
  /// that the temporaries a loop dropped are known dead before it decides
  /// what to store (CUMO_GC_BEFORE_FLUSH).
  std::function<void()> collectYoungGarbage;
  /// Runs `wait` with the interpreter lock released (long device waits).
  std::function<void(const std::function<void()> &wait)> blockingRegion;
  /// "file.rb:12", the host line executing now (for sync warnings).
  std::function<std::string()> sourceLocation;
  /// Prints a warning the way the host prints its own.
  std::function<void(const std::string &)> warn;

  static HostHooks &get();

  void runBlocking(const std::function<void()> &wait) const {
    if (blockingRegion)
      blockingRegion(wait);
    else
      wait();
  }
};

} // namespace cumo
