#include "core/stats.h"

namespace cumo {

Stats &Stats::get() {
  static Stats stats;
  return stats;
}

} // namespace cumo
