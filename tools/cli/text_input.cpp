#include "text_input.hpp"

#include <cstring>
#include <fstream>
#include <sys/stat.h>

namespace attend::cli {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0.
std::size_t valid_sequence(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n;
  std::uint32_t cp;
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

}  // namespace

std::optional<std::size_t> first_invalid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = valid_sequence(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string repair_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = valid_sequence(s, i);
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

std::vector<std::string> LineReader::read(std::size_t max_lines) {
  std::vector<std::string> out;
  char* buffer = nullptr;
  std::size_t capacity = 0;
  while (out.size() < max_lines) {
    const ssize_t n = ::getline(&buffer, &capacity, in_);
    if (n < 0) break;
    std::string line(buffer, static_cast<std::size_t>(n));
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    ++lines_;
  }
  std::free(buffer);
  return out;
}

std::optional<std::uint64_t> count_lines(const std::string& path) {
  struct stat st {};
  if (path.empty() || path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::uint64_t lines = 0;
  char last = '\n';
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    const std::streamsize got = in.gcount();
    for (std::streamsize i = 0; i < got; ++i) lines += buf[i] == '\n';
    last = buf[got - 1];
  }
  return lines + (last != '\n' ? 1 : 0);
}

}  // namespace attend::cli
