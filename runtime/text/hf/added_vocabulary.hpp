// Added tokens ([CLS], <mask>, tokens added after training): found in the text before the
// model runs, as `tokenizers` finds them — those with normalized = false in the raw text,
// the others in the normalized text — the leftmost longest match first.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "text/hf/pipeline.hpp"

namespace attend::runtime::hf {

struct AddedToken {
  std::string content;
  std::int32_t id = -1;
  bool single_word = false;  // only where no word character touches it
  bool lstrip = false;       // takes the white space on its left
  bool rstrip = false;       // and on its right
  bool normalized = true;    // matched in the normalized text (else in the raw text)
  bool special = false;
};

class AddedVocabulary {
 public:
  // The tokens, with their ids assigned as `tokenizers` assigns them when it loads a
  // tokenizer.json (the model's id for a token it has, else the next free id).
  void add(std::vector<AddedToken> tokens, const Model& model, const Normalizer* normalizer);

  // The text split at the added tokens, the rest normalized: the splits the
  // pre-tokenizer receives (none for an empty text).
  std::vector<Split> extract_and_normalize(std::string_view text, const Normalizer* normalizer) const;

  std::int32_t find(std::string_view content) const;  // -1 if not an added token
  const std::string* content(std::int32_t id) const;
  std::int32_t max_id() const;  // -1 if none
  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  struct Pattern {
    std::string text;   // the content, normalized for normalized tokens
    std::size_t token;  // index in tokens_
  };
  // Patterns by first byte, longest first.
  struct PatternSet {
    std::vector<Pattern> patterns;
    std::array<std::pair<std::size_t, std::size_t>, 256> by_first_byte{};  // [begin, end) in patterns
    void index();
  };
  // Splits each split that is not a token yet at the matches of `set`.
  void split_at(std::vector<Split>& splits, const PatternSet& set) const;

  std::vector<AddedToken> tokens_;
  PatternSet raw_, normalized_;
};

}  // namespace attend::runtime::hf
