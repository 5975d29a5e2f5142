// The models of `tokenizers` (tokenizer.json's "model"): each turns one word into tokens.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "text/hf/pipeline.hpp"
#include "text/hf/vocab.hpp"

namespace attend::runtime::hf {

// A model over a Vocab: the lookups every model shares.
class VocabModel : public Model {
 public:
  std::int32_t token_to_id(std::string_view token) const override { return vocab.find(token); }
  const std::string* id_to_token(std::int32_t id) const override { return vocab.token(id); }
  std::int64_t vocab_size() const override { return vocab.size(); }
  Vocab vocab;
};

// BERT's WordPiece: greedy longest match from the left, continuations marked "##"; a word
// with any part not in the vocabulary, or longer than max_input_chars_per_word
// characters, is one unk_token.
class WordPiece : public VocabModel {
 public:
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
  void tokenize(std::string_view word, std::vector<Token>& out) const override;
  std::int32_t unknown_id() const override { return vocab.find(unk_token); }
  std::string describe() const override;

 private:
  void unknown(std::vector<Token>& out) const;
};

// SentencePiece's Unigram: the segmentation with the highest total score (Viterbi);
// a character no token starts with costs the lowest score less 10 and becomes unk_id,
// consecutive ones fused into one token (whose string is the text it covers).
class Unigram : public VocabModel {
 public:
  // The vocabulary in id order with each token's score (a log probability).
  Unigram(std::vector<std::pair<std::string, double>> pieces, std::optional<std::int32_t> unk_id, bool byte_fallback);
  void tokenize(std::string_view word, std::vector<Token>& out) const override;
  std::int32_t unknown_id() const override { return unk_id_.value_or(-1); }
  std::string describe() const override;

 private:
  std::vector<double> scores_;
  std::optional<std::int32_t> unk_id_;
  bool byte_fallback_;
  double unk_score_;
  std::size_t max_token_bytes_ = 0;
};

// Byte-pair encoding: the word's characters merged pair by pair, lowest merge rank first.
class Bpe : public VocabModel {
 public:
  std::optional<std::string> unk_token, continuing_subword_prefix, end_of_word_suffix;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
  // The merges in rank order; throws attend::Error naming a token that is not in the
  // vocabulary.
  void set_merges(const std::vector<std::pair<std::string, std::string>>& merges);
  void tokenize(std::string_view word, std::vector<Token>& out) const override;
  std::int32_t unknown_id() const override { return unk_token ? vocab.find(*unk_token) : -1; }
  std::string describe() const override;

 private:
  struct Merge {
    std::uint32_t rank;
    std::int32_t new_id;
  };
  std::unordered_map<std::uint64_t, Merge> merges_;  // key: left id << 32 | right id
};

// A word is a token of the vocabulary or unk_token.
class WordLevel : public VocabModel {
 public:
  std::string unk_token = "<unk>";
  void tokenize(std::string_view word, std::vector<Token>& out) const override;
  std::int32_t unknown_id() const override { return vocab.find(unk_token); }
  std::string describe() const override { return "WordLevel"; }
};

}  // namespace attend::runtime::hf
