#include "encoder/encoder_workspace.hpp"

#include <algorithm>

#include "attend/error.hpp"
#include "model/token_positions.hpp"

namespace attend::runtime {

EncoderWorkspace::EncoderWorkspace(std::shared_ptr<const EncoderPlan> plan)
    : plan_(std::move(plan)),
      memory_(plan_->arena_bytes(), plan_->steps().size()),
      exec_(*plan_, memory_.arena()),
      step_costs_(plan_->steps().size()) {}

void EncoderWorkspace::reset_statistics() {
  memory_.reset_step_seconds();
  std::fill(step_costs_.begin(), step_costs_.end(), EncoderStepCost{});
  counters_ = {};
}

void EncoderWorkspace::validate(std::span<const SequenceRef> batch) const {
  const EncoderLimits& l = plan_->limits();
  const EncoderConfig& c = plan_->model().config();
  if (static_cast<std::int64_t>(batch.size()) > l.max_batch)
    throw error_of("batch of ", batch.size(), " sequences exceeds the plan's max_batch ", l.max_batch);
  std::int64_t tokens = 0;
  for (size_t b = 0; b < batch.size(); ++b) {
    const SequenceRef& s = batch[b];
    const auto n = static_cast<std::int64_t>(s.ids.size());
    if (n == 0) throw error_of("sequence ", b, " is empty: an encoder needs at least one token");
    if (n > l.max_length) throw error_of("sequence ", b, " has ", n, " tokens, more than the plan's max_length ", l.max_length);
    if (!s.types.empty() && s.types.size() != s.ids.size())
      throw error_of("sequence ", b, ": ", s.types.size(), " token types for ", n, " tokens");
    for (std::int64_t i = 0; i < n; ++i) {
      if (s.ids[i] < 0 || s.ids[i] >= c.vocab_size)
        throw error_of("sequence ", b, ": token ", i, " has id ", s.ids[i], ", outside the vocabulary [0, ", c.vocab_size, ")");
      if (!s.types.empty() && c.type_vocab_size > 0 && (s.types[i] < 0 || s.types[i] >= c.type_vocab_size))
        throw error_of("sequence ", b, ": token ", i, " has type ", s.types[i], "; the model has ", c.type_vocab_size,
                       " token type(s)");
    }
    tokens += n;
  }
  if (tokens > l.max_tokens) throw error_of("batch of ", tokens, " tokens exceeds the plan's max_tokens ", l.max_tokens);
}

void EncoderWorkspace::fill_inputs(std::span<const SequenceRef> batch) {
  const auto& io = plan_->io();
  const EncoderConfig& c = plan_->model().config();
  std::int32_t* tokens = exec_.buffer<std::int32_t>(io.tokens);
  std::int32_t* positions = exec_.buffer<std::int32_t>(io.positions);
  std::int32_t* types = exec_.buffer<std::int32_t>(io.types);
  std::int32_t* starts = exec_.buffer<std::int32_t>(io.starts);
  std::int32_t at = 0;
  for (size_t b = 0; b < batch.size(); ++b) {
    starts[b] = at;
    const SequenceRef& s = batch[b];
    TokenPositions numbering(c.position_offset, c.pad_positions, c.pad_id);
    for (size_t i = 0; i < s.ids.size(); ++i, ++at) {
      tokens[at] = s.ids[i];
      positions[at] = numbering.next(s.ids[i]);
      types[at] = s.types.empty() || c.type_vocab_size == 0 ? 0 : s.types[i];  // (no type embeddings: unused)
    }
  }
  starts[batch.size()] = at;
  shape_ = {at, static_cast<std::int64_t>(batch.size())};
}

void EncoderWorkspace::trace_attention(const SequenceRef& sequence, AttentionCapture& capture) {
  validate({&sequence, 1});
  const ops::IsaScope isa(plan_->model().isa());  // every op at the model's kernels
  const EncoderConfig& c = plan_->model().config();
  const auto n = static_cast<std::int64_t>(sequence.ids.size());
  capture.encoder_self.reset(c.layers, c.num_heads, n, n);
  fill_inputs({&sequence, 1});
  shape_.capture = &capture;
  exec_.run(EncoderPhase::body, shape_);
  shape_.capture = nullptr;
}

void EncoderWorkspace::run(std::span<const SequenceRef> batch, const EncoderHeads& heads) {
  validate(batch);
  const ops::IsaScope isa(plan_->model().isa());  // every op of the batch at the model's kernels
  const EncoderConfig& c = plan_->model().config();
  fill_inputs(batch);
  shape_.normalize = heads.normalize < 0 ? c.normalize : heads.normalize > 0;
  if (batch.empty()) return;
  double* clock = memory_.step_clock(profiling_);
  EncoderStepCost* costs = profiling_ ? step_costs_.data() : nullptr;
  exec_.run(EncoderPhase::body, shape_, clock, costs);
  const bool pooler = (heads.pooler || (heads.logits && c.classifier == ClassifierHead::pooled)) && c.pooler;
  if (pooler) exec_.run(EncoderPhase::pooler, shape_, clock, costs);
  if (heads.embedding) exec_.run(EncoderPhase::embedding, shape_, clock, costs);
  if (heads.logits && c.classifier != ClassifierHead::none) exec_.run(EncoderPhase::classifier, shape_, clock, costs);
  ++counters_.batches;
  counters_.sequences += shape_.sequences;
  counters_.tokens += shape_.tokens;
}

ops::ConstMatrix EncoderWorkspace::hidden(std::int64_t b) const {
  const std::int32_t* starts = exec_.buffer<std::int32_t>(plan_->io().starts);
  const ops::Matrix all = exec_.matrix(plan_->io().hidden, shape_.tokens);
  return {all.row(starts[b]), starts[b + 1] - starts[b], all.cols, all.ld};
}

std::span<const float> EncoderWorkspace::row(int buffer, std::int64_t b) const {
  if (buffer < 0) return {};
  const ops::Matrix m = exec_.matrix(buffer, shape_.sequences);
  return {m.row(b), static_cast<size_t>(m.cols)};
}

std::span<const float> EncoderWorkspace::pooler(std::int64_t b) const { return row(plan_->io().pooler, b); }
std::span<const float> EncoderWorkspace::embedding(std::int64_t b) const { return row(plan_->io().embedding, b); }
std::span<const float> EncoderWorkspace::logits(std::int64_t b) const { return row(plan_->io().logits, b); }

}  // namespace attend::runtime
