// The decoding driver: encode the batch, then step the decoder, letting the search pick
// which (parent row, token) pairs go on, until every sentence is done or max_length.
#include "decoding/workspace.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "attend/error.hpp"

namespace attend::runtime {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t store_capacity(const PlanLimits& l) { return l.beam_size == 1 ? 1 : 2 * l.beam_size; }

// Whether every value is finite: an exponent of all ones (NaN, ±∞) plus one carries into
// the sign bit. Integer arithmetic, so the compiler vectorises the loop; the logits are
// still in cache, and this costs well under 1% of a decoder step.
bool all_finite(const float* x, std::int64_t n) {
  std::uint32_t any = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, x + i, 4);
    any |= (bits & 0x7f800000u) + 0x00800000u;
  }
  return (any & 0x80000000u) == 0;
}

}  // namespace

void DecodeOptions::validate(const PlanLimits& l) const {
  auto fail = [](const char* what, auto value, const std::string& why) { throw error_of("decoding option ", what, " = ", value, ": ", why); };
  if (beam_size < 1) fail("beam_size", beam_size, "must be ≥ 1");
  if (beam_size > l.beam_size) fail("beam_size", beam_size, "exceeds the plan's beam limit " + std::to_string(l.beam_size));
  if (num_hypotheses < 1 || num_hypotheses > beam_size) fail("num_hypotheses", num_hypotheses, "must be in [1, beam_size]");
  if (!std::isfinite(length_penalty)) fail("length_penalty", length_penalty, "must be finite");
  if (max_length < 1) fail("max_length", max_length, "must be ≥ 1");
  if (max_length > l.max_target_length)
    fail("max_length", max_length, "exceeds the plan's max_target_length " + std::to_string(l.max_target_length));
  if (min_length < 0 || min_length > max_length) fail("min_length", min_length, "must be in [0, max_length]");
  if (sampling.enabled) {
    if (beam_size != 1) fail("beam_size", beam_size, "sampling draws one hypothesis per sentence: use beam_size 1");
    if (sampling.top_k < 0) fail("sampling.top_k", sampling.top_k, "must be ≥ 0");
    if (!(sampling.top_p > 0.0f && sampling.top_p <= 1.0f)) fail("sampling.top_p", sampling.top_p, "must be in (0, 1]");
    if (!(sampling.temperature > 0.0f) || !std::isfinite(sampling.temperature))
      fail("sampling.temperature", sampling.temperature, "must be finite and > 0");
  }
}

Workspace::Workspace(std::shared_ptr<const ExecutionPlan> plan)
    : plan_(std::move(plan)),
      arena_(plan_->arena_bytes()),
      exec_(*plan_, arena_.data()),
      T_(plan_->limits().max_target_length),
      vocab_(plan_->model().config().tgt_vocab_size),
      next_table_(plan_->limits().decoder_rows() * T_),
      next_(plan_->limits().decoder_rows()),
      finish_scratch_(T_ + 1),
      source_lengths_(plan_->limits().max_batch),
      non_finite_(plan_->limits().max_batch),
      store_(plan_->limits().max_batch, store_capacity(plan_->limits()), T_),
      greedy_(plan_->limits().decoder_rows(), plan_->limits().threads),
      beam_(plan_->limits().decoder_rows(), plan_->limits().beam_size, plan_->limits().threads),
      sampling_(vocab_),
      step_seconds_(plan_->steps().size(), 0.0) {
  const std::int64_t R = plan_->limits().decoder_rows();
  for (int i = 0; i < 2; ++i) {
    live_[i].resize(R);
    tokens_[i].resize(R * T_);
    log_probs_[i].resize(R * T_);
  }
}

std::size_t Workspace::reserved_bytes() const {
  const std::int64_t R = plan_->limits().decoder_rows();
  return arena_.bytes() + 2 * R * (sizeof(LiveRow) + T_ * 8) + next_table_.size() * 4 + next_.size() * sizeof(Selection) +
         greedy_.best_.size() * 4 + beam_.top_ids_.size() * 8 + beam_.candidates_.size() * sizeof(Selection) + sampling_.probs_.size() * 8;
}

