// The decoding driver: encode the batch, then step the decoder — logits rules, search,
// histories — until every sentence has registered its hypotheses.
#include "decoding/workspace.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "attend/error.hpp"
#include "attend/ops/finite.hpp"
#include "attend/ops/isa.hpp"
#include "attend/ops/softmax.hpp"
#include "model/token_positions.hpp"

namespace attend::runtime {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

Workspace::Workspace(std::shared_ptr<const ExecutionPlan> plan)
    : plan_(std::move(plan)),
      memory_(plan_->arena_bytes(), plan_->steps().size()),
      exec_(*plan_, memory_.arena()),
      T_(plan_->limits().max_target_length),
      vocab_(plan_->model().config().tgt_vocab_size),
      next_table_(plan_->limits().decoder_rows() * T_),
      next_(plan_->limits().decoder_rows()),
      finish_scratch_(T_),
      finish_tokens_(T_),
      rules_scratch_(T_),
      row_shift_(plan_->limits().decoder_rows()),
      source_lengths_(plan_->limits().max_batch),
      registered_(plan_->limits().max_batch),
      last_step_(plan_->limits().max_batch),
      non_finite_(plan_->limits().max_batch),
      finite_rows_(plan_->limits().decoder_rows()),
      recompute_rows_(plan_->limits().decoder_rows()),
      candidates_(plan_->limits().max_batch),
      store_(plan_->limits().max_batch, plan_->limits().beam_size, T_),
      greedy_(plan_->limits().decoder_rows(), plan_->limits().threads),
      beam_(plan_->limits().decoder_rows(), plan_->limits().beam_size, plan_->limits().max_batch, plan_->limits().threads),
      sampling_(vocab_) {
  const std::int64_t R = plan_->limits().decoder_rows();
  for (int i = 0; i < 2; ++i) {
    live_[i].resize(R);
    tokens_[i].resize(R * T_);
    log_probs_[i].resize(R * T_);
  }
  end_ids_.reserve(8);
}

std::size_t Workspace::reserved_bytes() const {
  const std::int64_t R = plan_->limits().decoder_rows();
  return memory_.arena_bytes() + 2 * R * (sizeof(LiveRow) + T_ * 8) + next_table_.size() * 4 + next_.size() * sizeof(Selection) +
         greedy_.best_.size() * 4 + beam_.top_ids_.size() * 8 + beam_.candidates_.size() * sizeof(Selection) +
         sampling_.probs_.size() * 8 + attention_rows_.size() * 4 + parents_.size() * 4;
}

void Workspace::reset_statistics() {
  memory_.reset_step_seconds();
  search_seconds_ = 0;
  counters_ = {};
}

void Workspace::validate(std::span<const SourceRef> batch, const DecodeOptions& o) const {
  const PlanLimits& l = plan_->limits();
  const ModelConfig& c = plan_->model().config();
  o.validate(l, c);
  const std::int64_t max_length = o.max_length_within(l);
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
    const auto P = static_cast<std::int64_t>(s.target_prefix.size());
    if (o.prefix_is_context && P + max_length > l.max_target_length)
      throw error_of("sentence ", b, ": a context of ", P, " tokens and max_length ", max_length,
                     " exceed the plan's max_target_length ", l.max_target_length);
    if (!o.prefix_is_context && o.prefix_bias_beta == 0 && P > max_length)
      throw error_of("sentence ", b, ": target prefix of ", P, " tokens is longer than max_length ", max_length);
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

std::int64_t Workspace::encode(std::span<const SourceRef> batch, AttentionCapture* capture) {
  const auto& io = plan_->io();
  const ModelConfig& c = plan_->model().config();
  std::int64_t S = 1;
  for (const SourceRef& s : batch) S = std::max<std::int64_t>(S, static_cast<std::int64_t>(s.tokens.size()));
  std::int32_t* tokens = exec_.buffer<std::int32_t>(io.source_tokens);
  std::int32_t* positions = exec_.buffer<std::int32_t>(io.source_positions);
  std::int32_t* lengths = exec_.buffer<std::int32_t>(io.source_lengths);
  // Unpadded: sentence after sentence, so that a batch of mixed lengths (a server's, in
  // the order its requests came) costs its tokens, not its size × its longest — 16
  // sources of 10 to 50 tokens padded to 50 made ~1.7× the encoder's work. The cross
  // K/V cache keeps S positions per sentence (cross_view); those past a sentence's
  // length are never read.
  std::int64_t rows = 0;
  for (size_t b = 0; b < batch.size(); ++b) {
    const std::int64_t n = static_cast<std::int64_t>(batch[b].tokens.size());
    TokenPositions numbering(c.position_offset, c.pad_positions, c.pad_id);
    for (std::int64_t s = 0; s < n; ++s, ++rows) {
      tokens[rows] = batch[b].tokens[s];
      positions[rows] = numbering.next(tokens[rows]);
    }
    lengths[b] = source_lengths_[b] = static_cast<std::int32_t>(n);
    counters_.source_tokens += n;
  }
  const std::int64_t B = static_cast<std::int64_t>(batch.size());
  PhaseShape shape{rows, B, S, 0};
  shape.capture = capture;
  if (rows > 0) exec_.run(Phase::encoder, shape, memory_.step_clock(profiling_));
  return S;
}

// `draws` rows per sentence (several only for sampling several hypotheses), at the
// decoder start token. Beam search widens to beam_size rows after the first step,
// rather than starting with copies that would tie.
void Workspace::start_rows(std::span<const SourceRef> batch, std::int64_t draws) {
  const auto& io = plan_->io();
  cur_ = 0;
  for (size_t b = 0; b < batch.size(); ++b)
    for (std::int64_t d = 0; d < draws; ++d) {
      const std::int64_t r = static_cast<std::int64_t>(b) * draws + d;
      live_[cur_][r] = {static_cast<std::int32_t>(b), static_cast<std::int32_t>(d), 0.0f};
      exec_.buffer<std::int32_t>(io.target_tokens)[r] = plan_->model().config().decoder_start_id;
      exec_.buffer<std::int32_t>(io.cross_rows)[r] = static_cast<std::int32_t>(b);
      exec_.buffer<std::int32_t>(io.cross_lengths)[r] = source_lengths_[b];
    }
}

std::int64_t Workspace::prefix_offset(std::int32_t sentence) const {
  return options_->prefix_is_context ? static_cast<std::int64_t>(batch_[sentence].target_prefix.size()) : 0;
}

std::int64_t Workspace::one_pass_steps(std::int32_t sentence) const {
  if (options_->one_pass_prefix_tail < 0) return 0;
  return static_cast<std::int64_t>(batch_[sentence].target_prefix.size()) - options_->one_pass_prefix_tail;
}

// Sized for this batch (grown, never shrunk), before the decode loop.
void Workspace::prepare_attention(std::int64_t rows, std::int64_t source_length) {
  attention_stride_rows_ = rows, attention_source_ = source_length;
  const auto values = static_cast<std::size_t>(T_ * rows * source_length);
  if (attention_rows_.size() < values) attention_rows_.resize(values);
  if (parents_.size() < static_cast<std::size_t>(T_ * rows)) parents_.resize(T_ * rows);
  if (rules_scratch_.size() < static_cast<std::size_t>(source_length)) rules_scratch_.resize(source_length);
}

void Workspace::record_attention(std::int64_t t, std::int64_t rows) {
  const auto& io = plan_->io();
  const float* probs = exec_.buffer<float>(io.alignment);
  const std::int64_t ld = plan_->buffers()[io.alignment].cols, S = attention_source_;
  for (std::int64_t r = 0; r < rows; ++r)
    std::copy_n(probs + r * ld, S, attention_rows_.data() + (t * attention_stride_rows_ + r) * S);
}

// CTranslate2's coverage penalty over the hypothesis ending at (step, row): β·Σ over
// source positions that received attention of log(min(attention received, 1)).
float Workspace::coverage(std::int64_t step, std::int64_t row, std::int64_t from_step) {
  const std::int64_t S = attention_source_;
  float* received = rules_scratch_.data();  // free while the search runs
  std::fill_n(received, S, 0.0f);
  for (std::int64_t t = step, r = row; t >= from_step; --t) {
    const float* a = attention_rows_.data() + (t * attention_stride_rows_ + r) * S;
    for (std::int64_t s = 0; s < S; ++s) received[s] += a[s];
    if (t > 0) r = parents_[t * attention_stride_rows_ + r];
  }
  float penalty = 0;
  for (std::int64_t s = 0; s < S; ++s)
    if (received[s] > 0) penalty += std::log(std::min(received[s], 1.0f));
  return options_->coverage_penalty * penalty;
}

void Workspace::finish(std::int32_t sentence, const Selection& last, bool ended) {
  const std::int64_t t = step_;
  const std::int32_t p = last.parent;
  std::copy_n(tokens_[cur_].data() + p * T_, t, finish_tokens_.begin());
  std::copy_n(log_probs_[cur_].data() + p * T_, t, finish_scratch_.begin());
  finish_tokens_[t] = last.token;
  finish_scratch_[t] = last.token_log_prob;
  const std::int64_t offset = prefix_offset(sentence);
  const float length = static_cast<float>(t + 1 - offset);
  float score = last.score / std::pow(length, options_->length_penalty);
  if (options_->coverage_penalty != 0) score += coverage(t, p, offset);
  const auto n = static_cast<size_t>(t + 1);
  store_.add(sentence, {finish_tokens_.data(), n}, {finish_scratch_.data(), n}, score, ended,
             {static_cast<std::int32_t>(t), p});
  ++registered_[sentence];
  if (options_->on_token && !stopping_) stream_token(sentence, live_[cur_][p].draw, last.token, last.token_log_prob, true);
}

bool Workspace::stream_token(std::int32_t sentence, std::int32_t draw, std::int32_t token, float log_prob, bool last) {
  const TokenStep step{static_cast<std::size_t>(batch_[sentence].id), step_, token, log_prob, last, draw};
  return options_->on_token(step);
}

// As CTranslate2's greedy search: a callback that returns true ends that row's
// hypothesis at this token (unfinished); the other rows, of its sentence's other draws
// and of the batch's other sentences, go on.
std::int64_t Workspace::stream_step(std::int64_t rows) {
  std::int64_t kept = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const LiveRow& parent = live_[cur_][next_[r].parent];
    if (!stream_token(parent.sentence, parent.draw, next_[r].token, next_[r].token_log_prob, false)) {
      next_[kept++] = next_[r];
      continue;
    }
    stopping_ = true;  // finish() streams nothing more: this token went out already
    finish(parent.sentence, next_[r], false);
    stopping_ = false;
  }
  return kept;
}

// The logits rules, as CTranslate2 applies them to the logits before the log-softmax.
// Where they only forbid tokens (min_length, disable_unk, n-grams, suppressed
// sequences), the row's log-probabilities are renormalised in place — forbidden tokens
// −∞, every other log p + row_shift_ = −log(1 − forbidden probability), the shift added
// where a log p is read — which costs O(forbidden tokens) instead of a log-softmax over
// the vocabulary. The repetition penalty changes the logits themselves: those rows are
// recomputed. Each row takes its way by its own history alone, never by what other rows
// need, so a sentence's log p's are the same bits whatever its batch-mates.
void Workspace::apply_logits_rules(std::int64_t t, std::int64_t rows) {
  if (options_->transformers_rules) return apply_transformers_rules(t, rows);
  const auto& io = plan_->io();
  float* logits = exec_.buffer<float>(io.logits);
  float* log_probs = exec_.buffer<float>(io.log_probs);
  shifted_ = false;
  for (std::int64_t r = 0; r < rows; ++r) {
    row_shift_[r] = 0;
    recompute_rows_[r] = 0;
    if (restrict_to_candidates(t, r, logits, log_probs)) continue;
    const std::int64_t offset = prefix_offset(live_[cur_][r].sentence);
    if (t < offset) continue;  // a forced context token
    const auto history = std::span<const std::int32_t>(tokens_[cur_].data() + r * T_ + offset, static_cast<size_t>(t - offset));
    if (!rules_.active(t - offset, static_cast<std::int64_t>(history.size()))) continue;
    if (!rules_.only_forbids(static_cast<std::int64_t>(history.size()))) {
      rules_.apply(logits + r * vocab_, history, t - offset, rules_scratch_.data());
      recompute_rows_[r] = 1;
      continue;
    }
    float* row = log_probs + r * vocab_;
    double forbidden = 0;
    rules_.for_each_forbidden(history, t - offset, [&](std::int32_t id) {
      forbidden += std::exp(static_cast<double>(row[id]));
      row[id] = -std::numeric_limits<float>::infinity();
    });
    if (forbidden < 0.999) {
      row_shift_[r] = static_cast<float>(-std::log1p(-forbidden));
      shifted_ = shifted_ || forbidden > 0;
      continue;
    }
    // Nearly all the probability was forbidden: the renormalisation would lose precision.
    rules_.apply(logits + r * vocab_, history, t - offset, rules_scratch_.data());
    recompute_rows_[r] = 1;
  }
  // The recomputed rows, each run of consecutive ones in one call (a row's log-softmax
  // is the same bits in any call and on any threads).
  for (std::int64_t r = 0; r < rows;) {
    if (!recompute_rows_[r]) {
      ++r;
      continue;
    }
    std::int64_t end = r + 1;
    while (end < rows && recompute_rows_[end]) ++end;
    ops::log_softmax(ops::ConstMatrix(logits + r * vocab_, end - r, vocab_), ops::Matrix(log_probs + r * vocab_, end - r, vocab_),
                     plan_->limits().threads);
    r = end;
  }
}

bool Workspace::restrict_to_candidates(std::int64_t t, std::int64_t r, float* logits, float* log_probs) {
  const std::span<const std::int32_t> allowed = candidates_[live_[cur_][r].sentence];
  if (allowed.empty()) return false;
  float* row = logits + r * vocab_;
  constexpr float impossible = -std::numeric_limits<float>::infinity();
  std::int32_t next = 0;  // the gaps between the sorted candidates are what is forbidden
  for (const std::int32_t id : allowed) {
    std::fill(row + next, row + id, impossible);
    next = id + 1;
  }
  std::fill(row + next, row + vocab_, impossible);
  const std::int64_t offset = prefix_offset(live_[cur_][r].sentence);
  if (t >= offset) {
    const std::span<const std::int32_t> history(tokens_[cur_].data() + r * T_ + offset, static_cast<size_t>(t - offset));
    rules_.apply(row, history, t - offset, rules_scratch_.data());
  }
  ops::log_softmax(ops::ConstMatrix(row, 1, vocab_), ops::Matrix(log_probs + r * vocab_, 1, vocab_), 1);
  return true;
}

std::int64_t Workspace::select(std::int64_t step, std::int64_t rows) {
  const DecodeOptions& o = *options_;
  float* lp = exec_.buffer<float>(plan_->io().log_probs);
  SearchInput in;
  in.step = step, in.rows = rows, in.vocab = vocab_, in.log_probs = lp, in.live = live_[cur_].data();
  in.end_ids = end_ids_, in.options = &o, in.batch = batch_, in.last_step = last_step_.data(), in.finisher = this;
  in.row_shift = shifted_ ? row_shift_.data() : nullptr;
  if (o.prefix_bias_beta > 0) {  // the bias needs normalised rows: fold the shifts in first
    if (shifted_)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t v = 0; v < vocab_; ++v) lp[r * vocab_ + v] += row_shift_[r];
    in.row_shift = nullptr;
    bias_towards_prefix(in, beam_, lp);
  }
  if (o.transformers_rules && o.beam_size > 1) return transformers_beam_select(in, beam_, transformers_beam_, next_.data());
  // As CTranslate2, biased decoding is a beam search even with beam_size 1.
  if (o.beam_size > 1 || o.prefix_bias_beta > 0) return beam_select(in, beam_, next_.data());
  if (o.sampling) return sampling_select(in, sampling_, next_.data());
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
    live_[nxt][r] = {live_[cur_][p].sentence, live_[cur_][p].draw, s.score};
    if (attention_ && t + 1 < T_) parents_[(t + 1) * attention_stride_rows_ + r] = s.parent;
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

// Marks the sentences of rows whose logits are not all finite; whether any was marked.
bool Workspace::mark_non_finite_rows(std::int64_t rows) {
  ops::row_all_finite(ops::ConstMatrix(exec_.buffer<float>(plan_->io().logits), rows, vocab_), finite_rows_.data(),
                      plan_->limits().threads);
  bool any = false;
  for (std::int64_t r = 0; r < rows; ++r)
    if (!finite_rows_[r]) non_finite_[live_[cur_][r].sentence] = 1, any = true;
  return any;
}

// Removes the selections that continue a marked sentence: its decoding ends here.
std::int64_t Workspace::drop_non_finite(std::int64_t selected) {
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < selected; ++i)
    if (!non_finite_[live_[cur_][next_[i].parent].sentence]) next_[kept++] = next_[i];
  return kept;
}

