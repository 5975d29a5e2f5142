#include "translator/translator.hpp"

#include <algorithm>
#include <numeric>

#include "attend/error.hpp"

namespace attend::runtime {

PlanLimits TranslatorConfig::plan_limits(const ModelConfig& model) const {
  PlanLimits l;
  l.max_batch = max_batch_size;
  l.max_source_length = std::min(max_source_length, model.max_positions);
  l.max_target_length = std::min(max_target_length, model.max_positions);
  l.beam_size = max_beam_size;
  l.max_batch_tokens = max_batch_tokens > 0 ? std::max(max_batch_tokens, l.max_source_length) : 0;
  // Every sentence decoded has a token at least: a batch capped at N padded tokens holds
  // at most N sentences, whatever max_batch_size says.
  if (l.max_batch_tokens > 0) l.max_batch = std::min(l.max_batch, l.max_batch_tokens);
  l.threads = threads;
  return l;
}

// CTranslate2's rule (EncoderDecoderReplica::get_source_length without special tokens),
// on the caller's tokens — the ids less the BOS/EOS the model adds, where present: one
// token that is BOS or EOS is no content; of two or more, a leading BOS, and a trailing
// EOS or an EOS followed by one last token (a language code), are not content either.
bool is_empty_source(std::span<const std::int32_t> ids, const ModelConfig& c) {
  if (c.add_source_bos && !ids.empty() && ids.front() == c.bos_id) ids = ids.subspan(1);
  if (c.add_source_eos && !ids.empty() && ids.back() == c.eos_id) ids = ids.first(ids.size() - 1);
  const auto n = static_cast<std::int64_t>(ids.size());
  if (n <= 1) return n == 0 || ids[0] == c.bos_id || ids[0] == c.eos_id;
  std::int64_t content = n - (ids.front() == c.bos_id ? 1 : 0);
  if (ids.back() == c.eos_id) content -= 1;
  else if (ids[n - 2] == c.eos_id) content -= 2;
  return content == 0;  // (below 0, CTranslate2's unsigned count wraps round and translates)
}

SentenceResult empty_result(std::int64_t n, std::span<const std::int32_t> prefix, std::int64_t max_length,
                            bool attention) {
  SentenceResult r;
  const auto kept = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(prefix.size()), max_length));
  for (std::int64_t k = 0; k < n; ++k) {
    Hypothesis h;
    h.finished = true;
    h.tokens.assign(prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(kept));
    h.token_log_probs.assign(kept + 1, 0.0f);
    if (attention) h.attention.assign(kept, {});  // rows of zeros, as wide as the caller's source
    r.hypotheses.push_back(std::move(h));
  }
  return r;
}

Translator::Translator(std::shared_ptr<const Model> model, const TranslatorConfig& config)
    : config_(config),
      plan_(ExecutionPlan::compile(model, config.plan_limits(model->config()))),
      step_seconds_(plan_->steps().size(), 0.0) {
  // Each batch worker has a team of `threads`: bounded, so that no flag starts a
  // million threads.
  if (config.inter_threads < 1 || config.inter_threads > 1024)
    throw error_of("inter_threads = ", config.inter_threads, ": must be in [1, 1024]");
  if (std::int64_t{config.inter_threads} * config.threads > 4096)
    throw error_of("inter_threads × intra_threads = ", config.inter_threads, " × ", config.threads,
                   ": at most 4096 threads in all");
  if (config.inter_threads > 1) workers_ = std::make_unique<BatchWorkers>(config.inter_threads);
}

