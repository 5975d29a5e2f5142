#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

constexpr std::string_view replacement = "\xef\xbf\xbd";  // U+FFFD

// The length of the valid sequence at s[i], or 0 with `bad` set to the length of the
// maximal subpart to replace (Unicode 15, table 3-7: the well-formed byte sequences).
std::size_t valid_sequence_at(std::string_view s, std::size_t i, std::size_t& bad) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    n = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    n = 3;
    if (lead == 0xe0) lo = 0xa0;
    if (lead == 0xed) hi = 0x9f;  // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    n = 4;
    if (lead == 0xf0) lo = 0x90;
    if (lead == 0xf4) hi = 0x8f;  // nothing past U+10FFFF
  } else {
    bad = 1;
    return 0;
  }
  for (std::size_t k = 1; k < n; ++k) {
    const bool ok = i + k < s.size() && byte(k) >= (k == 1 ? lo : 0x80) && byte(k) <= (k == 1 ? hi : 0xbf);
    if (!ok) {
      bad = k;
      return 0;
    }
  }
  return n;
}

}  // namespace

std::string valid_utf8(std::string_view bytes, bool& replaced) {
  replaced = false;
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    std::size_t bad = 0;
    if (const std::size_t n = valid_sequence_at(bytes, i, bad)) {
      out.append(bytes.substr(i, n));
      i += n;
    } else {
      out.append(replacement);
      replaced = true;
      i += bad;
    }
  }
  return out;
}

bool is_valid_utf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    std::size_t bad = 0;
    const std::size_t n = valid_sequence_at(bytes, i, bad);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  }
}

}  // namespace attend::runtime::hf
