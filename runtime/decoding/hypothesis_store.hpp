// Registered hypotheses per sentence, in memory reserved before decoding starts.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "decoding/decoding.hpp"

namespace attend::runtime {

// Where a hypothesis' last token was chosen: the step and the live row it continued
// (the driver follows row parents back from there to rebuild its attention).
struct HypothesisTrace {
  std::int32_t step = 0, row = 0;
};

class HypothesisStore {
 public:
  HypothesisStore(std::int64_t max_sentences, std::int64_t per_sentence, std::int64_t max_length);

  // Empties the first `sentences` sentences, keeping `per_sentence` best hypotheses each
  // (grows the reservation if needed: call before the decode loop).
  void reset(std::int64_t sentences, std::int64_t per_sentence);
  std::int64_t count(std::int64_t sentence) const { return count_[sentence]; }
  // Copies the hypothesis in (its last token included, `ended` if it is an end token);
  // if the sentence's slots are full, it replaces the worst stored one when its score is
  // better.
  void add(std::int64_t sentence, std::span<const std::int32_t> tokens, std::span<const float> token_log_probs,
           float score, bool ended, HypothesisTrace trace);
  // The best `n` hypotheses of a sentence, best first, with their traces; the end token
  // is left out of `tokens` unless `keep_end_token` (allocates: call after decoding).
  void collect(std::int64_t sentence, std::int64_t n, bool keep_end_token, SentenceResult& out,
               std::vector<HypothesisTrace>& traces) const;

 private:
  struct Slot {
    float score = 0;
    std::int32_t length = 0;
    bool ended = false;
    HypothesisTrace trace;
  };
  std::int64_t per_sentence_, max_length_;
  std::vector<Slot> slots_;
  std::vector<std::int32_t> tokens_;
  std::vector<float> log_probs_;
  std::vector<std::int64_t> count_;
};

}  // namespace attend::runtime
