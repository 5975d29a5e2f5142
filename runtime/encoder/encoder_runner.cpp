#include "encoder/encoder_runner.hpp"

#include <algorithm>
#include <numeric>

#include "attend/error.hpp"
#include "batching/batching.hpp"

namespace attend::runtime {
namespace {

// Tokens per batch per compute thread, at most: every GEMM of the plan runs on chunks
// of at most this many rows anyway (encoder_plan.cpp), so a larger batch gains no
// speed, only a longer hidden state — memory stays flat whatever max_batch_tokens.
constexpr std::int64_t kBatchTokensPerThread = 512;

std::int64_t power_of_two_at_least(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

EncoderLimits limits_of(const EncoderRunnerConfig& config, const EncoderConfig& model) {
  EncoderLimits l;
  l.max_length = config.max_length > 0 ? std::min(config.max_length, model.max_positions()) : model.max_positions();
  l.max_batch = config.max_batch_size;
  l.max_tokens = std::max(config.max_batch_tokens, l.max_length);
  l.threads = config.threads;
  return l;
}

}  // namespace

EncoderRunner::EncoderRunner(std::shared_ptr<const EncoderModel> model, const EncoderRunnerConfig& config)
    : config_(config), plan_(EncoderPlan::compile(model, limits_of(config, model->config()))),
      step_seconds_(plan_->steps().size(), 0.0),
      step_costs_(plan_->steps().size()) {
  if (config.inter_threads < 1 || config.inter_threads > 1024)
    throw error_of("inter_threads = ", config.inter_threads, ": must be in [1, 1024]");
  if (std::int64_t{config.inter_threads} * config.threads > 4096)
    throw error_of("inter_threads × intra_threads = ", config.inter_threads, " × ", config.threads, ": at most 4096 threads in all");
  if (config.inter_threads > 1) workers_ = std::make_unique<BatchWorkers>(config.inter_threads);
}

// A plan for batches of `sequences` sequences, `tokens` tokens and sequences of `longest`
// tokens at most, each rounded up to a power of two: its memory follows the sequences it
// runs, not the longest the model could take (the positions, which ids may reach).
std::shared_ptr<const EncoderPlan> EncoderRunner::plan_for(std::int64_t sequences, std::int64_t tokens, std::int64_t longest,
                                                          int threads) const {
  const EncoderLimits& full = plan_->limits();
  const std::int64_t capacity = std::min(power_of_two_at_least(sequences), full.max_batch);
  const std::int64_t length = std::min(power_of_two_at_least(longest), full.max_length);
  const std::int64_t rows = std::min(std::max(power_of_two_at_least(tokens), length), full.max_tokens);
  if (capacity == full.max_batch && rows == full.max_tokens && length == full.max_length && threads == full.threads)
    return plan_;
  std::lock_guard lock(mutex_);
  auto& plan = plans_[{capacity, rows, length, threads}];
  if (!plan) {
    EncoderLimits l = full;
    l.max_batch = capacity, l.max_tokens = rows, l.max_length = length, l.threads = threads;
    plan = EncoderPlan::compile(plan_->model_ptr(), l);
  }
  return plan;
}

// An idle workspace that holds the batch, or a new one that supersedes the idle ones of
// its thread count too small for it (as the translator's). Those of other thread counts
// stay: a lone batch gets every thread, a call of many batches a share each, and a
// server's lanes alternate between the two (one alone, several at once) — dropping them
// would make a workspace anew at every turn.
std::unique_ptr<EncoderWorkspace> EncoderRunner::acquire(std::int64_t sequences, std::int64_t tokens, std::int64_t longest,
                                                          int threads) const {
  {
    std::lock_guard lock(mutex_);
    auto same_threads = [&](const auto& w) { return w->plan().limits().threads == threads; };
    auto best = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      const EncoderLimits& l = (*it)->plan().limits();
      if (same_threads(*it) && l.max_batch >= sequences && l.max_tokens >= tokens && l.max_length >= longest &&
          (best == idle_.end() || (*it)->plan().arena_bytes() < (*best)->plan().arena_bytes()))
        best = it;
    }
    if (best != idle_.end()) {
      std::unique_ptr<EncoderWorkspace> w = std::move(*best);
      idle_.erase(best);
      return w;
    }
    for (const auto& w : idle_) {
      if (!same_threads(w)) continue;
      sequences = std::max(sequences, w->plan().limits().max_batch);
      tokens = std::max(tokens, w->plan().limits().max_tokens);
      longest = std::max(longest, w->plan().limits().max_length);
    }
    std::erase_if(idle_, same_threads);
  }
  const auto plan = plan_for(sequences, tokens, longest, threads);
  try {
    return std::make_unique<EncoderWorkspace>(plan);
  } catch (const std::bad_alloc&) {
    throw error_of("cannot allocate an encoder workspace of ", plan->arena_bytes() >> 20, " MiB for batches of ",
                   plan->limits().max_tokens, " tokens: lower max_batch_tokens");
  }
}

void EncoderRunner::release(std::unique_ptr<EncoderWorkspace> w) const {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(w));
}