namespace {

std::int64_t power_of_two_at_least(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

}  // namespace

std::shared_ptr<const ExecutionPlan> Translator::plan_for(std::int64_t sentences, std::int64_t source_length,
                                                          int threads) const {
  const PlanLimits& full = plan_->limits();
  const std::int64_t capacity = std::min(power_of_two_at_least(sentences), full.max_batch);
  const std::int64_t length = std::min(power_of_two_at_least(source_length), full.max_source_length);
  if (capacity == full.max_batch && length == full.max_source_length && threads == full.threads) return plan_;
  std::lock_guard lock(mutex_);
  auto& plan = plans_[{capacity, length, threads}];
  if (!plan) {
    PlanLimits l = full;
    l.max_batch = capacity;
    l.max_source_length = length;
    l.threads = threads;
    l.max_batch_tokens = std::min(full.batch_tokens(), capacity * length);
    plan = ExecutionPlan::compile(plan_->model_ptr(), l);
  }
  return plan;
}

// An idle workspace that holds batches of `sentences` sources of `source_length` tokens,
// or a new one. A new workspace supersedes the idle ones that do not fit (it is made at
// least as large as each of them), so a thread keeps one, grown to the largest batch
// and the longest source it has seen.
std::unique_ptr<Workspace> Translator::acquire(std::int64_t sentences, std::int64_t source_length, int threads) const {
  {
    std::lock_guard lock(mutex_);
    auto same_threads = [&](const auto& w) { return w->plan().limits().threads == threads; };
    auto fits = [&](const auto& w) {
      const PlanLimits& l = w->plan().limits();
      return same_threads(w) && l.max_batch >= sentences && l.max_source_length >= source_length;
    };
    auto best = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it)
      if (fits(*it) && (best == idle_.end() || (*it)->plan().arena_bytes() < (*best)->plan().arena_bytes())) best = it;
    if (best != idle_.end()) {
      std::unique_ptr<Workspace> w = std::move(*best);
      idle_.erase(best);
      return w;
    }
    // None fits: the new one supersedes the idle ones of its thread count.
    for (const auto& w : idle_) {
      if (!same_threads(w)) continue;
      sentences = std::max(sentences, w->plan().limits().max_batch);
      source_length = std::max(source_length, w->plan().limits().max_source_length);
    }
    std::erase_if(idle_, same_threads);
  }
  const auto plan = plan_for(sentences, source_length, threads);
  try {
    return std::make_unique<Workspace>(plan);
  } catch (const std::bad_alloc&) {
    const PlanLimits& l = plan->limits();
    throw error_of("cannot allocate a workspace of ", (plan->arena_bytes() >> 20),
                   " MiB (and its decoding state) for batches of ", l.max_batch, " sentences × ", l.max_source_length,
                   " source tokens, ", l.max_target_length, " target tokens, beam ", l.beam_size,
                   ": lower max_batch_size, max_target_length or max_beam_size");
  }
}

void Translator::release(std::unique_ptr<Workspace> w) const {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(w));
}

// Adds a workspace's figures since its last call to the totals.
void Translator::collect_statistics(Workspace& w) const {
  std::lock_guard lock(mutex_);
  const auto seconds = w.step_seconds();
  for (size_t i = 0; i < seconds.size() && i < step_seconds_.size(); ++i) step_seconds_[i] += seconds[i];
  search_seconds_ += w.search_seconds();
  const DecodeCounters& x = w.counters();
  counters_.batches += x.batches, counters_.sentences += x.sentences, counters_.source_tokens += x.source_tokens;
  counters_.decoder_row_steps += x.decoder_row_steps, counters_.decoder_steps += x.decoder_steps;
  w.reset_statistics();
}

