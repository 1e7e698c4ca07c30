#include "core/env_flag.h"

#include "core/host_hooks.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace cumo {

std::optional<bool> parseFlag(std::string_view text) {
  std::string s;
  for (char c : text)
    s += char(std::tolower(static_cast<unsigned char>(c)));
  if (s == "1" || s == "on" || s == "yes" || s == "true")
    return true;
  if (s == "0" || s == "off" || s == "no" || s == "false")
    return false;
  return std::nullopt;
}

bool envFlag(const char *name, bool fallback) {
  const char *v = std::getenv(name);
  if (!v)
    return fallback;
  if (auto b = parseFlag(v))
    return *b;
  std::string msg = std::string(name) + "=" + v +
                    " is not a flag (use 1/on/yes/true or 0/off/no/false); "
                    "keeping the default, " + (fallback ? "on" : "off");
  if (HostHooks::get().warn)
    HostHooks::get().warn(msg);
  else
    std::fprintf(stderr, "warning: %s\n", msg.c_str());
  return fallback;
}

} // namespace cumo
