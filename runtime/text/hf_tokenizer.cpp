#include "text/hf_tokenizer.hpp"

#include <algorithm>

#include "attend/error.hpp"
#include "text/hf/tokenizer_json.hpp"
#include "text/hf/vocab_files.hpp"
#include "text/hf/utf8.hpp"
#include "text/text_pieces.hpp"

namespace attend::runtime {
namespace {

using hf::TokenSequence;

// One text through added tokens, normalizer, pre-tokenizer and model.
TokenSequence tokenize(const HfTokenizer::Pipeline& p, const std::string& text, std::int32_t type_id) {
  std::vector<hf::Split> splits = p.added.extract_and_normalize(text, p.normalizer.get());
  if (p.pre_tokenizer) p.pre_tokenizer->pre_tokenize(splits);
  TokenSequence out;
  std::vector<hf::Token> tokens;
  for (hf::Split& s : splits) {
    tokens.clear();
    if (s.token_id >= 0)
      tokens.push_back({s.token_id, std::move(s.text)});
    else
      p.model->tokenize(s.text, tokens);
    for (hf::Token& t : tokens) {
      out.ids.push_back(t.id);
      out.type_ids.push_back(type_id);
      out.tokens.push_back(std::move(t.value));
    }
  }
  return out;
}

// Keeps `n` tokens of a sequence: its first, or (from the left) its last.
void keep(TokenSequence& s, std::size_t n, bool left) {
  if (!left || s.size() <= n) return s.truncate(n);
  const auto cut = static_cast<std::ptrdiff_t>(s.size() - n);
  s.ids.erase(s.ids.begin(), s.ids.begin() + cut);
  s.type_ids.erase(s.type_ids.begin(), s.type_ids.begin() + cut);
  s.tokens.erase(s.tokens.begin(), s.tokens.begin() + cut);
}

// Pieces of about this many bytes: small enough that a truncated text costs little more
// than what it keeps, large enough that a short text is one piece.
constexpr std::size_t kPieceBytes = 4096;

// One text's tokens: all of them, or, with a `cap`, its first `cap` + 1 at most — read
// piece by piece where the pipeline allows it (text_pieces.hpp), so that a long text
// costs what truncation keeps. `count` (if given) gets the number of tokens of the whole
// text, counted piece by piece without keeping them.
TokenSequence tokenize_text(const HfTokenizer::Pipeline& p, std::string_view text, std::int32_t type_id,
                            std::size_t cap, bool& invalid_utf8, std::size_t* count = nullptr) {
  TokenSequence out;
  std::size_t total = 0;
  const std::size_t piece_bytes = p.reads_in_pieces && (cap > 0 || count) ? kPieceBytes : text.size();
  for_each_text_piece(text, piece_bytes, [&](std::size_t begin, std::size_t end) {
    bool bad = false;
    TokenSequence piece = tokenize(p, hf::valid_utf8(text.substr(begin, end - begin), bad), type_id);
    invalid_utf8 = invalid_utf8 || bad;
    total += piece.size();
    if (cap == 0 || out.size() <= cap) out.append(piece);
    return count != nullptr || cap == 0 || out.size() <= cap;
  });
  if (cap > 0) out.truncate(std::min(out.size(), cap + 1));
  if (count) *count = total;
  if (!invalid_utf8 && piece_bytes < text.size()) invalid_utf8 = !hf::is_valid_utf8(text);  // the pieces not read too
  return out;
}

// How many tokens of each sequence tokenizers' "longest_first" keeps within `limit`: a
// single sequence its first tokens; a pair cuts the longer one first, then both to
// halves (the first sequence's half rounded down unless it is the longer one).
std::pair<std::size_t, std::size_t> longest_first(std::size_t n1, std::size_t n2, bool pair, std::size_t limit) {
  if (!pair) return {std::min(n1, limit), 0};
  if (n1 + n2 <= limit) return {n1, n2};
  const bool swap = n1 > n2;
  if (swap) std::swap(n1, n2);
  n2 = n1 > limit ? n1 : std::max(n1, limit - n1);
  if (n1 + n2 > limit) n1 = limit / 2, n2 = n1 + limit % 2;
  if (swap) std::swap(n1, n2);
  return {n1, n2};
}

}  // namespace

HfTokenizer::HfTokenizer(std::shared_ptr<const Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}
HfTokenizer::~HfTokenizer() = default;

HfTokenizer HfTokenizer::load(const std::filesystem::path& file, const std::string& model_type) {
  if (file.extension() == ".json") return HfTokenizer(hf::read_tokenizer_json(file));
  return HfTokenizer(hf::read_vocab_files(file, model_type));
}

Encoding HfTokenizer::encode(std::string_view text, const TokenizeOptions& options) const {
  return encode_sequences(text, nullptr, options);
}

Encoding HfTokenizer::encode_pair(std::string_view a, std::string_view b, const TokenizeOptions& options) const {
  return encode_sequences(a, &b, options);
}

Encoding HfTokenizer::encode_sequences(std::string_view a, const std::string_view* b,
                                       const TokenizeOptions& options) const {
  const Pipeline& p = *pipeline_;
  if (options.max_length < 0) throw error_of("max_length ", options.max_length, ": must be ≥ 0 (0: no truncation)");
  const std::size_t added =
      options.add_special_tokens && p.post_processor ? p.post_processor->added_tokens(b != nullptr) : 0;
  const auto max_length = static_cast<std::size_t>(options.max_length);
  if (max_length > 0 && max_length < added)
    throw error_of("max_length ", max_length, " leaves no room: ", p.file, " adds ", added, " special tokens to ",
                   b ? "a pair" : "a text");
  // With truncation, each sequence is read until it has one token more than the limit
  // (which says it is cut): longest_first needs no more — except for a pair that both
  // pass it, with an odd limit, whose longer sequence keeps the extra token: then both
  // are counted to their ends, piece by piece. Truncating from the left keeps a text's
  // last tokens, which only the whole text gives: it is read whole.
  const bool left = options.truncate_left;
  const std::size_t limit = max_length > 0 ? max_length - added : 0;
  const std::size_t cap = max_length > 0 && !left ? std::max<std::size_t>(limit, 1) : 0;
  Encoding e;
  std::vector<TokenSequence> sequences{tokenize_text(p, a, 0, cap, e.invalid_utf8)};
  if (b) sequences.push_back(tokenize_text(p, *b, 1, cap, e.invalid_utf8));
  for (std::size_t k = 0; k < sequences.size(); ++k) sequences[k].sequence = static_cast<std::int32_t>(k);
  if (max_length > 0) {
    std::size_t n1 = sequences[0].size(), n2 = b ? sequences[1].size() : 0;
    if (b && cap > 0 && n1 > limit && n2 > limit && limit % 2 == 1) {
      bool ignored = false;
      tokenize_text(p, a, 0, cap, ignored, &n1);
      tokenize_text(p, *b, 1, cap, ignored, &n2);
    }
    e.truncated = n1 + n2 > limit;
    const auto [keep1, keep2] = longest_first(n1, n2, b != nullptr, limit);
    keep(sequences[0], keep1, left);
    if (b) keep(sequences[1], keep2, left);
  }

  if (p.post_processor) sequences = p.post_processor->process(std::move(sequences), options.add_special_tokens);
  TokenSequence all;
  for (const TokenSequence& s : sequences) {
    all.append(s);
    e.sequence_ids.insert(e.sequence_ids.end(), s.size(), s.sequence);
  }
  e.ids = std::move(all.ids), e.type_ids = std::move(all.type_ids), e.tokens = std::move(all.tokens);
  return e;
}

std::string HfTokenizer::decode(const std::vector<std::int32_t>& ids, bool skip_special_tokens) const {
  const Pipeline& p = *pipeline_;
  if (!p.decoder_unsupported.empty()) throw error_of("cannot decode: ", p.decoder_unsupported);
  std::vector<std::string> tokens;
  for (const std::int32_t id : ids) {
    if (skip_special_tokens) {
      const auto& added = p.added.tokens();
      if (std::any_of(added.begin(), added.end(), [&](const hf::AddedToken& t) { return t.special && t.id == id; })) continue;
    }
    tokens.push_back(id_to_token(id));
  }
  std::string text;
  if (p.decoder) {
    for (const std::string& piece : p.decoder->decode_chain(std::move(tokens))) text += piece;
  } else {
    for (const std::string& t : tokens) text.append(text.empty() ? "" : " ").append(t);
  }
  return text;
}

std::int32_t HfTokenizer::token_to_id(std::string_view token) const {
  const std::int32_t added = pipeline_->added.find(token);
  return added >= 0 ? added : pipeline_->model->token_to_id(token);
}

std::int32_t HfTokenizer::unknown_id() const { return pipeline_->model->unknown_id(); }

const std::string& HfTokenizer::id_to_token(std::int32_t id) const {
  if (const std::string* t = pipeline_->added.content(id)) return *t;
  if (const std::string* t = pipeline_->model->id_to_token(id)) return *t;
  throw error_of(pipeline_->file, ": no token has id ", id);
}

std::int64_t HfTokenizer::vocab_size() const {
  return std::max<std::int64_t>(pipeline_->model->vocab_size(), pipeline_->added.max_id() + 1);
}

std::int32_t HfTokenizer::pad_id() const { return pipeline_->pad_id; }

std::int64_t HfTokenizer::truncation_max_length() const { return pipeline_->truncation_max_length; }

bool HfTokenizer::reads_in_pieces() const { return pipeline_->reads_in_pieces; }

std::string HfTokenizer::describe() const {
  const Pipeline& p = *pipeline_;
  std::string d = p.model->describe();
  std::string parts;
  const auto add = [&](const std::string& s) { parts += (parts.empty() ? "" : ", ") + s; };
  if (p.normalizer) add(p.normalizer->describe());
  if (p.pre_tokenizer) add(p.pre_tokenizer->describe());
  if (p.post_processor) add(p.post_processor->describe());
  return parts.empty() ? d : d + ": " + parts;
}

}  // namespace attend::runtime
