// Decoding as transformers' generate() does it, for Hugging Face directories (the other
// rule set beside CTranslate2's, which decoding.hpp describes). What differs:
//   - the rules (min_length, no_repeat_ngram_size, repetition_penalty, bad words =
//     suppressed sequences) see the decoder start token as the first token of the history;
//   - beam search applies them to the log-probabilities without renormalising them
//     (generate()'s logits processors run after the log-softmax); greedy search and
//     sampling apply them to the logits, as generate() does;
//   - forced_eos: at the length cap the end token is the only token left (log p 0), so a
//     hypothesis cut at max_length ends with it (Marian, BART, mBART);
//   - beam search keeps the num_beams best finished hypotheses (by Σ log p /
//     length^length_penalty, the length counting the end token) and goes on while a running
//     beam may still beat the worst of them: early_stopping 0 (false) estimates the best
//     a running beam can reach at the current length, 2 ("never") at max_length when
//     length_penalty > 0, 1 (true) stops once num_beams have finished.
// Options count generated tokens, as everywhere in attend: generate()'s max_length N
// (which counts the decoder start token) is max_length N − 1 here, min_length M is M − 1.
#pragma once

#include <cstdint>
#include <vector>

#include "decoding/search.hpp"

namespace attend::runtime {

// Per sentence: the normalised scores of the (at most num_beams) finished hypotheses kept.
class TransformersBeamState {
 public:
  void reset(std::int64_t sentences, std::int64_t beam, std::int64_t max_length);
  // Keeps `score` if fewer than num_beams are kept or it beats the worst; whether it did.
  bool admit(std::int32_t sentence, float score);
  bool full(std::int32_t sentence) const { return count_[sentence] == beam_; }
  float worst(std::int32_t sentence) const;
  std::int64_t max_length() const { return max_length_; }

 private:
  std::int64_t beam_ = 1, max_length_ = 0;
  std::vector<float> scores_;            // [sentence × beam]
  std::vector<std::int64_t> count_;
};

// Beam search with generate()'s rules (see the top of this file).
std::int64_t transformers_beam_select(const SearchInput& in, BeamScratch& scratch, TransformersBeamState& state,
                                      Selection* next);

}  // namespace attend::runtime
