#include "translator/translator.hpp"

#include <algorithm>

#include "attend/error.hpp"

namespace attend::runtime {

PlanLimits TranslatorConfig::plan_limits(const ModelConfig& model) const {
  PlanLimits l;
  l.max_batch = max_batch_size;
  l.max_source_length = std::min(max_source_length, model.max_positions);
  l.max_target_length = std::min(max_target_length, model.max_positions);
  l.beam_size = max_beam_size;
  l.max_batch_tokens = max_batch_tokens > 0 ? std::max(max_batch_tokens, l.max_source_length) : 0;
  l.threads = threads;
  return l;
}

bool is_empty_source(std::span<const std::int32_t> ids, const ModelConfig& c) {
  for (const std::int32_t id : ids)
    if (!((c.add_source_bos && id == c.bos_id) || (c.add_source_eos && id == c.eos_id))) return false;
  return true;
}

namespace {

// What an empty source translates to: `n` empty hypotheses, each ending at once with
// certainty (end-of-sequence's log p = 0), so every caller finds the hypotheses it asked for.
SentenceResult empty_result(std::int64_t n) {
  SentenceResult r;
  for (std::int64_t k = 0; k < n; ++k) {
    Hypothesis h;
    h.finished = true;
    h.token_log_probs = {0.0f};
    r.hypotheses.push_back(std::move(h));
  }
  return r;
}

}  // namespace

Translator::Translator(std::shared_ptr<const Model> model, const TranslatorConfig& config)
    : config_(config), plan_(ExecutionPlan::compile(model, config.plan_limits(model->config()))) {}

std::unique_ptr<Workspace> Translator::acquire() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!idle_.empty()) {
    std::unique_ptr<Workspace> w = std::move(idle_.back());
    idle_.pop_back();
    return w;
  }
  auto w = std::make_unique<Workspace>(plan_);
  w->set_profiling(profiling_);
  all_.push_back(w.get());
  return w;
}

void Translator::release(std::unique_ptr<Workspace> w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(w));
}

std::vector<SentenceResult> Translator::translate(std::span<const std::vector<std::int32_t>> sources,
                                                  const DecodeOptions& options,
                                                  std::span<const std::vector<std::int32_t>> prefixes,
                                                  std::uint64_t first_id, const ResultSink& sink) const {
  if (!prefixes.empty() && prefixes.size() != sources.size())
    throw error_of("translate: ", prefixes.size(), " target prefixes for ", sources.size(), " sources");
  options.validate(plan_->limits());
  const PlanLimits& limits = plan_->limits();
  // Checked here, before batching, so that a message names the caller's sentence index
  // (the workspace checks again, but only knows positions inside a batch).
  const ModelConfig& c = model().config();
  std::vector<std::int64_t> lengths;
  std::vector<std::int64_t> decoded;  // the sources that are not empty, by index
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::uint64_t sentence = first_id + i;
    if (static_cast<std::int64_t>(sources[i].size()) > limits.max_source_length)
      throw error_of("sentence ", sentence, ": source has ", sources[i].size(), " tokens, more than max_source_length ",
                     limits.max_source_length);
    for (size_t k = 0; k < sources[i].size(); ++k)
      if (sources[i][k] < 0 || sources[i][k] >= c.src_vocab_size)
        throw error_of("sentence ", sentence, ": source token ", k, " has id ", sources[i][k],
                       ", outside the source vocabulary [0, ", c.src_vocab_size, ")");
    if (!prefixes.empty()) {
      if (static_cast<std::int64_t>(prefixes[i].size()) > options.max_length)
        throw error_of("sentence ", sentence, ": target prefix of ", prefixes[i].size(),
                       " tokens is longer than max_length ", options.max_length);
      for (size_t k = 0; k < prefixes[i].size(); ++k)
        if (prefixes[i][k] < 0 || prefixes[i][k] >= c.tgt_vocab_size)
          throw error_of("sentence ", sentence, ": target prefix token ", k, " has id ", prefixes[i][k],
                         ", outside the target vocabulary [0, ", c.tgt_vocab_size, ")");
    }
    if (is_empty_source(sources[i], c)) continue;
    decoded.push_back(static_cast<std::int64_t>(i));
    lengths.push_back(static_cast<std::int64_t>(sources[i].size()));
  }

  std::vector<SentenceResult> results(sink ? 0 : sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!is_empty_source(sources[i], c)) continue;
    if (sink) sink(i, empty_result(options.num_hypotheses));
    else results[i] = empty_result(options.num_hypotheses);
  }
  if (decoded.empty()) return results;
  auto batches = make_batches(lengths, {limits.max_batch, limits.batch_tokens()});
  for (auto& batch : batches)
    for (std::int64_t& i : batch) i = decoded[i];  // positions among the decoded → source indices

  std::unique_ptr<Workspace> w = acquire();
  try {
    std::vector<SourceRef> refs;
    for (const auto& batch : batches) {
      refs.clear();
      for (std::int64_t i : batch) {
        SourceRef r;
        r.tokens = sources[i];
        if (!prefixes.empty()) r.target_prefix = prefixes[i];
        r.id = first_id + static_cast<std::uint64_t>(i);
        refs.push_back(r);
      }
      w->decode(refs, options);
      for (size_t b = 0; b < batch.size(); ++b) {
        if (!sink) {
          w->result(static_cast<std::int64_t>(b), results[batch[b]]);
          continue;
        }
        SentenceResult r;
        w->result(static_cast<std::int64_t>(b), r);
        sink(static_cast<std::size_t>(batch[b]), std::move(r));
      }
    }
  } catch (...) {
    release(std::move(w));
    throw;
  }
  release(std::move(w));
  return results;
}

void Translator::set_profiling(bool on) const {
  std::lock_guard<std::mutex> lock(mutex_);
  profiling_ = on;
  for (Workspace* w : all_) w->set_profiling(on);
}

std::vector<double> Translator::step_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<double> total(plan_->steps().size(), 0.0);
  for (Workspace* w : all_)
    for (size_t i = 0; i < total.size(); ++i) total[i] += w->step_seconds()[i];
  return total;
}

double Translator::search_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  double s = 0;
  for (Workspace* w : all_) s += w->search_seconds();
  return s;
}

DecodeCounters Translator::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  DecodeCounters c;
  for (Workspace* w : all_) {
    const DecodeCounters& x = w->counters();
    c.batches += x.batches, c.sentences += x.sentences, c.source_tokens += x.source_tokens;
    c.decoder_row_steps += x.decoder_row_steps, c.decoder_steps += x.decoder_steps;
  }
  return c;
}

void Translator::reset_statistics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Workspace* w : all_) w->reset_statistics();
}

}  // namespace attend::runtime
