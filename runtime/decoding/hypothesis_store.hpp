// Ended hypotheses per sentence, in memory reserved when the workspace is created.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "decoding/decoding.hpp"

namespace attend::runtime {

class HypothesisStore {
 public:
  HypothesisStore(std::int64_t max_sentences, std::int64_t per_sentence, std::int64_t max_length);

  void reset(std::int64_t sentences);
  std::int64_t count(std::int64_t sentence) const { return count_[sentence]; }
  // Copies the hypothesis in; if the sentence's slots are full, it replaces the worst
  // stored one when its score is better.
  void add(std::int64_t sentence, std::span<const std::int32_t> tokens, std::span<const float> token_log_probs,
           float score, float log_prob, bool finished);
  // The best `n` hypotheses of a sentence, best first (allocates: call after decoding).
  void collect(std::int64_t sentence, std::int64_t n, SentenceResult& out) const;

 private:
  struct Slot {
    float score = 0, log_prob = 0;
    std::int32_t length = 0, log_probs = 0;
    bool finished = false;
  };
  std::int64_t per_sentence_, max_length_;
  std::vector<Slot> slots_;
  std::vector<std::int32_t> tokens_;
  std::vector<float> log_probs_;
  std::vector<std::int64_t> count_;
};

}  // namespace attend::runtime
