// The SHA-256 of some bytes, in hex: the file names of the on-disk caches
// (NVRTC's cubins and programs, the host compiler's libraries), which name
// a build by everything it is built from.
#pragma once

#include <string>
#include <string_view>

namespace cumo {

std::string sha256Hex(std::string_view bytes);

} // namespace cumo
