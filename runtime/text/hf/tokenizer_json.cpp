#include "text/hf/tokenizer_json.hpp"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attend/error.hpp"
#include "formats/json_errors.hpp"
#include "text/hf/byte_level.hpp"
#include "text/hf/decoders.hpp"
#include "text/hf/literal_regex.hpp"
#include "text/hf/models.hpp"
#include "text/hf/normalizers.hpp"
#include "text/hf/post_processors.hpp"
#include "text/hf/pre_tokenizers.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

using nlohmann::json;

// A value of the file with its path, so that every error names the file and the field.
class Field {
 public:
  Field(const json& value, std::string path, const std::string& file) : value_(value), path_(std::move(path)), file_(file) {}

  Error error(std::string_view what) const { return error_of(file_, ": ", path_.empty() ? "(top level)" : path_, ": ", what); }

  bool has(const char* key) const { return value_.is_object() && value_.contains(key) && !value_[key].is_null(); }
  Field at(const char* key) const {
    if (!value_.is_object()) throw error("must be an object");
    if (!value_.contains(key)) throw error_of(file_, ": ", child_path(key), ": missing");
    return Field(value_[key], child_path(key), file_);
  }
  Field at(std::size_t i) const { return Field(value_[i], path_ + "[" + std::to_string(i) + "]", file_); }
  std::size_t size() const {
    if (!value_.is_array()) throw error("must be a list");
    return value_.size();
  }

  std::string string() const {
    if (!value_.is_string()) throw error("must be a string");
    return value_.get<std::string>();
  }
  bool boolean() const {
    if (!value_.is_boolean()) throw error("must be true or false");
    return value_.get<bool>();
  }
  std::int64_t integer() const {
    if (!value_.is_number_integer()) throw error("must be an integer");
    return value_.get<std::int64_t>();
  }
  double number() const {
    if (!value_.is_number()) throw error("must be a number");
    return value_.get<double>();
  }
  std::int32_t id() const {
    const std::int64_t v = integer();
    if (v < 0 || v > INT32_MAX) throw error_of(file_, ": ", path_, ": ", v, " is not a token id");
    return static_cast<std::int32_t>(v);
  }
  char32_t character() const {  // a string of one character
    const std::string s = string();
    bool bad = false;
    valid_utf8(s, bad);
    std::size_t i = 0;
    const char32_t c = s.empty() || bad ? 0 : next_code_point(s, i);
    if (s.empty() || bad || i != s.size()) throw error("must be one character");
    return c;
  }
  // Optional members, with the default `tokenizers` uses when absent or null.
  bool boolean(const char* key, bool otherwise) const { return has(key) ? at(key).boolean() : otherwise; }
  std::string string(const char* key, const std::string& otherwise) const { return has(key) ? at(key).string() : otherwise; }

  // A value found inside this one (an object's member whose key is data).
  Field inner(const json& value, const std::string& key) const { return Field(value, child_path(key.c_str()), file_); }
  // Rethrows an error from outside the reader (no file named yet) as this field's.
  Error wrap(const Error& e) const {
    const std::string what = e.what();
    return what.rfind(file_ + ": ", 0) == 0 ? e : error(what);
  }

  const json& value() const { return value_; }
  const std::string& path() const { return path_; }

 private:
  std::string child_path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

  const json& value_;
  std::string path_;
  const std::string& file_;
};

