#include "decoding/logits_rules.hpp"

#include <algorithm>
#include <limits>

namespace attend::runtime {
namespace {
constexpr float kImpossible = -std::numeric_limits<float>::infinity();
}

void LogitsRules::reset(const DecodeOptions& o, std::span<const std::int32_t> end_ids, std::int32_t unk_id) {
  end_ids_ = end_ids;
  min_length_ = o.min_length;
  repetition_penalty_ = o.repetition_penalty;
  ngram_ = o.no_repeat_ngram_size;
  sequences_ = o.suppress_ids;
  always_.clear();
  if (o.disable_unk) always_.push_back(unk_id);
  for (const auto& s : o.suppress_ids)
    if (s.size() == 1) always_.push_back(s[0]);
}

bool LogitsRules::active(std::int64_t generated, std::int64_t history) const {
  return generated < min_length_ || !always_.empty() || !sequences_.empty() ||
         (repetition_penalty_ != 1.0f && history > 0) || (ngram_ > 0 && history >= ngram_);
}

void LogitsRules::apply(float* logits, std::span<const std::int32_t> history, std::int64_t generated,
                        float* scratch) const {
  if (repetition_penalty_ != 1.0f) penalize_repetitions(logits, history, scratch);
  for_each_forbidden(history, generated, [&](std::int32_t id) { logits[id] = kImpossible; });
}

// Every occurrence reads the logit as it was, so a token seen twice is penalised once.
void LogitsRules::penalize_repetitions(float* logits, std::span<const std::int32_t> history, float* scratch) const {
  for (size_t j = 0; j < history.size(); ++j) scratch[j] = logits[history[j]];
  for (size_t j = 0; j < history.size(); ++j) {
    const float v = scratch[j];
    logits[history[j]] = v < 0 ? v * repetition_penalty_ : v / repetition_penalty_;
  }
}

}  // namespace attend::runtime