void Workspace::reset_statistics() {
  std::fill(step_seconds_.begin(), step_seconds_.end(), 0.0);
  search_seconds_ = 0;
  counters_ = {};
}

void Workspace::validate(std::span<const SourceRef> batch, const DecodeOptions& o) const {
  const PlanLimits& l = plan_->limits();
  const ModelConfig& c = plan_->model().config();
  o.validate(l);
  if (static_cast<std::int64_t>(batch.size()) > l.max_batch)
    throw error_of("batch of ", batch.size(), " sentences exceeds the plan's max_batch ", l.max_batch);
  std::int64_t longest = 1;
  for (size_t b = 0; b < batch.size(); ++b) {
    const SourceRef& s = batch[b];
    const std::int64_t n = static_cast<std::int64_t>(s.tokens.size());
    if (n > l.max_source_length)
      throw error_of("sentence ", b, ": source has ", n, " tokens, more than the plan's max_source_length ", l.max_source_length);
    for (std::int64_t i = 0; i < n; ++i)
      if (s.tokens[i] < 0 || s.tokens[i] >= c.src_vocab_size)
        throw error_of("sentence ", b, ": source token ", i, " has id ", s.tokens[i], ", outside the source vocabulary [0, ",
                       c.src_vocab_size, ")");
    if (static_cast<std::int64_t>(s.target_prefix.size()) > o.max_length)
      throw error_of("sentence ", b, ": target prefix of ", s.target_prefix.size(), " tokens is longer than max_length ", o.max_length);
    for (size_t i = 0; i < s.target_prefix.size(); ++i)
      if (s.target_prefix[i] < 0 || s.target_prefix[i] >= c.tgt_vocab_size)
        throw error_of("sentence ", b, ": target prefix token ", i, " has id ", s.target_prefix[i],
                       ", outside the target vocabulary [0, ", c.tgt_vocab_size, ")");
    longest = std::max(longest, n);
  }
  if (static_cast<std::int64_t>(batch.size()) * longest > l.batch_tokens())
    throw error_of("batch pads to ", batch.size(), " × ", longest, " = ", batch.size() * longest,
                   " source tokens, more than the plan's max_batch_tokens ", l.batch_tokens());
}

std::int64_t Workspace::encode(std::span<const SourceRef> batch) {
  const auto& io = plan_->io();
  const ModelConfig& c = plan_->model().config();
  std::int64_t S = 1;
  for (const SourceRef& s : batch) S = std::max<std::int64_t>(S, static_cast<std::int64_t>(s.tokens.size()));
  std::int32_t* tokens = exec_.buffer<std::int32_t>(io.source_tokens);
  std::int32_t* positions = exec_.buffer<std::int32_t>(io.source_positions);
  std::int32_t* lengths = exec_.buffer<std::int32_t>(io.source_lengths);
  for (size_t b = 0; b < batch.size(); ++b) {
    const std::int64_t n = static_cast<std::int64_t>(batch[b].tokens.size());
    for (std::int64_t s = 0; s < S; ++s) {
      tokens[b * S + s] = s < n ? batch[b].tokens[s] : c.pad_id;
      positions[b * S + s] = static_cast<std::int32_t>(c.position_offset + s);
    }
    lengths[b] = source_lengths_[b] = static_cast<std::int32_t>(n);
    counters_.source_tokens += n;
  }
  const std::int64_t B = static_cast<std::int64_t>(batch.size());
  exec_.run(Phase::encoder, {B * S, B, S, 0}, profiling_ ? step_seconds_.data() : nullptr);
  return S;
}

