// Input lines to source ids, as `attend translate` and `attend bench --input` read
// them: text (SentencePiece), tokens (vocabulary tokens separated by spaces) or ids
// (integers separated by spaces, given to the encoder as they are). Bad input is
// never dropped and never passes silently. One policy for every repairable problem:
// repaired with a warning naming the line, or, with --strict, an error —
//   invalid UTF-8           replaced by U+FFFD;
//   a bad id                anything but an integer inside the vocabulary (-1, 1e3,
//                           99999999999999999999, x3) is read as the side's <unk>;
//   a line over the limit   truncated (counted in one warning at the end, which names
//                           the limit applied and the tokens dropped).
// Only what the limit keeps of a long line is tokenized (Model::encode_source_text; for
// tokens and ids, the kept ones and the last two): memory and time follow the limit,
// not the line.
// A line whose tokens are mostly unknown to the source vocabulary (a wrong model, a
// vocabulary with the wrong line ends, ids that are the source <unk>) is translated,
// with a warning. A blank line —
// for text and ids, Unicode spaces and invisible characters included (tokens are the
// vocabulary's own) — or one that encodes to nothing is empty: an empty line out.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "attend/attend.hpp"
#include "line_warnings.hpp"

namespace attend::cli {

enum class Format { text, tokens, ids };
Format parse_format(const std::string& name);  // after CLI11 checked the name
const char* format_name(Format f);

// The ids a source is cut to (the model's BOS/EOS included), and what sets that limit,
// for messages: "--max-input-length 10", "the model's limit of 2048 source tokens".
struct SourceLimit {
  std::int64_t tokens = 0;
  std::string name;
};

class SourceLines {
 public:
  // `who` prefixes warnings ("attend translate").
  SourceLines(const attend::Model& model, Format format, bool strict, SourceLimit limit, std::string who);

  // Text sources get the model's language tokens for these codes (--source-lang,
  // --target-lang; "" for none); an unknown code is an attend::Error listing the model's.
  void set_languages(std::string source_lang, std::string target_lang);
  // The ids for input line `number` (1-based), or nullopt for an empty line. `cut`: the
  // line is only the start of the input's line (LineReader read it in part).
  std::optional<std::vector<std::int32_t>> encode(const std::string& line, std::uint64_t number, bool cut = false);
  // A forced target prefix in the same format (no BOS/EOS added); line 0 is --target-prefix.
  std::vector<std::int32_t> encode_prefix(const std::string& text, std::uint64_t number);

  // The warnings so far; the caller adds its own (e.g. about results) to the same list.
  LineWarnings& warnings() { return warnings_; }
  // One line each for what was repaired or not listed (call once, at the end).
  void print_warnings(std::FILE* to) const;
  std::uint64_t truncated_lines() const { return truncated_; }
  const SourceLimit& limit() const { return limit_; }

 private:
  // A source's ids cut to the limit, with what the whole line has (as
  // Model::TruncatedSource says it).
  attend::Model::TruncatedSource cut_source(const std::string& line, std::uint64_t number, bool cut);
  void note_truncation(const attend::Model::TruncatedSource& source, std::uint64_t number);
  bool blank(const std::string& line) const;
  std::string checked_utf8(const std::string& line, std::uint64_t number);
  // Ids of a line of integers; with `keep`, only the first keep and the last two are
  // returned (`count`: all of them), the rest only checked.
  std::vector<std::int32_t> parse_ids(const std::string& line, std::uint64_t number, attend::Model::Side side,
                                      std::size_t keep = SIZE_MAX, std::size_t* count = nullptr);
  void check_unknown(const std::string& line, const std::vector<std::int32_t>& ids, std::uint64_t number);
  std::vector<std::string> unknown_examples(const std::string& line) const;

  const attend::Model& model_;
  Format format_;
  bool strict_;
  SourceLimit limit_;
  std::int32_t source_unk_, target_unk_;
  std::int64_t specials_ = 0;  // the BOS/EOS (and language tokens) the model adds to every encoded source
  std::string source_lang_, target_lang_;
  LineWarnings warnings_;
  std::uint64_t truncated_ = 0, first_truncated_ = 0;
  std::uint64_t dropped_ = 0;    // source tokens cut off …
  bool dropped_more_ = false;    // … at least (a line was tokenized only as far as the limit keeps)
};

// Splits on spaces and tabs. With `keep`: the first keep tokens and the last two only
// (`count`: how many there are in all) — a long line's tokens cost what is kept.
std::vector<std::string> split_tokens(const std::string& line, std::size_t keep = SIZE_MAX, std::size_t* count = nullptr);

}  // namespace attend::cli
