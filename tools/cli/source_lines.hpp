// Input lines to source ids, as `attend translate` and `attend bench --input` read
// them: text (SentencePiece), tokens (vocabulary tokens separated by spaces) or ids
// (integers separated by spaces, given to the encoder as they are). Bad input is
// never dropped: invalid UTF-8 is replaced (with a warning naming the line) or, with
// --strict, an error; so are out-of-vocabulary ids (replaced by <unk>) and lines
// longer than the model's source limit (truncated, counted in one warning at the end).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "attend/attend.hpp"

namespace attend::cli {

enum class Format { text, tokens, ids };
Format parse_format(const std::string& name);  // after CLI11 checked the name
const char* format_name(Format f);

class SourceLines {
 public:
  // `who` prefixes warnings ("attend translate").
  SourceLines(const attend::Model& model, Format format, bool strict, std::int64_t max_source_length,
              std::string who);

  // The ids for input line `number` (1-based), or nullopt for an empty (or blank) line.
  std::optional<std::vector<std::int32_t>> encode(const std::string& line, std::uint64_t number);
  // A forced target prefix in the same format (no BOS/EOS added); line 0 is --target-prefix.
  std::vector<std::int32_t> encode_prefix(const std::string& text, std::uint64_t number);

  // One line each for the problems that were repaired (call once, at the end).
  void print_warnings(std::FILE* to) const;
  std::uint64_t truncated_lines() const { return truncated_; }

 private:
  std::string checked_utf8(const std::string& line, std::uint64_t number);
  std::vector<std::int32_t> parse_ids(const std::string& line, std::uint64_t number, std::int64_t vocabulary_size);
  void warn_line(std::uint64_t number, const std::string& what);

  const attend::Model& model_;
  std::string who_;
  Format format_;
  bool strict_;
  std::int64_t max_source_length_;
  std::uint64_t truncated_ = 0, first_truncated_ = 0, repaired_ = 0, warnings_printed_ = 0;
};

// Splits on spaces and tabs.
std::vector<std::string> split_tokens(const std::string& line);

}  // namespace attend::cli
