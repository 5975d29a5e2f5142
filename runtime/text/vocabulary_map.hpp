// CTranslate2's vocabulary map (vmap.txt in a model directory, used with use_vmap):
// lines "<source n-gram>\t<target token> <target token> …" that say which target tokens
// a source n-gram may produce; a line whose n-gram is empty lists tokens always allowed.
// Decoding with it restricts each output to the candidates of its source — fewer
// choices, as CTranslate2 uses it to shrink the output layer of large vocabularies.
//
// The candidates are CTranslate2's (src/vocabulary_map.cc): the tokens of every n-gram
// of the source's tokens that has a line, the always-allowed ones, the target prefix,
// and the unknown, start and end tokens. Unlike CTranslate2, which gives a batch the
// union of its sentences' candidates, attend gives each sentence its own, so that a
// result never depends on its batch-mates.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace attend::runtime {

class VocabularyMap {
 public:
  // `text`: the file's content; every line is valid. `target_id`: a target token's id,
  // the unknown token's for a token not in the vocabulary (CTranslate2's
  // Vocabulary::to_id). `always`: the unknown, start and end token ids.
  VocabularyMap(const std::string& text, const std::function<std::int32_t(const std::string&)>& target_id,
                std::vector<std::int32_t> always);

  // The sorted, distinct target ids a sentence with these source tokens (the caller's,
  // without the special tokens the model adds) and this target prefix may produce.
  std::vector<std::int32_t> candidates(const std::vector<std::string>& source,
                                       const std::vector<std::int32_t>& target_prefix) const;

  std::size_t rules() const;  // lines read (for ModelInfo)

 private:
  std::vector<std::int32_t> always_;  // sorted
  // rules_[n − 1]: the n-grams (tokens joined by spaces) with a line.
  std::vector<std::unordered_map<std::string, std::vector<std::int32_t>>> rules_;
};

}  // namespace attend::runtime
