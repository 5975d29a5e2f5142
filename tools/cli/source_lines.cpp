#include "source_lines.hpp"

#include <algorithm>
#include <charconv>

#include "utf8.hpp"

namespace attend::cli {
namespace {

const std::string kRepairedUtf8 = "lines with invalid UTF-8 (repaired)";
const std::string kRepairedIds = "lines with tokens that are not ids of the vocabulary (read as <unk>)";
const std::string kMostlyUnknown = "lines of mostly unknown tokens";
const std::string kReadInPart = "lines read only in part (longer than reading keeps), whose last kept tokens may differ";

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

std::vector<std::string> split_tokens(const std::string& line, std::size_t keep, std::size_t* count) {
  std::vector<std::string> out;
  std::string last[2];  // the last two tokens past `keep`, by index % 2
  std::size_t n = 0;
  for (std::size_t i = 0;;) {
    i = line.find_first_not_of(" \t", i);
    if (i == std::string::npos) break;
    const std::size_t end = line.find_first_of(" \t", i);
    const std::size_t length = end == std::string::npos ? std::string::npos : end - i;
    if (n < keep) out.push_back(line.substr(i, length));
    else last[n % 2] = line.substr(i, length);
    ++n;
    if (end == std::string::npos) break;
    i = end;
  }
  for (std::size_t j = std::max(keep, n >= 2 ? n - 2 : 0); j < n; ++j) out.push_back(std::move(last[j % 2]));
  if (count != nullptr) *count = n;
  return out;
}

SourceLines::SourceLines(const attend::Model& model, Format format, bool strict, SourceLimit limit, std::string who)
    : model_(model),
      format_(format),
      strict_(strict),
      limit_(std::move(limit)),
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
std::vector<std::int32_t> SourceLines::parse_ids(const std::string& line, std::uint64_t number, attend::Model::Side side,
                                                 std::size_t keep, std::size_t* count) {
  const bool source = side == attend::Model::Side::source;
  const std::int64_t vocabulary = source ? model_.source_vocabulary_size() : model_.target_vocabulary_size();
  const std::int32_t unk = source ? source_unk_ : target_unk_;
  std::vector<std::int32_t> ids;
  std::int32_t last[2] = {0, 0};  // the last two ids past `keep`, by index % 2
  std::size_t n = 0;
  std::uint64_t bad = 0;
  std::string first_bad;
  for (std::size_t i = 0;;) {  // (split_tokens's scan, without a string per token)
    i = line.find_first_not_of(" \t", i);
    if (i == std::string::npos) break;
    std::size_t end = line.find_first_of(" \t", i);
    if (end == std::string::npos) end = line.size();
    std::int64_t value = -1;
    const auto [at, ec] = std::from_chars(line.data() + i, line.data() + end, value);
    if (ec != std::errc() || at != line.data() + end || value < 0 || value >= vocabulary) {
      if (bad++ == 0) first_bad = line.substr(i, end - i);
      value = unk;
    }
    if (n < keep) ids.push_back(static_cast<std::int32_t>(value));
    else last[n % 2] = static_cast<std::int32_t>(value);
    ++n;
    i = end;
  }
  for (std::size_t j = std::max(keep, n >= 2 ? n - 2 : 0); j < n; ++j) ids.push_back(last[j % 2]);
  if (count != nullptr) *count = n;
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
    pieces = split_tokens(line, kMaxScannedCharacters);
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
  return format_ == Format::tokens ? line.find_first_not_of(" \t") == std::string::npos : attend::is_blank_text(line);
}

// Tokens and ids: the kept ones and the last two (truncation keeps an end-of-sequence,
// or one followed by a language code, at the end), which give the ids the whole line
// gives once cut; a line read in part has its last token cut, and its end unseen.
attend::Model::TruncatedSource SourceLines::cut_source(const std::string& line, std::uint64_t number, bool cut) {
  if (format_ == Format::text) return model_.encode_source_text(line, limit_.tokens, cut, source_lang_, target_lang_);
  const std::size_t keep = static_cast<std::size_t>(limit_.tokens) + 3;  // (and never empty when the line is not)
  std::size_t count = 0;
  attend::Model::TruncatedSource out;
  if (format_ == Format::tokens) {
    std::vector<std::string> tokens = split_tokens(line, keep, &count);
    if (cut) tokens.resize(std::min(tokens.size(), std::min(keep, count > 0 ? count - 1 : 0)));
    out.ids = model_.encode_tokens(tokens);
    out.length = static_cast<std::int64_t>(count) + specials_;
  } else {
    out.ids = parse_ids(line, number, attend::Model::Side::source, keep, &count);
    if (cut) out.ids.resize(std::min(out.ids.size(), std::min(keep, count > 0 ? count - 1 : 0)));
    out.length = static_cast<std::int64_t>(count);
  }
  out.more = cut;
  out.exact = !cut || count > keep;
  out.truncated = model_.truncate_source(out.ids, limit_.tokens);
  return out;
}

std::optional<std::vector<std::int32_t>> SourceLines::encode(const std::string& raw, std::uint64_t number, bool cut) {
  const std::string line = format_ == Format::ids ? raw : checked_utf8(raw, number);
  if (blank(line)) return std::nullopt;
  const std::uint64_t repaired_before = warnings_.count(kRepairedIds);
  attend::Model::TruncatedSource source = cut_source(line, number, cut);
  if (model_.is_empty_source(source.ids)) return std::nullopt;  // e.g. only characters SentencePiece drops
  // Ids read as <unk> were named already; ids that are <unk> as given are counted here.
  if (format_ != Format::ids || warnings_.count(kRepairedIds) == repaired_before) check_unknown(line, source.ids, number);
  if (source.truncated) note_truncation(source, number);
  if (!source.exact)
    warnings_.add(kReadInPart, number,
                  "its tokens where reading stopped may differ from those of the whole line (the limit keeps " +
                      std::to_string(limit_.tokens) + ")");
  return std::move(source.ids);
}

void SourceLines::note_truncation(const attend::Model::TruncatedSource& source, std::uint64_t number) {
  const std::string length = (source.more ? "more than " : "") + std::to_string(source.length);
  if (strict_) throw attend::Error(at_line(number) + length + " source tokens, more than " + limit_.name);
  if (truncated_++ == 0) first_truncated_ = number;
  dropped_ += static_cast<std::uint64_t>(source.length - static_cast<std::int64_t>(source.ids.size()));
  dropped_more_ = dropped_more_ || source.more;
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
                 "%s: warning: %llu line(s) longer than %s were truncated to it, %s%llu source tokens dropped "
                 "(first: line %llu; --strict rejects them)\n",
                 warnings_.who().c_str(), static_cast<unsigned long long>(truncated_), limit_.name.c_str(),
                 dropped_more_ ? "more than " : "", static_cast<unsigned long long>(dropped_),
                 static_cast<unsigned long long>(first_truncated_));
}

}  // namespace attend::cli