void EncoderRunner::collect_statistics(EncoderWorkspace& w) const {
  std::lock_guard lock(mutex_);
  const auto seconds = w.step_seconds();
  for (size_t i = 0; i < seconds.size() && i < step_seconds_.size(); ++i) step_seconds_[i] += seconds[i];
  const auto costs = w.step_costs();
  for (size_t i = 0; i < costs.size() && i < step_costs_.size(); ++i) {
    step_costs_[i].quantize_seconds += costs[i].quantize_seconds;
    step_costs_[i].multiply_adds += costs[i].multiply_adds;
  }
  counters_.batches += w.counters().batches;
  counters_.sequences += w.counters().sequences;
  counters_.tokens += w.counters().tokens;
  w.reset_statistics();
}

std::string EncoderRunner::problem(std::span<const std::int32_t> ids, std::span<const std::int32_t> types) const {
  const EncoderConfig& c = model().config();
  const auto n = static_cast<std::int64_t>(ids.size());
  const auto token = [&](std::int64_t k) { return "token " + std::to_string(k + 1) + " of " + std::to_string(n); };
  if (n == 0) return "no tokens (an encoder needs at least one)";
  if (n > plan_->limits().max_length)
    return std::to_string(n) + " tokens, more than max_length " + std::to_string(plan_->limits().max_length) +
           " (the model's positions, or the limit asked for): truncate it first";
  for (std::int64_t k = 0; k < n; ++k)
    if (ids[k] < 0 || ids[k] >= c.vocab_size)
      return "id " + std::to_string(ids[k]) + " (" + token(k) + ") is outside the vocabulary [0, " +
             std::to_string(c.vocab_size) + ")";
  if (types.empty()) return {};
  if (types.size() != ids.size()) return std::to_string(types.size()) + " token types for " + std::to_string(n) + " tokens";
  // A model without token type embeddings (DistilBERT) does not use them: a pair's
  // types are ignored, as transformers' tokenizers for such models do not make them.
  if (c.type_vocab_size == 0) return {};
  for (std::int64_t k = 0; k < n; ++k)
    if (types[k] < 0 || types[k] >= c.type_vocab_size)
      return "token type " + std::to_string(types[k]) + " (" + token(k) + ") is not one of the model's " +
             std::to_string(c.type_vocab_size) + " token type(s)";
  return {};
}

void EncoderRunner::check(std::size_t sequence, std::span<const std::int32_t> ids,
                          std::span<const std::int32_t> types) const {
  if (std::string why = problem(ids, types); !why.empty()) throw error_of("sequence at index ", sequence, ": ", why);
}

AttentionCapture EncoderRunner::trace_attention(std::span<const std::int32_t> ids,
                                                std::span<const std::int32_t> types) const {
  check(0, ids, types);
  AttentionCapture capture;
  const auto n = static_cast<std::int64_t>(ids.size());
  std::unique_ptr<EncoderWorkspace> w = acquire(1, n, n, workers_ ? config_.threads * config_.inter_threads : config_.threads);
  try {
    w->trace_attention({ids, types}, capture);
  } catch (...) {
    release(std::move(w));
    throw;
  }
  release(std::move(w));
  return capture;
}

