// Reading input lines for the CLI: UTF-8 checks and repair, streaming by chunks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace attend::cli {

// Offset of the first byte that does not start or continue a valid UTF-8 sequence
// (overlongs, surrogates and code points past U+10FFFF are invalid), or nullopt.
std::optional<std::size_t> first_invalid_utf8(const std::string& s);
// `s` with every invalid sequence replaced by U+FFFD.
std::string repair_utf8(const std::string& s);

// Lines from a FILE*, in chunks, with their line numbers (1-based). Trailing "\r\n" or
// "\n" is removed. Never holds more than one chunk.
class LineReader {
 public:
  explicit LineReader(std::FILE* in) : in_(in) {}
  // Up to `max_lines` lines; empty at the end of input.
  std::vector<std::string> read(std::size_t max_lines);
  std::uint64_t lines_read() const { return lines_; }

 private:
  std::FILE* in_;
  std::uint64_t lines_ = 0;
};

// Lines in a regular file (a fast newline count), or nullopt for pipes and terminals.
std::optional<std::uint64_t> count_lines(const std::string& path);

}  // namespace attend::cli
