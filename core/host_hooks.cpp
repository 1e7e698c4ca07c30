#include "core/host_hooks.h"

namespace cumo {

HostHooks &HostHooks::get() {
  static HostHooks hooks;
  return hooks;
}

} // namespace cumo