std::vector<SentenceResult> Translator::translate(std::span<const std::vector<std::int32_t>> sources,
                                                  const DecodeOptions& options,
                                                  std::span<const std::vector<std::int32_t>> prefixes,
                                                  SentenceIds ids, const ResultSink& sink) const {
  if (!prefixes.empty() && prefixes.size() != sources.size())
    throw error_of("translate: ", prefixes.size(), " target prefixes for ", sources.size(), " sources");
  options.validate(plan_->limits(), plan_->model().config());
  if (!ids.each.empty() && ids.each.size() != sources.size())
    throw error_of("translate: ", ids.each.size(), " sentence ids for ", sources.size(), " sources");
  if (options.threads < 0 || options.threads > 1024)
    throw error_of("translate: threads = ", options.threads, " for a call: must be in [1, 1024] (0: as configured)");
  if (options.return_alternatives) return translate_alternatives(sources, options, prefixes, ids, sink);
  const PlanLimits& limits = plan_->limits();
  // Checked here, before batching, so that a message names the caller's sentence index
  // (the workspace checks again, but only knows positions inside a batch).
  const ModelConfig& c = model().config();
  std::vector<std::int64_t> lengths;
  std::vector<std::int64_t> decoded;  // the sources that are not empty, by index
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::uint64_t sentence = ids[i];
    if (static_cast<std::int64_t>(sources[i].size()) > limits.max_source_length)
      throw error_of("sentence ", sentence, ": source has ", sources[i].size(), " tokens, more than max_source_length ",
                     limits.max_source_length);
    for (size_t k = 0; k < sources[i].size(); ++k)
      if (sources[i][k] < 0 || sources[i][k] >= c.src_vocab_size)
        throw error_of("sentence ", sentence, ": source token ", k, " has id ", sources[i][k],
                       ", outside the source vocabulary [0, ", c.src_vocab_size, ")");
    if (!prefixes.empty()) {
      const std::int64_t max_length = options.max_length_within(limits);
      if (options.prefix_bias_beta == 0 && !options.prefix_is_context &&
          static_cast<std::int64_t>(prefixes[i].size()) > max_length)
        throw error_of("sentence ", sentence, ": target prefix of ", prefixes[i].size(),
                       " tokens is longer than max_length ", max_length);
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
    SentenceResult empty = empty_result(options.num_hypotheses, prefixes.empty() ? std::span<const std::int32_t>() : prefixes[i],
                                        options.max_length_within(limits), options.return_attention);
    if (sink) sink(i, std::move(empty));
    else results[i] = std::move(empty);
  }
  if (decoded.empty()) return results;
  auto batches = make_batches(lengths, {limits.max_batch, limits.batch_tokens()});
  std::int64_t largest = 0, longest = 0;
  for (auto& batch : batches) {
    for (std::int64_t& i : batch) i = decoded[i];  // positions among the decoded → source indices
    largest = std::max<std::int64_t>(largest, static_cast<std::int64_t>(batch.size()));
  }
  for (const std::int64_t n : lengths) longest = std::max(longest, n);

  // Batches side by side, and compute threads each: the call's own (options.threads:
  // its batches one after another), or a lone batch gets every thread (a single call is
  // not slowed by a split made for throughput); a split that follows the work gives each
  // of min(batches, inter_threads) batches an equal share.
  const int all_threads = config_.threads * config_.inter_threads;
  const std::int64_t batch_count = static_cast<std::int64_t>(batches.size());
  const int side_by_side = !workers_ || batch_count == 1 || options.threads > 0 ? 1
                           : config_.split_follows_batches
                               ? static_cast<int>(std::min<std::int64_t>(config_.inter_threads, batch_count))
                               : config_.inter_threads;
  const int threads_each = config_.split_follows_batches ? std::max(1, all_threads / side_by_side) : config_.threads;
  if (side_by_side == 1) {
    const int threads = options.threads > 0 ? options.threads : workers_ ? all_threads : config_.threads;
    std::unique_ptr<Workspace> w = acquire(largest, longest, threads);
    try {
      for (const auto& batch : batches) decode_batch(*w, batch, sources, prefixes, options, ids, results, sink);
    } catch (...) {
      release(std::move(w));
      throw;
    }
    release(std::move(w));
    return results;
  }
  // Batches shared among the workers, each with a workspace of its own; results reach
  // the sink one at a time, so callers need no locking of their own.
  std::vector<std::unique_ptr<Workspace>> held(static_cast<size_t>(workers_->workers()));
  std::mutex sink_mutex;
  const ResultSink serial = sink ? ResultSink([&](std::size_t i, SentenceResult&& r) {
    std::lock_guard<std::mutex> lock(sink_mutex);
    sink(i, std::move(r));
  })
                                 : ResultSink();
  // Streamed tokens reach the caller one call at a time too (TranslationOptions::on_token):
  // the workers' copy of the options holds a lock around it.
  std::mutex token_mutex;
  DecodeOptions serial_options;
  const DecodeOptions* worker_options = &options;
  if (options.on_token) {
    serial_options = options;
    serial_options.on_token = [&](const TokenStep& step) {
      std::lock_guard<std::mutex> lock(token_mutex);
      return options.on_token(step);
    };
    worker_options = &serial_options;
  }
  auto release_all = [&] {
    for (auto& w : held)
      if (w) release(std::move(w));
  };
  // Largest batches first (padded source tokens: the encoder's and the cross
  // attention's work, and a proxy for the target length): workers taking batches from
  // the front then finish close together, instead of one running the longest batch alone
  // at the end. Results do not depend on the order (each sentence's draws use its id).
  std::vector<std::int64_t> order(batches.size());
  std::iota(order.begin(), order.end(), 0);
  auto padded_tokens = [&](std::int64_t b) {
    std::int64_t longest_source = 0;
    for (std::int64_t i : batches[b]) longest_source = std::max<std::int64_t>(longest_source, sources[i].size());
    return static_cast<std::int64_t>(batches[b].size()) * longest_source;
  };
  std::vector<std::int64_t> cost(batches.size());
  for (size_t b = 0; b < batches.size(); ++b) cost[b] = padded_tokens(static_cast<std::int64_t>(b));
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return cost[a] > cost[b]; });
  try {
    workers_->run(static_cast<std::int64_t>(batches.size()), [&](std::int64_t t, int worker) {
      if (!held[worker]) held[worker] = acquire(largest, longest, threads_each);
      decode_batch(*held[worker], batches[order[t]], sources, prefixes, *worker_options, ids, results, serial);
    }, side_by_side);
  } catch (...) {
    release_all();
    throw;
  }
  release_all();
  return results;
}

