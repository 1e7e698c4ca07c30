#include "core/error.h"

namespace cumo {

void opError(ErrorKind kind, std::string_view op, const std::string &what) {
  std::string msg;
  msg.reserve(op.size() + what.size() + 3);
  msg += '[';
  msg += op;
  msg += "] ";
  msg += what;
  throw Error(kind, std::move(msg));
}

} // namespace cumo
