#include "source_lines.hpp"

#include <algorithm>
#include <charconv>

#include "utf8.hpp"

namespace attend::cli {
namespace {

const std::string kRepairedUtf8 = "lines with invalid UTF-8 (repaired)";
const std::string kRepairedIds = "lines with tokens that are not ids of the vocabulary (read as <unk>)";
const std::string kMostlyUnknown = "lines of mostly unknown tokens";

constexpr std::size_t kMaxExamples = 3;
constexpr std::size_t kMaxScannedCharacters = 200;  // when looking for unknown characters

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "'" : ", '") + excerpt(s, 24) + "'";
  return out;
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
    : model_(model),
      format_(format),
      strict_(strict),
      max_source_length_(max_source_length),
      source_unk_(model.special_ids().source_unk),
      target_unk_(model.special_ids().unk),
      warnings_(std::move(who)) {
  if (format == Format::text && !model.has_text_tokenizer())
    throw attend::Error(
        "the model has no SentencePiece model (source.spm + target.spm, or vocab.spm) to read text: use "
        "--input-format ids or tokens");
  if (format == Format::tokens && !model.has_vocabulary())
    throw attend::Error("the model has no vocabulary files to read tokens: use --input-format ids");
  if (format == Format::text) specials_ = static_cast<std::int64_t>(model.encode_text("").size());
  if (format == Format::tokens) specials_ = static_cast<std::int64_t>(model.encode_tokens({}).size());
}

void SourceLines::set_languages(std::string source_lang, std::string target_lang) {
  source_lang_ = std::move(source_lang), target_lang_ = std::move(target_lang);
  if (format_ == Format::text) specials_ = static_cast<std::int64_t>(model_.encode_source("", source_lang_, target_lang_).size());
}

std::string SourceLines::checked_utf8(const std::string& line, std::uint64_t number) {
  const auto bad = first_invalid_utf8(line);
  if (!bad) return line;
  const std::string what = "invalid UTF-8 at byte " + std::to_string(*bad + 1);
  if (strict_) throw attend::Error(at_line(number) + what);
  warnings_.add(kRepairedUtf8, number, what + " (replaced with U+FFFD)");
  return repair_utf8(line);
}

// One policy for every token that is not an id of the vocabulary — not an integer,
// negative, past the end, too large for any integer type: <unk> with one warning for
// the line, or an error with --strict.
std::vector<std::int32_t> SourceLines::parse_ids(const std::string& line, std::uint64_t number, attend::Model::Side side) {
  const bool source = side == attend::Model::Side::source;
  const std::int64_t vocabulary = source ? model_.source_vocabulary_size() : model_.target_vocabulary_size();
  const std::int32_t unk = source ? source_unk_ : target_unk_;
  std::vector<std::int32_t> ids;
  std::uint64_t bad = 0;
  std::string first_bad;
  for (const std::string& token : split_tokens(line)) {
    std::int64_t value = -1;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc() || end != token.data() + token.size() || value < 0 || value >= vocabulary) {
      if (bad++ == 0) first_bad = token;
      value = unk;
    }
    ids.push_back(static_cast<std::int32_t>(value));
  }
  if (bad == 0) return ids;
  const std::string vocab = std::string(source ? "the source" : "the target") + " vocabulary [0, " + std::to_string(vocabulary) + ")";
  std::string first = "'";  // (appended piecewise: GCC 12 misreads "'" + std::string as an overlap)
  first.append(excerpt(first_bad, 24)).append("'");
  if (strict_) throw attend::Error(at_line(number) + first + " is not an id of " + vocab);
  const std::string what = bad == 1 ? first + " is not an id of " + vocab
                                    : std::to_string(bad) + " tokens are not ids of " + vocab + ", the first " + first;
  warnings_.add(kRepairedIds, number,
                what + " (read as <unk>, " + (source ? "source" : "target") + " id " + std::to_string(unk) + ")");
  return ids;
}

