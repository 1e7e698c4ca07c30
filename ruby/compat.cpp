#include "ruby/compat.h"

#include "core/env_flag.h"
#include "ruby/ruby_api.h"

namespace cumo::rb {

namespace {
int gMode = -1; // -1: not read from the environment yet
}

bool compatibleMode() {
  if (gMode < 0)
    gMode = envFlag("CUMO_COMPATIBLE_MODE", false) ? 1 : 0;
  return gMode == 1;
}

void setCompatibleMode(bool on) { gMode = on ? 1 : 0; }

VALUE compatResult(VALUE result) {
  if (!compatibleMode() || !isNArray(result))
    return result;
  if (handleOf(result, "extract").ndim() != 0)
    return result;
  return rb_funcall(result, rb_intern("extract_cpu"), 0);
}

} // namespace cumo::rb
