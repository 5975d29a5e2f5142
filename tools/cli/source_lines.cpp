#include "source_lines.hpp"

#include <charconv>
#include <limits>

#include "text_input.hpp"

namespace attend::cli {
namespace {

constexpr std::uint64_t kMaxListedWarnings = 10;  // then only counted

bool is_blank(const std::string& s) { return s.find_first_not_of(" \t\r\v\f") == std::string::npos; }

// Line 0 is --target-prefix, which applies to every line.
std::string at_line(std::uint64_t number) {
  return number == 0 ? std::string("--target-prefix: ") : "line " + std::to_string(number) + ": ";
}

}  // namespace

Format parse_format(const std::string& name) {
  if (name == "text") return Format::text;
  if (name == "tokens") return Format::tokens;
  if (name == "ids") return Format::ids;
  throw attend::Error("unknown format '" + name + "' (expected text, tokens or ids)");
}

const char* format_name(Format f) {
  switch (f) {
    case Format::text: return "text";
    case Format::tokens: return "tokens";
    case Format::ids: return "ids";
  }
  return "?";
}

std::vector<std::string> split_tokens(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (true) {
    i = line.find_first_not_of(" \t", i);
    if (i == std::string::npos) break;
    const std::size_t end = line.find_first_of(" \t", i);
    out.push_back(line.substr(i, end == std::string::npos ? std::string::npos : end - i));
    if (end == std::string::npos) break;
    i = end;
  }
  return out;
}

SourceLines::SourceLines(const attend::Model& model, Format format, bool strict, std::int64_t max_source_length,
                         std::string who)
    : model_(model), who_(std::move(who)), format_(format), strict_(strict), max_source_length_(max_source_length) {
  if (format == Format::text && !model.has_text_tokenizer())
    throw attend::Error(
        "the model has no SentencePiece model (source.spm + target.spm, or vocab.spm) to read text: use "
        "--input-format ids or tokens");
  if (format == Format::tokens && !model.has_vocabulary())
    throw attend::Error("the model has no vocabulary files to read tokens: use --input-format ids");
}

void SourceLines::warn_line(std::uint64_t number, const std::string& what) {
  ++repaired_;
  if (warnings_printed_ < kMaxListedWarnings) {
    std::fprintf(stderr, "%s: warning: %s%s\n", who_.c_str(), at_line(number).c_str(), what.c_str());
    ++warnings_printed_;
  }
}

std::string SourceLines::checked_utf8(const std::string& line, std::uint64_t number) {
  const auto bad = first_invalid_utf8(line);
  if (!bad) return line;
  const std::string what = "invalid UTF-8 at byte " + std::to_string(*bad + 1);
  if (strict_) throw attend::Error(at_line(number) + what);
  warn_line(number, what + " (replaced with U+FFFD)");
  return repair_utf8(line);
}

std::vector<std::int32_t> SourceLines::parse_ids(const std::string& line, std::uint64_t number, std::int64_t vocabulary) {
  std::vector<std::int32_t> ids;
  for (const std::string& token : split_tokens(line)) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc() || end != token.data() + token.size())
      throw attend::Error(at_line(number) + "'" + token + "' is not a token id (--input-format ids reads integers)");
    if (value < 0 || value >= vocabulary) {
      const std::string what = "id " + token + " is outside the vocabulary [0, " + std::to_string(vocabulary) + ")";
      if (strict_) throw attend::Error(at_line(number) + what);
      warn_line(number, what + " (read as <unk>, id " + std::to_string(model_.special_ids().unk) + ")");
      value = std::min<std::int64_t>(model_.special_ids().unk, vocabulary - 1);
    }
    ids.push_back(static_cast<std::int32_t>(value));
  }
  return ids;
}

std::optional<std::vector<std::int32_t>> SourceLines::encode(const std::string& raw, std::uint64_t number) {
  const std::string line = format_ == Format::ids ? raw : checked_utf8(raw, number);
  if (is_blank(line)) return std::nullopt;
  std::vector<std::int32_t> ids;
  switch (format_) {
    case Format::text: ids = model_.encode_text(line); break;
    case Format::tokens: ids = model_.encode_tokens(split_tokens(line)); break;
    case Format::ids: ids = parse_ids(line, number, model_.source_vocabulary_size()); break;
  }
  const std::size_t length = ids.size();
  if (model_.truncate_source(ids, max_source_length_)) {
    if (strict_)
      throw attend::Error(at_line(number) + std::to_string(length) + " source tokens, more than the limit of " +
                          std::to_string(max_source_length_));
    if (truncated_++ == 0) first_truncated_ = number;
  }
  return ids;
}

std::vector<std::int32_t> SourceLines::encode_prefix(const std::string& raw, std::uint64_t number) {
  const std::string text = format_ == Format::ids ? raw : checked_utf8(raw, number);
  switch (format_) {
    case Format::text: return is_blank(text) ? std::vector<std::int32_t>{} : model_.encode_text(text, attend::Model::Side::target);
    case Format::tokens: return model_.encode_tokens(split_tokens(text), attend::Model::Side::target);
    case Format::ids: return parse_ids(text, number, model_.target_vocabulary_size());
  }
  return {};
}

void SourceLines::print_warnings(std::FILE* to) const {
  if (repaired_ > warnings_printed_)
    std::fprintf(to, "%s: warning: %llu more repaired lines were not listed\n", who_.c_str(),
                 static_cast<unsigned long long>(repaired_ - warnings_printed_));
  if (truncated_ > 0)
    std::fprintf(to,
                 "%s: warning: %llu line(s) longer than the model's limit of %lld source tokens were truncated "
                 "(first: line %llu; --strict rejects them)\n",
                 who_.c_str(), static_cast<unsigned long long>(truncated_), static_cast<long long>(max_source_length_),
                 static_cast<unsigned long long>(first_truncated_));
}

}  // namespace attend::cli