// Up to kMaxExamples + 1 tokens (or characters, for text) of `line` that the source
// vocabulary does not know. Only called for lines that are listed in a warning.
std::vector<std::string> SourceLines::unknown_examples(const std::string& line) const {
  std::vector<std::string> pieces, examples;
  if (format_ == Format::tokens) {
    pieces = split_tokens(line);
  } else {  // one character at a time: SentencePiece reads a character it lacks as <unk>
    for (std::size_t i = 0; i < line.size() && pieces.size() < kMaxScannedCharacters;) {
      std::size_t n = 1;
      while (i + n < line.size() && (static_cast<unsigned char>(line[i + n]) & 0xc0) == 0x80) ++n;
      pieces.push_back(line.substr(i, n));
      i += n;
    }
  }
  for (const std::string& piece : pieces) {
    if (examples.size() > kMaxExamples) break;  // one more than shown: whether to write "…"
    if (attend::is_blank_text(piece) || std::find(examples.begin(), examples.end(), piece) != examples.end()) continue;
    const auto ids = format_ == Format::tokens ? model_.encode_tokens({piece}) : model_.encode_text(piece);
    if (std::find(ids.begin(), ids.end(), source_unk_) != ids.end()) examples.push_back(piece);
  }
  return examples;
}

void SourceLines::check_unknown(const std::string& line, const std::vector<std::int32_t>& ids, std::uint64_t number) {
  const std::int64_t content = static_cast<std::int64_t>(ids.size()) - specials_;
  const std::int64_t unknown = std::count(ids.begin(), ids.end(), source_unk_);
  if (content <= 0 || 2 * unknown < content) return;  // at least half: SentencePiece adds a "▁" before each word
  std::string what = std::to_string(unknown) + " of " + std::to_string(content) +
                     " tokens are unknown to the source vocabulary";
  if (format_ == Format::ids) {
    what += " (id " + std::to_string(source_unk_) + ", <unk>)";
  } else if (warnings_.count(kMostlyUnknown) < 10) {  // examples cost an encoding each: only for listed lines
    auto examples = unknown_examples(line);
    const bool more = examples.size() > kMaxExamples;
    examples.resize(std::min(examples.size(), kMaxExamples));
    if (!examples.empty()) what += " (" + quoted_list(examples) + (more ? ", …)" : ")");
  }
  warnings_.add(kMostlyUnknown, number, what + ": is the input in the model's language and format?");
}

// Tokens are the vocabulary's own: a line of them is blank only without any (a
// vocabulary may hold U+00A0 as a token). Text and ids: Unicode blank lines too.
bool SourceLines::blank(const std::string& line) const {
  return format_ == Format::tokens ? split_tokens(line).empty() : attend::is_blank_text(line);
}

std::optional<std::vector<std::int32_t>> SourceLines::encode(const std::string& raw, std::uint64_t number) {
  const std::string line = format_ == Format::ids ? raw : checked_utf8(raw, number);
  if (blank(line)) return std::nullopt;
  std::vector<std::int32_t> ids;
  const std::uint64_t repaired_before = warnings_.count(kRepairedIds);
  switch (format_) {
    case Format::text: ids = model_.encode_source(line, source_lang_, target_lang_); break;
    case Format::tokens: ids = model_.encode_tokens(split_tokens(line)); break;
    case Format::ids: ids = parse_ids(line, number, attend::Model::Side::source); break;
  }
  if (model_.is_empty_source(ids)) return std::nullopt;  // e.g. only characters SentencePiece drops
  // Ids read as <unk> were named already; ids that are <unk> as given are counted here.
  if (format_ != Format::ids || warnings_.count(kRepairedIds) == repaired_before) check_unknown(line, ids, number);
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
  if (blank(text)) return {};
  switch (format_) {
    case Format::text: return model_.encode_text(text, attend::Model::Side::target);
    case Format::tokens: return model_.encode_tokens(split_tokens(text), attend::Model::Side::target);
    case Format::ids: return parse_ids(text, number, attend::Model::Side::target);
  }
  return {};
}

void SourceLines::print_warnings(std::FILE* to) const {
  warnings_.summarize(to);
  if (truncated_ > 0)
    std::fprintf(to,
                 "%s: warning: %llu line(s) longer than the model's limit of %lld source tokens were truncated "
                 "(first: line %llu; --strict rejects them)\n",
                 warnings_.who().c_str(), static_cast<unsigned long long>(truncated_),
                 static_cast<long long>(max_source_length_), static_cast<unsigned long long>(first_truncated_));
}

}  // namespace attend::cli