void Translator::decode_batch(Workspace& w, std::span<const std::int64_t> batch,
                              std::span<const std::vector<std::int32_t>> sources,
                              std::span<const std::vector<std::int32_t>> prefixes, const DecodeOptions& options,
                              SentenceIds ids, std::vector<SentenceResult>& results, const ResultSink& sink) const {
  std::vector<SourceRef> refs;
  refs.reserve(batch.size());
  for (std::int64_t i : batch) {
    SourceRef r;
    r.tokens = sources[i];
    if (!prefixes.empty()) r.target_prefix = prefixes[i];
    r.id = ids[static_cast<std::size_t>(i)];
    refs.push_back(r);
  }
  w.set_profiling(profiling_.load(std::memory_order_relaxed));
  w.decode(refs, options);
  collect_statistics(w);
  for (size_t b = 0; b < batch.size(); ++b) {
    if (!sink) {
      w.result(static_cast<std::int64_t>(b), results[batch[b]]);
      continue;
    }
    SentenceResult r;
    w.result(static_cast<std::int64_t>(b), r);
    sink(static_cast<std::size_t>(batch[b]), std::move(r));
  }
}

AttentionCapture Translator::trace_attention(std::span<const std::int32_t> source,
                                             std::span<const std::int32_t> outputs) const {
  const ModelConfig& c = model().config();
  const PlanLimits& limits = plan_->limits();
  const auto S = static_cast<std::int64_t>(source.size()), T = static_cast<std::int64_t>(outputs.size());
  if (S > limits.max_source_length)
    throw error_of("attention: the source has ", S, " tokens, more than max_source_length ", limits.max_source_length);
  if (T > limits.max_target_length)
    throw error_of("attention: the target has ", T, " tokens, more than max_target_length ", limits.max_target_length);
  for (std::int64_t k = 0; k < S; ++k)
    if (source[k] < 0 || source[k] >= c.src_vocab_size)
      throw error_of("attention: source token ", k, " has id ", source[k], ", outside the source vocabulary [0, ",
                     c.src_vocab_size, ")");
  for (std::int64_t k = 0; k < T; ++k)
    if (outputs[k] < 0 || outputs[k] >= c.tgt_vocab_size)
      throw error_of("attention: target token ", k, " has id ", outputs[k], ", outside the target vocabulary [0, ",
                     c.tgt_vocab_size, ")");
  AttentionCapture capture;
  if (S == 0) {
    capture.encoder_self.reset(c.encoder_layers, c.num_heads, 0, 0);
    capture.decoder_self.reset(c.decoder_layers, c.num_heads, 0, 0);
    capture.cross.reset(c.decoder_layers, c.num_heads, 0, 0);
    return capture;
  }
  std::unique_ptr<Workspace> w = acquire(1, S, workers_ ? config_.threads * config_.inter_threads : config_.threads);
  try {
    w->trace_attention(source, outputs, capture);
  } catch (...) {
    release(std::move(w));
    throw;
  }
  release(std::move(w));
  return capture;
}

std::size_t Translator::idle_workspaces() const {
  std::lock_guard lock(mutex_);
  return idle_.size();
}

std::vector<int> Translator::idle_workspace_threads() const {
  std::lock_guard lock(mutex_);
  std::vector<int> threads;
  for (const auto& w : idle_) threads.push_back(w->plan().limits().threads);
  return threads;
}

std::size_t Translator::idle_workspace_bytes() const {
  std::lock_guard lock(mutex_);
  std::size_t bytes = 0;
  for (const auto& w : idle_) bytes += w->reserved_bytes();
  return bytes;
}

void Translator::set_profiling(bool on) const { profiling_.store(on, std::memory_order_relaxed); }

std::vector<double> Translator::step_seconds() const {
  std::lock_guard lock(mutex_);
  return step_seconds_;
}

double Translator::search_seconds() const {
  std::lock_guard lock(mutex_);
  return search_seconds_;
}

DecodeCounters Translator::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

void Translator::reset_statistics() const {
  std::lock_guard lock(mutex_);
  std::fill(step_seconds_.begin(), step_seconds_.end(), 0.0);
  search_seconds_ = 0;
  counters_ = {};
}

}  // namespace attend::runtime