// One row per sentence, at the decoder start token. (Beam search widens to beam_size
// rows after the first step, rather than starting with copies that would tie.)
void Workspace::start_rows(std::span<const SourceRef> batch) {
  const auto& io = plan_->io();
  cur_ = 0;
  for (size_t b = 0; b < batch.size(); ++b) {
    live_[cur_][b] = {static_cast<std::int32_t>(b), 0.0f};
    exec_.buffer<std::int32_t>(io.target_tokens)[b] = plan_->model().config().decoder_start_id;
    exec_.buffer<std::int32_t>(io.cross_rows)[b] = static_cast<std::int32_t>(b);
    exec_.buffer<std::int32_t>(io.cross_lengths)[b] = source_lengths_[b];
  }
}

float Workspace::score(float log_prob, std::int64_t length) const {
  if (options_->beam_size == 1 || options_->length_penalty == 0.0f) return log_prob;
  return log_prob / std::pow(static_cast<float>(length), options_->length_penalty);
}

void Workspace::finish(std::int32_t sentence, std::int32_t parent, float log_prob, float eos_log_prob) {
  const std::int64_t t = step_;
  const std::int32_t* tokens = tokens_[cur_].data() + parent * T_;
  std::copy_n(log_probs_[cur_].data() + parent * T_, t, finish_scratch_.begin());
  finish_scratch_[t] = eos_log_prob;
  store_.add(sentence, {tokens, static_cast<size_t>(t)}, {finish_scratch_.data(), static_cast<size_t>(t + 1)},
             score(log_prob, t + 1), log_prob, true);
}

std::int64_t Workspace::select(std::int64_t step, std::int64_t rows, std::span<const SourceRef> batch,
                               const DecodeOptions& o) {
  const ModelConfig& c = plan_->model().config();
  float* lp = exec_.buffer<float>(plan_->io().log_probs);
  if (step < o.min_length)
    for (std::int64_t r = 0; r < rows; ++r) lp[r * vocab_ + c.eos_id] = -std::numeric_limits<float>::infinity();
  SearchInput in;
  in.step = step, in.rows = rows, in.vocab = vocab_, in.log_probs = lp, in.live = live_[cur_].data();
  in.eos = c.eos_id, in.options = &o, in.batch = batch, in.finisher = this;
  if (o.beam_size > 1) return beam_select(in, beam_, next_.data());
  if (o.sampling.enabled) return sampling_select(in, sampling_, next_.data());
  return greedy_select(in, greedy_, next_.data());
}

// The selected rows become the live rows: histories copied from their parents, the
// cache-slot table rebuilt, the decoder inputs for the next step written.
void Workspace::advance(std::int64_t t, std::int64_t n) {
  const auto& io = plan_->io();
  const int nxt = 1 - cur_;
  std::int32_t* table = exec_.buffer<std::int32_t>(io.self_rows);
  for (std::int64_t r = 0; r < n; ++r) {
    const Selection& s = next_[r];
    const std::int64_t p = s.parent;
    std::copy_n(tokens_[cur_].data() + p * T_, t, tokens_[nxt].data() + r * T_);
    std::copy_n(log_probs_[cur_].data() + p * T_, t, log_probs_[nxt].data() + r * T_);
    tokens_[nxt][r * T_ + t] = s.token;
    log_probs_[nxt][r * T_ + t] = s.token_log_prob;
    std::copy_n(table + p * T_, t + 1, next_table_.data() + r * T_);
    const std::int32_t sentence = live_[cur_][p].sentence;
    live_[nxt][r] = {sentence, s.log_prob};
  }
  for (std::int64_t r = 0; r < n; ++r) {
    std::copy_n(next_table_.data() + r * T_, t + 1, table + r * T_);
    const std::int32_t sentence = live_[nxt][r].sentence;
    exec_.buffer<std::int32_t>(io.target_tokens)[r] = next_[r].token;
    exec_.buffer<std::int32_t>(io.cross_rows)[r] = sentence;
    exec_.buffer<std::int32_t>(io.cross_lengths)[r] = source_lengths_[sentence];
  }
  cur_ = nxt;
}

