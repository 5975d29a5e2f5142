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

// Cuts the sequences to `limit` tokens in all, as tokenizers' "longest_first": a single
// sequence keeps its first tokens; a pair cuts the longer one first, then both to halves
// (the first sequence's half rounded down unless it is the longer one).
bool truncate(TokenSequence& a, TokenSequence* b, std::size_t limit) {
  const std::size_t total = a.size() + (b ? b->size() : 0);
  if (total <= limit) return false;
  if (!b) {
    a.truncate(limit);
    return true;
  }
  std::size_t n1 = a.size(), n2 = b->size();
  const bool swap = n1 > n2;
  if (swap) std::swap(n1, n2);
  n2 = n1 > limit ? n1 : std::max(n1, limit - n1);
  if (n1 + n2 > limit) n1 = limit / 2, n2 = n1 + limit % 2;
  if (swap) std::swap(n1, n2);
  a.truncate(n1), b->truncate(n2);
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
  for (std::size_t k = 0; k < sequences.size(); ++k) sequences[k].sequence = static_cast<std::int32_t>(k);
  e.invalid_utf8 = bad_a || bad_b;

  if (options.max_length < 0) throw error_of("max_length ", options.max_length, ": must be ≥ 0 (0: no truncation)");
  if (options.max_length > 0) {
    const std::size_t added =
        options.add_special_tokens && p.post_processor ? p.post_processor->added_tokens(b != nullptr) : 0;
    const auto max_length = static_cast<std::size_t>(options.max_length);
    if (max_length < added)
      throw error_of("max_length ", max_length, " leaves no room: ", p.file, " adds ", added, " special tokens to ",
                     b ? "a pair" : "a text");
    e.truncated = truncate(sequences[0], b ? &sequences[1] : nullptr, max_length - added);
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
