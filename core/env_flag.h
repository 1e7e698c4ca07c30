// Boolean environment flags (CUMO_COMPATIBLE_MODE, CUMO_SHOW_WARNING ...):
// 1, on, yes or true for a yes and 0, off, no or false for a no, in any
// case; anything else keeps the default and warns once, naming the flag.
#pragma once

#include <optional>
#include <string_view>

namespace cumo {

/// The value of `text` as a flag, or nullopt when it is not one.
std::optional<bool> parseFlag(std::string_view text);

/// The flag `name` from the environment: `fallback` when unset, or set to
/// something that is not a flag (which warns through HostHooks::warn).
bool envFlag(const char *name, bool fallback);

} // namespace cumo
