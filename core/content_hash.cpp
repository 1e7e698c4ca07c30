#include "core/content_hash.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SHA256.h"

#include <array>
#include <cstdint>

namespace cumo {

std::string sha256Hex(std::string_view bytes) {
  std::array<uint8_t, 32> sum = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : sum) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

} // namespace cumo