// Rows still live at max_length become hypotheses without end-of-sequence.
void Workspace::keep_unfinished(std::int64_t rows, std::int64_t length) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const LiveRow& row = live_[cur_][r];
    store_.add(row.sentence, {tokens_[cur_].data() + r * T_, static_cast<size_t>(length)},
               {log_probs_[cur_].data() + r * T_, static_cast<size_t>(length)}, score(row.log_prob, length), row.log_prob,
               false);
  }
}

// Marks the sentences of rows whose logits are not all finite; whether any was marked.
bool Workspace::mark_non_finite_rows(std::int64_t rows) {
  const float* logits = exec_.buffer<float>(plan_->io().logits);
  bool any = false;
  for (std::int64_t r = 0; r < rows; ++r)
    if (!all_finite(logits + r * vocab_, vocab_)) non_finite_[live_[cur_][r].sentence] = 1, any = true;
  return any;
}

// Removes the selections that continue a marked sentence: its decoding ends here.
std::int64_t Workspace::drop_non_finite(std::int64_t selected) {
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < selected; ++i)
    if (!non_finite_[live_[cur_][next_[i].parent].sentence]) next_[kept++] = next_[i];
  return kept;
}

void Workspace::decode(std::span<const SourceRef> batch, const DecodeOptions& o, LogitsObserver* observer) {
  validate(batch, o);
  if (batch.empty()) return;
  options_ = &o;
  num_hypotheses_ = o.num_hypotheses;
  const auto& io = plan_->io();
  const ModelConfig& c = plan_->model().config();
  const std::int64_t B = static_cast<std::int64_t>(batch.size());
  const std::int64_t S = encode(batch);
  store_.reset(B);
  std::fill_n(non_finite_.begin(), B, 0);
  start_rows(batch);

  std::int64_t rows = B;
  for (std::int64_t t = 0; t < o.max_length && rows > 0; ++t) {
    step_ = t;
    for (std::int64_t r = 0; r < rows; ++r) {
      exec_.buffer<std::int32_t>(io.target_positions)[r] = static_cast<std::int32_t>(c.position_offset + t);
      exec_.buffer<std::int32_t>(io.self_lengths)[r] = static_cast<std::int32_t>(t + 1);
      exec_.buffer<std::int32_t>(io.self_rows)[r * T_ + t] = static_cast<std::int32_t>(r);  // this step's K/V slot
    }
    exec_.run(Phase::decoder, {rows, B, S, t}, profiling_ ? step_seconds_.data() : nullptr);
    const auto t0 = Clock::now();
    if (observer)
      observer->on_step(t, rows, exec_.buffer<std::int32_t>(io.cross_rows), exec_.buffer<float>(io.logits), vocab_);
    counters_.decoder_row_steps += rows;
    ++counters_.decoder_steps;
    const bool non_finite = mark_non_finite_rows(rows);
    std::int64_t next_rows = select(t, rows, batch, o);
    if (non_finite) next_rows = drop_non_finite(next_rows);
    advance(t, next_rows);
    rows = next_rows;
    if (t + 1 == o.max_length) keep_unfinished(rows, t + 1);
    if (profiling_) search_seconds_ += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  ++counters_.batches;
  counters_.sentences += B;
}

void Workspace::result(std::int64_t b, SentenceResult& out) const {
  store_.collect(b, num_hypotheses_, out);
  out.non_finite = non_finite_[b] != 0;
  if (out.non_finite) out.hypotheses.clear();  // whatever ended before is not to be trusted
  // Fewer ended hypotheses than asked (a vocabulary smaller than the beam, candidates
  // that were all impossible): the rest are empty and impossible (score −∞), so that a
  // caller always finds num_hypotheses of them and hypotheses[0] always exists.
  while (static_cast<std::int64_t>(out.hypotheses.size()) < num_hypotheses_) {
    Hypothesis h;
    h.score = h.log_prob = -std::numeric_limits<float>::infinity();
    out.hypotheses.push_back(std::move(h));
  }
}

}  // namespace attend::runtime
