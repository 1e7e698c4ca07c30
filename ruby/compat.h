// Compatible mode: where Numo answers a Ruby number for a 0-dim result,
// Cumo answers the 0-dim array, unless compatible mode is on
// (CUMO_COMPATIBLE_MODE, Cumo.enable_compatible_mode).
#pragma once

#include <ruby.h>

namespace cumo::rb {

bool compatibleMode();
void setCompatibleMode(bool on);

/// `result` itself, or in compatible mode its element when it is 0-dim.
VALUE compatResult(VALUE result);

} // namespace cumo::rb