// A JSON number as serde_json parses it by default (without its "float_roundtrip"
// feature), which is how `tokenizers` reads tokenizer.json: the digits as a u64 (those
// past 19-20 digits dropped), converted to double, then multiplied or divided by a power
// of ten. Up to an ULP from the correctly rounded value — and Unigram's Viterbi breaks
// ties between equal-scoring segmentations on exactly these bits.
double serde_json_double(const std::string& text) {
  static const std::vector<double> powers = [] {
    std::vector<double> p;
    for (int i = 0; i <= 308; ++i) p.push_back(std::strtod(("1e" + std::to_string(i)).c_str(), nullptr));
    return p;
  }();
  std::size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  std::uint64_t significand = 0;
  std::int64_t exponent = 0;
  bool skipping = false, fraction = false;  // skipping: a digit overflowed, the rest of the part is dropped
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      fraction = true, skipping = false;  // serde_json tries the first decimal again
      continue;
    }
    if (c < '0' || c > '9') break;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    skipping = skipping || significand > (UINT64_MAX - digit) / 10;
    if (skipping) {
      if (!fraction) ++exponent;  // a dropped integer digit still scales
      continue;
    }
    significand = significand * 10 + digit;
    if (fraction) --exponent;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) exponent += std::strtoll(text.c_str() + i + 1, nullptr, 10);
  double f = static_cast<double>(significand);
  while (true) {
    const std::uint64_t magnitude = exponent < 0 ? static_cast<std::uint64_t>(-exponent) : static_cast<std::uint64_t>(exponent);
    if (magnitude < powers.size()) {
      f = exponent >= 0 ? f * powers[magnitude] : f / powers[magnitude];
      break;
    }
    if (f == 0.0 || exponent >= 0) break;  // serde_json refuses such a large number; 0 stays 0
    f /= 1e308;
    exponent += 308;
  }
  return negative ? -f : f;
}

// nlohmann's DOM builder with serde_json's doubles (serde_json_double).
class SerdeDoubles {
 public:
  explicit SerdeDoubles(json& root) : dom_(root) {}
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t, const std::string& text) { return dom_.number_float(serde_json_double(text), text); }
  bool string(std::string& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return dom_.start_object(n); }
  bool key(std::string& v) { return dom_.key(v); }
  bool end_object() { return dom_.end_object(); }
  bool start_array(std::size_t n) { return dom_.start_array(n); }
  bool end_array() { return dom_.end_array(); }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    return dom_.parse_error(position, token, e);
  }

 private:
  nlohmann::detail::json_sax_dom_parser<json> dom_;
};

[[noreturn]] void unsupported(const Field& type, std::string_view kind, std::string_view supported) {
  throw type.error("\"" + type.string() + "\" is not a " + std::string(kind) + " attend supports (" +
                   std::string(supported) + ")");
}

// A {"String": s} or {"Regex": r} pattern.
void read_pattern(const Field& f, std::string& pattern, bool& is_regex, std::regex& regex) {
  if (f.has("String")) {
    pattern = f.at("String").string(), is_regex = false;
  } else if (f.has("Regex")) {
    const Field r = f.at("Regex");
    pattern = r.string(), is_regex = true;
    try {
      regex = compile_literal_regex(pattern);
    } catch (const Error& e) {
      throw r.wrap(e);
    }
  } else {
    throw f.error("must be {\"String\": ...} or {\"Regex\": ...}");
  }
}

