#include "graph/cubin_symbols.h"

#include <cstdint>
#include <cstring>

namespace cumo {

namespace {

constexpr uint32_t kSymtab = 2;      // SHT_SYMTAB
constexpr uint8_t kFunction = 2;     // STT_FUNC
constexpr uint8_t kCudaEntry = 0x10; // STO_CUDA_ENTRY
constexpr size_t kSectionHeaderBytes = 64;
constexpr size_t kSymbolBytes = 24;

/// Reads a little-endian T at `at`, or false past the end.
template <class T> bool readAt(std::string_view data, uint64_t at, T &out) {
  if (at > data.size() || data.size() - at < sizeof(T))
    return false;
  std::memcpy(&out, data.data() + at, sizeof(T));
  return true;
}

} // namespace

std::vector<std::string> cubinKernels(std::string_view cubin) {
  std::vector<std::string> out;
  // ELF64, little endian.
  if (cubin.size() < 64 ||
      std::memcmp(cubin.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      cubin[4] != 2 || cubin[5] != 1)
    return out;
  uint64_t sectionsAt = 0;
  uint16_t entryBytes = 0, sections = 0;
  if (!readAt(cubin, 0x28, sectionsAt) || !readAt(cubin, 0x3A, entryBytes) ||
      !readAt(cubin, 0x3C, sections) || entryBytes < kSectionHeaderBytes)
    return out;
  auto header = [&](uint32_t i, uint32_t &type, uint64_t &offset, uint64_t &size, uint32_t &link,
                    uint64_t &entsize) {
    uint64_t h = sectionsAt + uint64_t(i) * entryBytes;
    return readAt(cubin, h + 4, type) && readAt(cubin, h + 0x18, offset) &&
           readAt(cubin, h + 0x20, size) && readAt(cubin, h + 0x28, link) &&
           readAt(cubin, h + 0x38, entsize);
  };
  for (uint32_t i = 0; i < sections; ++i) {
    uint32_t type = 0, link = 0;
    uint64_t offset = 0, size = 0, entsize = 0;
    if (!header(i, type, offset, size, link, entsize) || type != kSymtab ||
        entsize < kSymbolBytes || link >= sections)
      continue;
    uint32_t strType = 0, strLink = 0;
    uint64_t strings = 0, stringBytes = 0, strEntsize = 0;
    if (!header(link, strType, strings, stringBytes, strLink, strEntsize) ||
        strings > cubin.size() || cubin.size() - strings < stringBytes)
      continue;
    std::string_view names = cubin.substr(strings, stringBytes);
    for (uint64_t s = 0; s + kSymbolBytes <= size; s += entsize) {
      uint32_t name = 0;
      uint8_t info = 0, other = 0;
      if (!readAt(cubin, offset + s, name) || !readAt(cubin, offset + s + 4, info) ||
          !readAt(cubin, offset + s + 5, other) || name >= names.size())
        break;
      if ((info & 0xf) != kFunction || (other & kCudaEntry) == 0)
        continue;
      size_t end = names.find('\0', name);
      if (end != std::string_view::npos)
        out.emplace_back(names.substr(name, end - name));
    }
  }
  return out;
}

} // namespace cumo
