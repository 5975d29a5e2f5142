// The rules that change a row's logits before its log-softmax, as CTranslate2 applies
// them (src/decoding_utils.cc, apply_min_length in src/decoding.cc):
//   - min_length: end tokens are impossible before min_length generated tokens;
//   - repetition_penalty (CTRL, Keskar et al. 2019): each token already in the history
//     has its logit divided by the penalty, or multiplied when the logit is negative;
//   - no_repeat_ngram_size n: a token that would complete an n-gram already in the
//     history is impossible;
//   - disable_unk: the unknown token is impossible;
//   - suppress_sequences: a one-token sequence is always impossible; a longer one's last
//     token is impossible right after the history ends with the rest of it.
// "Impossible" is −∞ (CTranslate2 writes the lowest float: the same probability, 0).
// The history is the row's generated tokens, a CTranslate2 target prefix included.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "decoding/decoding.hpp"

namespace attend::runtime {

class LogitsRules {
 public:
  // For one decode call; reuses its memory (no allocation once warmed up).
  void reset(const DecodeOptions& options, std::span<const std::int32_t> end_ids, std::int32_t unk_id);

  // Whether any rule can change a row's logits at a step where the row has generated
  // `generated` tokens (prefix included) and its history holds `history` of them.
  bool active(std::int64_t generated, std::int64_t history) const;

  // Applies every rule to one row. `scratch` holds at least history.size() floats.
  void apply(float* logits, std::span<const std::int32_t> history, std::int64_t generated, float* scratch) const;
  // Whether the rules only forbid tokens here (no repetition penalty to apply): then the
  // row's log-probabilities can be renormalised in place instead of recomputed.
  bool only_forbids(std::int64_t history) const { return repetition_penalty_ == 1.0f || history == 0; }
  // Calls forbid(token) for every token the rules make impossible (maybe twice).
  template <class Forbid>
  void for_each_forbidden(std::span<const std::int32_t> history, std::int64_t generated, const Forbid& forbid) const;

 private:
  void penalize_repetitions(float* logits, std::span<const std::int32_t> history, float* scratch) const;

  std::span<const std::int32_t> end_ids_;
  std::int64_t min_length_ = 0;
  float repetition_penalty_ = 1.0f;
  std::int64_t ngram_ = 0;
  std::vector<std::int32_t> always_;                  // disable_unk and one-token sequences
  std::span<const std::vector<std::int32_t>> sequences_;  // the longer suppressed sequences are read from here
};

template <class Forbid>
void LogitsRules::for_each_forbidden(std::span<const std::int32_t> history, std::int64_t generated,
                                     const Forbid& forbid) const {
  if (generated < min_length_)
    for (std::int32_t id : end_ids_) forbid(id);
  for (std::int32_t id : always_) forbid(id);
  // The last n−1 tokens, wherever they occurred before followed by a token, forbid it.
  const auto L = static_cast<std::int64_t>(history.size());
  if (ngram_ > 0 && L >= ngram_) {
    const auto tail = history.subspan(static_cast<size_t>(L - ngram_ + 1));
    for (std::int64_t p = 0; p + ngram_ <= L; ++p)
      if (std::equal(tail.begin(), tail.end(), history.begin() + p)) forbid(history[p + ngram_ - 1]);
  }
  for (const auto& s : sequences_) {
    if (s.size() < 2 || history.size() < s.size() - 1) continue;
    if (std::equal(s.begin(), s.end() - 1, history.end() - static_cast<std::ptrdiff_t>(s.size() - 1))) forbid(s.back());
  }
}

}  // namespace attend::runtime