SplitBehavior read_behavior(const Field& f) {
  const std::string b = f.string();
  if (b == "Removed") return SplitBehavior::removed;
  if (b == "Isolated") return SplitBehavior::isolated;
  if (b == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (b == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (b == "Contiguous") return SplitBehavior::contiguous;
  throw f.error("\"" + b + "\" is not a split behaviour (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
}

std::unique_ptr<Normalizer> read_normalizer(const Field& f) {
  const Field type = f.at("type");
  const std::string t = type.string();
  if (t == "BertNormalizer") {
    auto n = std::make_unique<BertNormalizer>();
    n->clean_text = f.boolean("clean_text", true);
    n->handle_chinese_chars = f.boolean("handle_chinese_chars", true);
    n->lowercase = f.boolean("lowercase", true);
    if (f.has("strip_accents")) n->strip_accents = f.at("strip_accents").boolean();
    return n;
  }
  if (t == "NFC") return std::make_unique<UnicodeNormalizer>(NormalForm::nfc);
  if (t == "NFD") return std::make_unique<UnicodeNormalizer>(NormalForm::nfd);
  if (t == "NFKC") return std::make_unique<UnicodeNormalizer>(NormalForm::nfkc);
  if (t == "NFKD") return std::make_unique<UnicodeNormalizer>(NormalForm::nfkd);
  if (t == "Lowercase") return std::make_unique<Lowercase>();
  if (t == "StripAccents") return std::make_unique<StripAccents>();
  if (t == "Strip") {
    auto n = std::make_unique<Strip>();
    n->left = f.boolean("strip_left", true);
    n->right = f.boolean("strip_right", true);
    return n;
  }
  if (t == "Replace") {
    auto n = std::make_unique<Replace>();
    read_pattern(f.at("pattern"), n->pattern, n->is_regex, n->regex);
    n->content = f.at("content").string();
    return n;
  }
  if (t == "Prepend") {
    auto n = std::make_unique<Prepend>();
    n->prefix = f.at("prepend").string();
    return n;
  }
  if (t == "Precompiled") {
    const Field map = f.at("precompiled_charsmap");
    try {
      return std::make_unique<Precompiled>(PrecompiledCharsmap(decode_base64(map.string(), "base64")));
    } catch (const Error& e) {
      throw map.wrap(e);
    }
  }
  if (t == "Sequence") {
    auto n = std::make_unique<NormalizerSequence>();
    const Field steps = f.at("normalizers");
    for (std::size_t i = 0; i < steps.size(); ++i) n->steps.push_back(read_normalizer(steps.at(i)));
    return n;
  }
  unsupported(type, "normalizer",
              "BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Replace, Prepend, Precompiled, "
              "Sequence");
}

std::unique_ptr<PreTokenizer> read_pre_tokenizer(const Field& f) {
  const Field type = f.at("type");
  const std::string t = type.string();
  if (t == "BertPreTokenizer") return std::make_unique<BertPreTokenizer>();
  if (t == "Whitespace") return std::make_unique<WhitespacePreTokenizer>();
  if (t == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (t == "Punctuation") {
    auto p = std::make_unique<Punctuation>();
    if (f.has("behavior")) p->behavior = read_behavior(f.at("behavior"));
    return p;
  }
  if (t == "Digits") {
    auto p = std::make_unique<Digits>();
    p->individual_digits = f.boolean("individual_digits", false);
    return p;
  }
  if (t == "CharDelimiterSplit") {
    auto p = std::make_unique<CharDelimiterSplit>();
    p->delimiter = f.at("delimiter").character();
    return p;
  }
  if (t == "Split") {
    auto p = std::make_unique<SplitPreTokenizer>();
    read_pattern(f.at("pattern"), p->pattern, p->is_regex, p->regex);
    p->behavior = read_behavior(f.at("behavior"));
    p->invert = f.at("invert").boolean();
    return p;
  }
  if (t == "Metaspace") {
    auto p = std::make_unique<Metaspace>();
    p->replacement_char = f.at("replacement").character();
    p->replacement.clear();
    append_utf8(p->replacement, p->replacement_char);
    const std::string scheme = f.string("prepend_scheme", "always");
    if (scheme == "always") p->prepend = Metaspace::Prepend::always;
    else if (scheme == "first") p->prepend = Metaspace::Prepend::first;
    else if (scheme == "never") p->prepend = Metaspace::Prepend::never;
    else throw f.at("prepend_scheme").error("\"" + scheme + "\" is not always, first or never");
    if (f.has("add_prefix_space") && !f.at("add_prefix_space").boolean()) {
      if (p->prepend != Metaspace::Prepend::never)
        throw f.at("add_prefix_space").error("false does not match prepend_scheme \"" + scheme + "\"");
    }
    p->split = f.boolean("split", true);
    return p;
  }
  if (t == "ByteLevel") {
    auto p = std::make_unique<ByteLevel>();
    p->add_prefix_space = f.boolean("add_prefix_space", true);
    p->use_regex = f.boolean("use_regex", true);
    return p;
  }
  if (t == "Sequence") {
    auto p = std::make_unique<PreTokenizerSequence>();
    const Field steps = f.at("pretokenizers");
    for (std::size_t i = 0; i < steps.size(); ++i) p->steps.push_back(read_pre_tokenizer(steps.at(i)));
    return p;
  }
  unsupported(type, "pre-tokenizer",
              "BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation, Digits, CharDelimiterSplit, Split, "
              "Metaspace, ByteLevel, Sequence");
}

// {"token": id, ...} into a model's vocabulary.
void read_vocab_map(const Field& f, Vocab& vocab) {
  if (!f.value().is_object()) throw f.error("must be an object of token: id");
  for (const auto& [token, id] : f.value().items()) vocab.add(token, f.inner(id, token).id());
}

std::unique_ptr<Model> read_model(const Field& f) {
  const Field type = f.has("type") ? f.at("type") : f.at("vocab");  // old files omit WordPiece's type
  const std::string t = f.has("type") ? type.string() : "WordPiece";
  try {
    if (t == "WordPiece") {
      auto m = std::make_unique<WordPiece>();
      read_vocab_map(f.at("vocab"), m->vocab);
      m->unk_token = f.string("unk_token", "[UNK]");
      m->continuing_subword_prefix = f.string("continuing_subword_prefix", "##");
      if (f.has("max_input_chars_per_word")) m->max_input_chars_per_word = static_cast<std::size_t>(f.at("max_input_chars_per_word").integer());
      return m;
    }
    if (t == "Unigram") {
      const Field vocab = f.at("vocab");
      std::vector<std::pair<std::string, double>> pieces;
      for (std::size_t i = 0; i < vocab.size(); ++i) {
        const Field entry = vocab.at(i);
        if (entry.size() != 2) throw entry.error("must be [token, score]");
        pieces.emplace_back(entry.at(std::size_t{0}).string(), entry.at(1).number());
      }
      std::optional<std::int32_t> unk;
      if (f.has("unk_id")) unk = f.at("unk_id").id();
      return std::make_unique<Unigram>(std::move(pieces), unk, f.boolean("byte_fallback", false));
    }
    if (t == "BPE") {
      auto m = std::make_unique<Bpe>();
      if (f.has("dropout") && f.at("dropout").number() != 0.0)
        throw f.at("dropout").error("BPE dropout samples at random; attend tokenizes deterministically (set it to null)");
      read_vocab_map(f.at("vocab"), m->vocab);
      if (f.has("unk_token")) m->unk_token = f.at("unk_token").string();
      if (f.has("continuing_subword_prefix")) m->continuing_subword_prefix = f.at("continuing_subword_prefix").string();
      if (f.has("end_of_word_suffix")) m->end_of_word_suffix = f.at("end_of_word_suffix").string();
      m->fuse_unk = f.boolean("fuse_unk", false);
      m->byte_fallback = f.boolean("byte_fallback", false);
      m->ignore_merges = f.boolean("ignore_merges", false);
      const Field merges = f.at("merges");
      std::vector<std::pair<std::string, std::string>> pairs;
      for (std::size_t i = 0; i < merges.size(); ++i) {
        const Field merge = merges.at(i);
        if (merge.value().is_string()) {  // "a b"
          const std::string s = merge.string();
          const auto space = s.find(' ');
          if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
            throw merge.error("must be two tokens separated by one space");
          pairs.emplace_back(s.substr(0, space), s.substr(space + 1));
        } else {
          if (merge.size() != 2) throw merge.error("must be [left, right]");
          pairs.emplace_back(merge.at(std::size_t{0}).string(), merge.at(1).string());
        }
      }
      m->set_merges(pairs);
      return m;
    }
    if (t == "WordLevel") {
      auto m = std::make_unique<WordLevel>();
      read_vocab_map(f.at("vocab"), m->vocab);
      m->unk_token = f.string("unk_token", "<unk>");
      return m;
    }
  } catch (const Error& e) {
    throw f.wrap(e);
  }
  unsupported(type, "model", "WordPiece, Unigram, BPE, WordLevel");
}

Token read_token_pair(const Field& f) {  // ["[SEP]", 102]
  if (f.size() != 2) throw f.error("must be [token, id]");
  return {f.at(1).id(), f.at(std::size_t{0}).string()};
}

std::unique_ptr<PostProcessor> read_post_processor(const Field& f) {
  const Field type = f.at("type");
  const std::string t = type.string();
  if (t == "TemplateProcessing") {
    auto p = std::make_unique<TemplateProcessing>();
    const Field specials = f.at("special_tokens");
    if (!specials.value().is_object()) throw specials.error("must be an object");
    for (const auto& [name, value] : specials.value().items()) {
      const Field s = specials.inner(value, name);
      TemplateProcessing::SpecialTokens tokens;
      const Field ids = s.at("ids");
      for (std::size_t i = 0; i < ids.size(); ++i) tokens.ids.push_back(ids.at(i).id());
      const Field strings = s.at("tokens");
      for (std::size_t i = 0; i < strings.size(); ++i) tokens.tokens.push_back(strings.at(i).string());
      if (tokens.ids.size() != tokens.tokens.size()) throw s.error("has different numbers of ids and tokens");
      p->special_tokens[name] = std::move(tokens);
    }
    for (const char* which : {"single", "pair"}) {
      const Field pieces = f.at(which);
      auto& out = std::string(which) == "single" ? p->single : p->pair;
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        const Field piece = pieces.at(i);
        TemplateProcessing::Piece q{};
        if (piece.has("Sequence")) {
          const Field s = piece.at("Sequence");
          const std::string id = s.at("id").string();
          if (id != "A" && id != "B") throw s.at("id").error("must be A or B");
          q.is_sequence = true, q.second = id == "B", q.type_id = static_cast<std::int32_t>(s.at("type_id").integer());
        } else if (piece.has("SpecialToken")) {
          const Field s = piece.at("SpecialToken");
          q.is_sequence = false, q.special = s.at("id").string(), q.type_id = static_cast<std::int32_t>(s.at("type_id").integer());
          if (!p->special_tokens.count(q.special))
            throw s.at("id").error("\"" + q.special + "\" is not in special_tokens");
        } else {
          throw piece.error("must be {\"Sequence\": ...} or {\"SpecialToken\": ...}");
        }
        out.push_back(std::move(q));
      }
    }
    return p;
  }
  if (t == "BertProcessing") {
    auto p = std::make_unique<BertProcessing>();
    p->sep = read_token_pair(f.at("sep"));
    p->cls = read_token_pair(f.at("cls"));
    return p;
  }
  if (t == "RobertaProcessing") {
    auto p = std::make_unique<RobertaProcessing>();
    p->sep = read_token_pair(f.at("sep"));
    p->cls = read_token_pair(f.at("cls"));
    return p;
  }
  if (t == "ByteLevel") return std::make_unique<ByteLevelProcessing>();
  if (t == "Sequence") {
    auto p = std::make_unique<PostProcessorSequence>();
    const Field steps = f.at("processors");
    for (std::size_t i = 0; i < steps.size(); ++i) p->steps.push_back(read_post_processor(steps.at(i)));
    return p;
  }
  unsupported(type, "post-processor", "TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence");
}

// Only decoding needs it: a decoder attend lacks leaves the tokenizer encoding (decode()
// then says why it cannot).
std::unique_ptr<Decoder> read_decoder(const Field& f) {
  const Field type = f.at("type");
  const std::string t = type.string();
  if (t == "WordPiece") {
    auto d = std::make_unique<WordPieceDecoder>();
    d->prefix = f.string("prefix", "##");
    d->cleanup = f.boolean("cleanup", true);
    return d;
  }
  if (t == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (t == "Metaspace") {
    auto d = std::make_unique<MetaspaceDecoder>();
    if (f.has("replacement")) {
      d->replacement.clear();
      append_utf8(d->replacement, f.at("replacement").character());
    }
    if (f.has("prepend_scheme")) d->prepended = f.at("prepend_scheme").string() != "never";
    else d->prepended = f.boolean("add_prefix_space", true);
    return d;
  }
  if (t == "Replace") {
    const Field pattern = f.at("pattern");
    if (!pattern.has("String")) throw pattern.error("only {\"String\": …} patterns are supported in a decoder");
    auto d = std::make_unique<ReplaceDecoder>();
    d->pattern = pattern.at("String").string();
    d->content = f.at("content").string();
    return d;
  }
  if (t == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (t == "Fuse") return std::make_unique<FuseDecoder>();
  if (t == "Strip") {
    auto d = std::make_unique<StripDecoder>();
    append_utf8(d->content, f.at("content").character());
    d->start = static_cast<std::size_t>(f.at("start").integer());
    d->stop = static_cast<std::size_t>(f.at("stop").integer());
    return d;
  }
  if (t == "BPEDecoder") {
    auto d = std::make_unique<BpeDecoder>();
    d->suffix = f.string("suffix", "</w>");
    return d;
  }
  if (t == "Sequence") {
    auto d = std::make_unique<DecoderSequence>();
    const Field steps = f.at("decoders");
    for (std::size_t i = 0; i < steps.size(); ++i) d->steps.push_back(read_decoder(steps.at(i)));
    return d;
  }
  unsupported(type, "decoder", "WordPiece, ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, BPEDecoder, Sequence");
}

std::vector<AddedToken> read_added_tokens(const Field& f) {
  std::vector<AddedToken> tokens;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const Field t = f.at(i);
    AddedToken a;
    a.content = t.at("content").string();
    a.special = t.boolean("special", false);
    a.single_word = t.boolean("single_word", false);
    a.lstrip = t.boolean("lstrip", false);
    a.rstrip = t.boolean("rstrip", false);
    a.normalized = t.boolean("normalized", !a.special);
    tokens.push_back(std::move(a));
  }
  return tokens;
}

}  // namespace

bool reads_in_pieces(const HfTokenizer::Pipeline& p) {
  if ((p.normalizer && !p.normalizer->local()) || !p.pre_tokenizer || !p.pre_tokenizer->splits_at_spaces()) return false;
  for (const AddedToken& t : p.added.tokens()) {
    const std::string matched = t.normalized && p.normalizer ? p.normalizer->normalize(t.content) : t.content;
    if (t.rstrip || t.content.find(' ') != std::string::npos || matched.find(' ') != std::string::npos) return false;
  }
  return true;
}

std::shared_ptr<const HfTokenizer::Pipeline> read_tokenizer_json(const std::filesystem::path& path) {
  auto p = std::make_shared<HfTokenizer::Pipeline>();
  p->file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_of(p->file, ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  json j;
  try {
    SerdeDoubles sax(j);
    json::sax_parse(text.str(), &sax);
  } catch (const json::exception& e) {
    throw error_of(p->file, ": not valid JSON: ", json_reason(e));
  }
  const Field top(j, "", p->file);
  if (!j.is_object()) throw top.error("must be a JSON object (a tokenizer.json)");
  if (top.has("version") && top.at("version").string() != "1.0")
    throw top.at("version").error("\"" + top.at("version").string() + "\" is not a tokenizer.json version attend reads (1.0)");
  if (top.has("normalizer")) p->normalizer = read_normalizer(top.at("normalizer"));
  if (top.has("pre_tokenizer")) p->pre_tokenizer = read_pre_tokenizer(top.at("pre_tokenizer"));
  p->model = read_model(top.at("model"));
  if (top.has("post_processor")) p->post_processor = read_post_processor(top.at("post_processor"));
  if (top.has("decoder")) {
    try {
      p->decoder = read_decoder(top.at("decoder"));
    } catch (const Error& e) {
      p->decoder_unsupported = e.what();
    }
  }
  if (top.has("added_tokens")) p->added.add(read_added_tokens(top.at("added_tokens")), *p->model, p->normalizer.get());
  if (top.has("padding") && top.at("padding").has("pad_id")) {
    p->pad_id = top.at("padding").at("pad_id").id();
  } else {
    for (const char* pad : {"[PAD]", "<pad>"})
      if (p->pad_id < 0) p->pad_id = p->added.find(pad) >= 0 ? p->added.find(pad) : p->model->token_to_id(pad);
  }
  if (top.has("truncation") && top.at("truncation").has("max_length"))
    p->truncation_max_length = top.at("truncation").at("max_length").integer();
  p->reads_in_pieces = reads_in_pieces(*p);
  return p;
}

}  // namespace attend::runtime::hf
