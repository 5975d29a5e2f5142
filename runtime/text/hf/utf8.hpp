// UTF-8 as the tokenizer pipeline reads and writes it: input bytes made valid (invalid
// sequences replaced, never a crash), code points decoded and appended.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attend::runtime::hf {

// `bytes` as valid UTF-8: each maximal invalid subpart (an ill-formed sequence as far as it
// could still have been valid, or a stray byte) becomes U+FFFD — the Unicode standard's
// "best practice", as Python's bytes.decode("utf-8", "replace") does. `replaced` is set
// when any was.
std::string valid_utf8(std::string_view bytes, bool& replaced);
bool is_valid_utf8(std::string_view bytes);  // (without copying it)

// The code point at s[i] of valid UTF-8; moves i past it.
inline char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = b(0);
  char32_t c;
  if (lead < 0x80) {
    c = lead, i += 1;
  } else if (lead < 0xe0) {
    c = (char32_t(lead & 0x1f) << 6) | (b(1) & 0x3f), i += 2;
  } else if (lead < 0xf0) {
    c = (char32_t(lead & 0x0f) << 12) | (char32_t(b(1) & 0x3f) << 6) | (b(2) & 0x3f), i += 3;
  } else {
    c = (char32_t(lead & 0x07) << 18) | (char32_t(b(1) & 0x3f) << 12) | (char32_t(b(2) & 0x3f) << 6) | (b(3) & 0x3f);
    i += 4;
  }
  return c;
}

// The length in bytes of the UTF-8 sequence that starts with `lead`.
inline std::size_t utf8_sequence_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

void append_utf8(std::string& out, char32_t c);

inline std::size_t count_code_points(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char byte : s) n += (byte & 0xc0) != 0x80;
  return n;
}

}  // namespace attend::runtime::hf
