// The pieces of a Hugging Face tokenizer pipeline, as `tokenizers` runs them on a text:
//
//   added tokens   split out of the raw text (then again out of the normalized text)
//   Normalizer     text → text (lowercase, accents, Unicode forms, sentencepiece's charsmap)
//   PreTokenizer   splits the normalized text into words (white space, punctuation, ...)
//   Model          a word → tokens (WordPiece, Unigram, BPE, WordLevel)
//   PostProcessor  adds the special tokens and type ids ([CLS] A [SEP] B [SEP])
//
// Each kind is an interface here; the kinds `tokenizers` defines implement them in
// normalizers.cpp, pre_tokenizers.cpp, the model files and post_processors.cpp, and
// tokenizer_json.cpp builds them from a tokenizer.json. All are immutable after loading,
// so one tokenizer serves concurrent encodes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attend::runtime::hf {

// A stretch of the text on its way through the pipeline: text still to be normalized,
// split and tokenized, or an added token found in it (token_id ≥ 0), which no later
// step touches.
struct Split {
  std::string text;
  std::int32_t token_id = -1;
  bool at_text_start = false;  // begins the text (nothing was split off before it)
};

struct Token {
  std::int32_t id;
  std::string value;
};

// Tokens with their type (segment) ids: one input sequence, or the merged result.
struct TokenSequence {
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> type_ids;
  std::vector<std::string> tokens;
  // The input text these tokens came from (0: the first, 1: the pair's second; HF's
  // sequence_ids), -1 for special tokens a post-processor adds. Post-processors move
  // whole sequences, so the tag stays with them.
  std::int32_t sequence = -1;

  std::size_t size() const { return ids.size(); }
  void append(const TokenSequence& other);
  void truncate(std::size_t n);
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual std::string normalize(std::string_view text) const = 0;  // valid UTF-8 in and out
  virtual std::string describe() const = 0;
  // Whether a text cut where text_pieces.hpp cuts normalizes as its two pieces do: true
  // of the normalizers that work character by character or grapheme by grapheme.
  virtual bool local() const { return true; }
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits each split that is not an added token; splits left empty are dropped.
  virtual void pre_tokenize(std::vector<Split>& splits) const = 0;
  virtual std::string describe() const = 0;
  // Whether its words never span such a cut (text_pieces.hpp), whatever the text around:
  // it splits at white space before anything else.
  virtual bool splits_at_spaces() const { return false; }
};

class Model {
 public:
  virtual ~Model() = default;
  // Appends the tokens of one (non-empty) word.
  virtual void tokenize(std::string_view word, std::vector<Token>& out) const = 0;
  virtual std::int32_t token_to_id(std::string_view token) const = 0;  // -1 if absent
  virtual const std::string* id_to_token(std::int32_t id) const = 0;    // null if absent
  virtual std::int32_t unknown_id() const = 0;                          // the unknown token's id; -1 if none
  virtual std::int64_t vocab_size() const = 0;
  virtual std::string describe() const = 0;
};

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // How many tokens process() adds to one sequence or a pair.
  virtual std::size_t added_tokens(bool pair) const = 0;
  // One or two sequences (their type ids 0 and 1 on entry) → the sequences to concatenate.
  virtual std::vector<TokenSequence> process(std::vector<TokenSequence> sequences, bool add_special_tokens) const = 0;
  virtual std::string describe() const = 0;
};

// A part of a split's text: byte offset and length.
struct Range {
  std::size_t begin, size;
};

// Replaces every split that is not an added token by its parts, the ranges of its text
// that `find_parts(text)` returns; empty parts are dropped. A part begins the text if its
// split did and it starts at the split's first byte.
template <class F>
void split_each(std::vector<Split>& splits, F&& find_parts) {
  std::vector<Split> out;
  out.reserve(splits.size());
  for (Split& s : splits) {
    if (s.token_id >= 0) {
      out.push_back(std::move(s));
      continue;
    }
    for (const Range& r : find_parts(std::string_view(s.text))) {
      if (r.size == 0) continue;
      out.push_back(Split{s.text.substr(r.begin, r.size), -1, s.at_text_start && r.begin == 0});
    }
  }
  splits = std::move(out);
}

// The descriptions of a Sequence's steps, comma-separated.
template <class Steps>
std::string describe_steps(const Steps& steps) {
  std::string d;
  for (const auto& step : steps) d += (d.empty() ? "" : ", ") + step->describe();
  return d;
}

}  // namespace attend::runtime::hf
