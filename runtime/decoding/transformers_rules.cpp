// The logits rules under transformers' semantics (transformers_rules.hpp): the history
// starts with the decoder start token; beam search changes the log-probabilities in place
// (no renormalisation), greedy search and sampling the logits (then their log-softmax);
// forced_eos leaves only the end token at a sentence's last step.
#include <limits>

#include "attend/ops/softmax.hpp"
#include "decoding/workspace.hpp"

namespace attend::runtime {

void Workspace::apply_transformers_rules(std::int64_t t, std::int64_t rows) {
  const auto& io = plan_->io();
  const ModelConfig& c = plan_->model().config();
  float* logits = exec_.buffer<float>(io.logits);
  float* log_probs = exec_.buffer<float>(io.log_probs);
  const bool beam = options_->beam_size > 1;
  shifted_ = false;
  if (history_.size() < static_cast<std::size_t>(T_ + 1)) history_.resize(static_cast<std::size_t>(T_ + 1));
  history_[0] = c.decoder_start_id;
  for (std::int64_t r = 0; r < rows; ++r) {
    row_shift_[r] = 0;
    const std::int32_t sentence = live_[cur_][r].sentence;
    const bool force_end = options_->forced_eos_id >= 0 && last_step_[sentence];
    const bool rules = rules_.active(t, t + 1);
    if (!rules && !force_end) continue;
    std::copy_n(tokens_[cur_].data() + r * T_, t, history_.begin() + 1);
    float* row = (beam ? log_probs : logits) + r * vocab_;
    if (rules) rules_.apply(row, {history_.data(), static_cast<std::size_t>(t + 1)}, t, rules_scratch_.data());
    if (force_end) {
      std::fill_n(row, vocab_, -std::numeric_limits<float>::infinity());
      row[options_->forced_eos_id] = 0.0f;
    }
    if (!beam) ops::log_softmax(ops::ConstMatrix(row, 1, vocab_), ops::Matrix(log_probs + r * vocab_, 1, vocab_), 1);
  }
}

}  // namespace attend::runtime
