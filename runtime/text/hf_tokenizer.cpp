#include "text/hf_tokenizer.hpp"

#include <algorithm>

#include "attend/error.hpp"
#include "text/hf/tokenizer_json.hpp"
#include "text/hf/utf8.hpp"

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

// Cuts the sequences to `limit` tokens in all, as tokenizers' "longest_first": a single
// sequence keeps its first tokens (its last, from the left); a pair cuts the longer one
// first, then both to halves (the first sequence's half rounded down unless it is the
// longer one).
bool truncate(TokenSequence& a, TokenSequence* b, std::size_t limit, bool left) {
  const std::size_t total = a.size() + (b ? b->size() : 0);
  if (total <= limit) return false;
  if (!b) {
    keep(a, limit, left);
    return true;
  }
  std::size_t n1 = a.size(), n2 = b->size();
  const bool swap = n1 > n2;
  if (swap) std::swap(n1, n2);
  n2 = n1 > limit ? n1 : std::max(n1, limit - n1);
  if (n1 + n2 > limit) n1 = limit / 2, n2 = n1 + limit % 2;
  if (swap) std::swap(n1, n2);
  keep(a, n1, left), keep(*b, n2, left);
  return true;
}

}  // namespace

HfTokenizer::HfTokenizer(std::shared_ptr<const Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}
HfTokenizer::~HfTokenizer() = default;

HfTokenizer HfTokenizer::load(const std::filesystem::path& tokenizer_json) {
  return HfTokenizer(hf::read_tokenizer_json(tokenizer_json));
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
  Encoding e;
  bool bad_a = false, bad_b = false;
  std::vector<TokenSequence> sequences{tokenize(p, hf::valid_utf8(a, bad_a), 0)};
  if (b) sequences.push_back(tokenize(p, hf::valid_utf8(*b, bad_b), 1));
  e.invalid_utf8 = bad_a || bad_b;

  if (options.max_length < 0) throw error_of("max_length ", options.max_length, ": must be ≥ 0 (0: no truncation)");
  if (options.max_length > 0) {
    const std::size_t added =
        options.add_special_tokens && p.post_processor ? p.post_processor->added_tokens(b != nullptr) : 0;
    const auto max_length = static_cast<std::size_t>(options.max_length);
    if (max_length < added)
      throw error_of("max_length ", max_length, " leaves no room: ", p.file, " adds ", added, " special tokens to ",
                     b ? "a pair" : "a text");
    e.truncated = truncate(sequences[0], b ? &sequences[1] : nullptr, max_length - added, options.truncate_left);
  }

  if (p.post_processor) sequences = p.post_processor->process(std::move(sequences), options.add_special_tokens);
  TokenSequence all;
  for (const TokenSequence& s : sequences) all.append(s);
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