void Workspace::write_step_inputs(std::int64_t t, std::int64_t r, std::int64_t pass) {
  const auto& io = plan_->io();
  const ModelConfig& c = plan_->model().config();
  // The step's input token (the start token, or the one chosen last step) is already in place.
  const std::int32_t token = exec_.buffer<std::int32_t>(io.target_tokens)[r];
  exec_.buffer<std::int32_t>(io.target_positions)[r] = TokenPositions(c.position_offset, c.pad_positions, c.pad_id).at(token, t);
  // Inside CTranslate2's one-pass prefix its T5 bias shifts every query by the pass's
  // length − 1 (an offset meant for one cached query), and (Marian) every embedding is zero.
  exec_.buffer<std::int32_t>(io.query_positions)[r] = static_cast<std::int32_t>(t < pass ? t + pass - 1 : t);
  exec_.buffer<std::int32_t>(io.zero_embedding)[r] = t < pass ? 1 : 0;
  exec_.buffer<std::int32_t>(io.self_lengths)[r] = static_cast<std::int32_t>(t + 1);
  exec_.buffer<std::int32_t>(io.self_rows)[r * T_ + t] = static_cast<std::int32_t>(r);  // this step's K/V slot
}

void Workspace::decode(std::span<const SourceRef> batch, const DecodeOptions& o, LogitsObserver* observer) {
  validate(batch, o);
  if (batch.empty()) return;
  const ops::IsaScope isa(plan_->model().isa());  // every op of the batch at the model's kernels
  options_ = &o;
  batch_ = batch;
  const auto& io = plan_->io();
  const ModelConfig& c = plan_->model().config();
  end_ids_.clear();
  if (!o.end_ids) end_ids_.push_back(c.eos_id);
  else end_ids_.insert(end_ids_.end(), o.end_ids->begin(), o.end_ids->end());
  rules_.reset(o, end_ids_, c.unk_id);
  num_hypotheses_ = o.num_hypotheses;
  keep_end_token_ = o.return_end_token;
  attention_ = o.return_attention || o.replace_unknowns || o.coverage_penalty != 0;

  const std::int64_t B = static_cast<std::int64_t>(batch.size());
  for (std::int64_t b = 0; b < B; ++b) candidates_[b] = o.candidates ? o.candidates(batch[b].id) : std::span<const std::int32_t>();
  const std::int64_t S = encode(batch);
  const bool beam = o.beam_size > 1 || o.prefix_bias_beta > 0;
  const std::int64_t draws = o.sampling ? o.num_hypotheses : 1;
  store_.reset(B, o.num_hypotheses);
  std::fill_n(registered_.begin(), B, 0);
  std::fill_n(non_finite_.begin(), B, 0);
  beam_.reset(B);
  if (attention_) prepare_attention(B * std::max(beam ? o.beam_size : 1, draws), S);
  start_rows(batch, draws);

  const std::int64_t max_length = o.max_length_within(plan_->limits());
  if (o.transformers_rules) transformers_beam_.reset(B, o.beam_size, max_length);
  std::int64_t rows = B * draws;
  for (std::int64_t t = 0; rows > 0; ++t) {
    step_ = t;
    for (std::int64_t b = 0; b < B; ++b) last_step_[b] = t + 1 == prefix_offset(static_cast<std::int32_t>(b)) + max_length;
    for (std::int64_t r = 0; r < rows; ++r) write_step_inputs(t, r, one_pass_steps(live_[cur_][r].sentence));
    PhaseShape shape{rows, B, S, t};
    shape.alignment = attention_;
    exec_.run(Phase::decoder, shape, memory_.step_clock(profiling_));
    const auto t0 = Clock::now();
    if (observer)
      observer->on_step(t, rows, exec_.buffer<std::int32_t>(io.cross_rows), exec_.buffer<float>(io.logits), vocab_);
    counters_.decoder_row_steps += rows;
    ++counters_.decoder_steps;
    if (attention_) record_attention(t, rows);
    const bool non_finite = mark_non_finite_rows(rows);
    apply_logits_rules(t, rows);
    std::int64_t next_rows = select(t, rows);
    if (non_finite) next_rows = drop_non_finite(next_rows);
    if (o.on_token) next_rows = stream_step(next_rows);  // rows the callback stops end here
    advance(t, next_rows);
    rows = next_rows;
    if (profiling_) search_seconds_ += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  ++counters_.batches;
  counters_.sentences += B;
}

void Workspace::trace_attention(std::span<const std::int32_t> source, std::span<const std::int32_t> outputs,
                                AttentionCapture& capture) {
  const ops::IsaScope isa(plan_->model().isa());
  const auto& io = plan_->io();
  const ModelConfig& c = plan_->model().config();
  const auto S = static_cast<std::int64_t>(source.size()), steps = static_cast<std::int64_t>(outputs.size());
  if (S < 1 || S > plan_->limits().max_source_length || steps > T_)
    throw error_of("internal: a trace of ", S, " source tokens and ", steps, " outputs does not fit the workspace");
  capture.encoder_self.reset(c.encoder_layers, c.num_heads, S, S);
  capture.decoder_self.reset(c.decoder_layers, c.num_heads, steps, steps);
  capture.cross.reset(c.decoder_layers, c.num_heads, steps, S);
  const SourceRef ref{source, {}, 0};
  encode({&ref, 1}, &capture);
  // One row, decoding sentence 0: the start token, then each output in turn.
  exec_.buffer<std::int32_t>(io.target_tokens)[0] = c.decoder_start_id;
  exec_.buffer<std::int32_t>(io.cross_rows)[0] = 0;
  exec_.buffer<std::int32_t>(io.cross_lengths)[0] = static_cast<std::int32_t>(S);
  for (std::int64_t t = 0; t < steps; ++t) {
    write_step_inputs(t, 0, 0);
    PhaseShape shape{1, 1, S, t};
    shape.capture = &capture;
    exec_.run(Phase::decoder, shape);
    exec_.buffer<std::int32_t>(io.target_tokens)[0] = outputs[t];
  }
}

void Workspace::result(std::int64_t b, SentenceResult& out) const {
  std::vector<HypothesisTrace> traces;
  store_.collect(b, num_hypotheses_, keep_end_token_, out, traces);
  out.non_finite = non_finite_[b] != 0;
  if (out.non_finite) out.hypotheses.clear(), traces.clear();  // whatever ended before is not to be trusted
  if (!attention_) return;
  // Each hypothesis' attention, followed back from its last row: one row per token.
  const std::int64_t S = attention_source_, n = source_lengths_[b];
  for (size_t i = 0; i < out.hypotheses.size(); ++i) {
    Hypothesis& h = out.hypotheses[i];
    std::vector<std::vector<float>> rows(static_cast<size_t>(traces[i].step) + 1);
    for (std::int64_t t = traces[i].step, r = traces[i].row; t >= 0; --t) {
      const float* a = attention_rows_.data() + (t * attention_stride_rows_ + r) * S;
      rows[t].assign(a, a + n);
      if (t > 0) r = parents_[t * attention_stride_rows_ + r];
    }
    rows.resize(h.tokens.size());
    h.attention = std::move(rows);
  }
}

}  // namespace attend::runtime
