#include "utf8.hpp"

#include <cstdint>
#include <cstdio>

namespace attend::cli {
namespace {

// Length of the valid UTF-8 sequence at s[i] (its code point in `cp`), or 0.
std::size_t valid_sequence(const std::string& s, std::size_t i, std::uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return cp = c, 1;
  std::size_t n;
  if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// The escape one_line() writes for code point `cp`, or "" if it stays as it is.
std::string escape_of(std::uint32_t cp) {
  char buf[12] = "";
  if (cp == '\n') return "\\n";
  if (cp == '\r') return "\\r";
  if ((cp < 0x20 && cp != '\t') || cp == 0x7f) std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
  else if (cp == 0x85 || cp == 0x2028 || cp == 0x2029) std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
  return buf;
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(const std::string& s) {
  std::uint32_t cp;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = valid_sequence(s, i, cp);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string repair_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  std::uint32_t cp;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = valid_sequence(s, i, cp);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

std::string one_line(const std::string& s) {
  std::string out;
  std::uint32_t cp;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = valid_sequence(s, i, cp);
    if (n == 0) n = 1, cp = 0xfffd;  // an invalid byte is kept as it is (never a control)
    const std::string escape = escape_of(cp);
    if (escape.empty()) out.append(s, i, n);
    else out += escape;
    i += n;
  }
  return out;
}

std::string excerpt(const std::string& s, std::size_t max_bytes) {
  std::string out;
  std::uint32_t cp;
  std::size_t i = 0;
  while (i < s.size() && out.size() < max_bytes) {
    const std::size_t n = valid_sequence(s, i, cp);
    if (n == 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(static_cast<unsigned char>(s[i])));
      out += buf;
      ++i;
      continue;
    }
    const std::string escape = escape_of(cp);
    if (escape.empty()) out.append(s, i, n);
    else out += escape;
    i += n;
  }
  if (i < s.size()) out += "… (" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace attend::cli