std::vector<SequenceOutput> EncoderRunner::run(std::span<const std::vector<std::int32_t>> ids,
                                               std::span<const std::vector<std::int32_t>> types,
                                               const EncoderRunOptions& options, const Sink& sink,
                                               std::size_t first_index) const {
  if (!types.empty() && types.size() != ids.size())
    throw error_of("encoder: ", types.size(), " token type lists for ", ids.size(), " sequences");
  if (options.threads < 0 || options.threads > 1024)
    throw error_of("encoder: threads = ", options.threads, " for a call: must be in [1, 1024] (0: as configured)");
  const EncoderLimits& limits = plan_->limits();
  std::vector<std::int64_t> lengths(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    check(first_index + i, ids[i], types.empty() ? std::span<const std::int32_t>() : types[i]);
    lengths[i] = static_cast<std::int64_t>(ids[i].size());
  }
  std::vector<SequenceOutput> results(sink ? 0 : ids.size());
  if (ids.empty()) return results;
  // Each batch's threads: the call's, or a lone batch gets every thread (a single call
  // is not slowed by a split made for throughput), or several run side by side with
  // intra_threads each.
  const int all_threads = workers_ ? config_.threads * config_.inter_threads : config_.threads;
  const int lone_threads = options.threads > 0 ? options.threads : all_threads;
  const std::int64_t batch_tokens = std::min(
      limits.max_tokens,
      std::max(limits.max_length, kBatchTokensPerThread * (options.threads > 0 ? options.threads : config_.threads)));
  const auto batches = make_batches(lengths, {limits.max_batch, batch_tokens, /*packed=*/true});
  std::int64_t largest = 0, most_tokens = 0;
  const std::int64_t longest = lengths.empty() ? 1 : *std::max_element(lengths.begin(), lengths.end());
  for (const auto& batch : batches) {
    largest = std::max<std::int64_t>(largest, static_cast<std::int64_t>(batch.size()));
    std::int64_t tokens = 0;
    for (std::int64_t i : batch) tokens += lengths[i];
    most_tokens = std::max(most_tokens, tokens);
  }
  if (!workers_ || batches.size() == 1 || options.threads > 0) {
    std::unique_ptr<EncoderWorkspace> w = acquire(largest, most_tokens, longest, lone_threads);
    try {
      for (const auto& batch : batches) run_batch(*w, batch, ids, types, options, results, sink);
    } catch (...) {
      release(std::move(w));
      throw;
    }
    release(std::move(w));
    return results;
  }
  std::vector<std::unique_ptr<EncoderWorkspace>> held(static_cast<size_t>(workers_->workers()));
  std::mutex sink_mutex;
  const Sink serial = sink ? Sink([&](std::size_t i, SequenceOutput&& r) {
    std::lock_guard<std::mutex> lock(sink_mutex);
    sink(i, std::move(r));
  })
                           : Sink();
  auto release_all = [&] {
    for (auto& w : held)
      if (w) release(std::move(w));
  };
  // Longest batches first, so the workers finish together.
  std::vector<std::int64_t> order(batches.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return lengths[batches[a].back()] > lengths[batches[b].back()];
  });
  try {
    workers_->run(static_cast<std::int64_t>(batches.size()), [&](std::int64_t t, int worker) {
      if (!held[worker]) held[worker] = acquire(largest, most_tokens, longest, config_.threads);
      run_batch(*held[worker], batches[order[t]], ids, types, options, results, serial);
    });
  } catch (...) {
    release_all();
    throw;
  }
  release_all();
  return results;
}

void EncoderRunner::run_batch(EncoderWorkspace& w, std::span<const std::int64_t> batch,
                              std::span<const std::vector<std::int32_t>> ids, std::span<const std::vector<std::int32_t>> types,
                              const EncoderRunOptions& options, std::vector<SequenceOutput>& results, const Sink& sink) const {
  std::vector<SequenceRef> refs;
  refs.reserve(batch.size());
  for (std::int64_t i : batch) refs.push_back({ids[i], types.empty() ? std::span<const std::int32_t>() : types[i]});
  w.set_profiling(profiling_.load(std::memory_order_relaxed));
  w.run(refs, options.heads);
  collect_statistics(w);
  auto copy = [](std::span<const float> v) { return std::vector<float>(v.begin(), v.end()); };
  for (size_t b = 0; b < batch.size(); ++b) {
    const auto s = static_cast<std::int64_t>(b);
    SequenceOutput out;
    out.length = static_cast<std::int64_t>(refs[b].ids.size());
    if (options.hidden) {
      const ops::ConstMatrix h = w.hidden(s);
      out.hidden.resize(static_cast<size_t>(h.rows * h.cols));
      for (std::int64_t r = 0; r < h.rows; ++r) std::copy_n(h.row(r), h.cols, out.hidden.data() + r * h.cols);
    }
    if (options.heads.pooler) out.pooler = copy(w.pooler(s));
    if (options.heads.embedding) out.embedding = copy(w.embedding(s));
    if (options.heads.logits) out.logits = copy(w.logits(s));
    if (sink) sink(static_cast<std::size_t>(batch[b]), std::move(out));
    else results[batch[b]] = std::move(out);
  }
}

std::vector<double> EncoderRunner::step_seconds() const {
  std::lock_guard lock(mutex_);
  return step_seconds_;
}

std::vector<EncoderStepCost> EncoderRunner::step_costs() const {
  std::lock_guard lock(mutex_);
  return step_costs_;
}

std::vector<int> EncoderRunner::idle_workspace_threads() const {
  std::lock_guard lock(mutex_);
  std::vector<int> threads;
  for (const auto& w : idle_) threads.push_back(w->plan().limits().threads);
  return threads;
}

EncoderCounters EncoderRunner::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

void EncoderRunner::reset_statistics() const {
  std::lock_guard lock(mutex_);
  std::fill(step_seconds_.begin(), step_seconds_.end(), 0.0);
  std::fill(step_costs_.begin(), step_costs_.end(), EncoderStepCost{});
  counters_ = {};
}

}  // namespace attend::runtime
