#include "text/blank_text.hpp"

#include <cstdint>

namespace attend::runtime {
namespace {

bool is_blank_code_point(std::uint32_t cp) {
  if (cp == ' ' || (cp >= '\t' && cp <= '\r')) return true;
  switch (cp) {
    case 0x85: case 0xa0: case 0x1680: case 0x180e: case 0x2028: case 0x2029: case 0x202f: case 0x205f:
    case 0x2060: case 0x3000: case 0xfeff:
      return true;
  }
  // The spaces U+2000–U+200A and the zero-width space U+200B — not the joiners U+200C
  // and U+200D, which carry meaning in Persian or Indic text (and are vocabulary tokens).
  return cp >= 0x2000 && cp <= 0x200b;
}

}  // namespace

bool is_blank_text(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char lead = byte(0);
    std::size_t n = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : 0;
    if (n == 0 || i + n > s.size()) return false;  // every blank character is at most 3 bytes long
    std::uint32_t cp = n == 1 ? lead : n == 2 ? lead & 0x1f : lead & 0x0f;
    for (std::size_t k = 1; k < n; ++k) {
      if ((byte(k) & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (byte(k) & 0x3f);
    }
    if (!is_blank_code_point(cp)) return false;
    i += n;
  }
  return true;
}

}  // namespace attend::runtime
