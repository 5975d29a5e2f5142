// Translating any number of sentences with a shared model: batching (sorted by length,
// capped by sentences and padded tokens), a pool of workspaces so that concurrent calls
// from several threads each get their own, results in input order.
//
// Memory follows the work, not the limits: the plan at the configured limits says what
// the translator accepts (and what `attend plan` shows), but each workspace is built
// from a plan for the batches it really gets — sentences rounded up to a power of two,
// padded tokens to what that many sentences can hold — so one short line with a
// 20000-sentence limit costs what one short line needs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <tuple>
#include <vector>

#include "batching/batch_workers.hpp"
#include "batching/batching.hpp"
#include "batching/fork_guard.hpp"
#include "decoding/decoding.hpp"
#include "plan/execution_plan.hpp"
#include "decoding/workspace.hpp"

namespace attend::runtime {

struct TranslatorConfig {
  int threads = 1;                      // compute threads per batch (intra_threads)
  int inter_threads = 1;                // batches decoded at once by one call (at most)
  // The split follows the work: a call with B batches decodes min(B, inter_threads) of
  // them side by side, each with inter_threads × threads / that many compute threads.
  // Otherwise the split is fixed (a call's lone batch still gets every thread).
  bool split_follows_batches = false;
  std::int64_t max_batch_size = 32;     // sentences per batch
  std::int64_t max_batch_tokens = 0;    // padded source tokens per batch (0: no cap beyond the plan's)
  std::int64_t max_source_length = 256; // longer sources are rejected (the CLI truncates first)
  std::int64_t max_target_length = 256; // upper bound for DecodeOptions::max_length
  std::int64_t max_beam_size = 1;       // upper bound for DecodeOptions::beam_size

  PlanLimits plan_limits(const ModelConfig& model) const;
};

// A source with no content, as CTranslate2 tells it: no token besides the BOS/EOS the
// model adds, and no token of the caller's but a lone BOS or EOS, a leading BOS, a
// trailing EOS (or EOS + language code) — "</s>", "<s> </s>", "</s> x" are empty. It is
// not run through the model: an empty line in, an empty line out, whichever way it
// arrives.
bool is_empty_source(std::span<const std::int32_t> ids, const ModelConfig& config);

// What an empty source translates to, as CTranslate2's skip_translation: `n` hypotheses,
// each the forced target prefix (cut to max_length; usually none) ending at once with
// certainty — log p 0, score 0 — so every caller finds the hypotheses it asked for.
// `attention`: one (empty) row per token, which the API widens with zeros.
SentenceResult empty_result(std::int64_t n, std::span<const std::int32_t> prefix, std::int64_t max_length,
                            bool attention);

// The ids of a call's sentences, which seed their sampling (with the options' seed) and
// number them in messages and TokenStep: sentence i is first + i, or each[i] when given.
// A sentence's draws are a function of its id alone, never of the batch, chunk or
// thread it lands in: a caller that splits an input numbers each part from where it
// starts, and a pass over a subset of a call's sentences keeps their ids.
struct SentenceIds {
  std::uint64_t first = 0;
  std::span<const std::uint64_t> each;  // empty: first + i
  SentenceIds(std::uint64_t first_id = 0) : first(first_id) {}  // NOLINT: a first id is the common case
  explicit SentenceIds(std::span<const std::uint64_t> ids) : each(ids) {}
  std::uint64_t operator[](std::size_t i) const { return each.empty() ? first + i : each[i]; }
};

class Translator {
 public:
  Translator(std::shared_ptr<const Model> model, const TranslatorConfig& config);

  // Receives sentence i's result as soon as its batch finishes (batches run in length
  // order, so any order of i).
  using ResultSink = std::function<void(std::size_t i, SentenceResult&& result)>;

  // Thread-safe. `prefixes`, if given, has one (possibly empty) forced target prefix per
  // source. Sentence i draws its samples with id ids[i]. With a `sink`, results go there
  // (by position i in `sources`) and the returned vector is empty.
  std::vector<SentenceResult> translate(std::span<const std::vector<std::int32_t>> sources, const DecodeOptions& options,
                                        std::span<const std::vector<std::int32_t>> prefixes = {},
                                        SentenceIds ids = {}, const ResultSink& sink = {}) const;

  // Every layer and head's attention of `source` producing `outputs` (Workspace::
  // trace_attention), on a workspace of the pool with all the translator's threads.
  // Throws attend::Error naming the limit or the id at fault. An empty source is not run:
  // every map has 0 rows and columns, as an empty source is translated without the model.
  AttentionCapture trace_attention(std::span<const std::int32_t> source, std::span<const std::int32_t> outputs) const;

  const ExecutionPlan& plan() const { return *plan_; }
  const TranslatorConfig& config() const { return config_; }
  const Model& model() const { return plan_->model(); }

  // Profile and counters summed over every call (for `attend bench`). Safe from any
  // thread while others translate: each call's workspace adds its figures to these
  // totals under the lock after every batch, and reads the profiling switch before it.
  void set_profiling(bool on) const;
  std::vector<double> step_seconds() const;
  double search_seconds() const;
  DecodeCounters counters() const;
  void reset_statistics() const;

  // The plan a workspace for batches of up to `sentences` sources of up to
  // `source_length` tokens is built from: each rounded up to a power of two, within the
  // configured limits (memory follows the work, not the limits), with `threads` compute
  // threads (intra_threads for batches decoded side by side; all of them for a call's
  // lone batch).
  std::shared_ptr<const ExecutionPlan> plan_for(std::int64_t sentences, std::int64_t source_length, int threads) const;
  // The workspaces waiting for a call, and the memory they hold.
  std::size_t idle_workspaces() const;
  std::vector<int> idle_workspace_threads() const;  // each idle workspace's compute threads
  std::size_t idle_workspace_bytes() const;

 private:
  // return_alternatives (alternatives.cpp): two passes of translate().
  std::vector<SentenceResult> translate_alternatives(std::span<const std::vector<std::int32_t>> sources,
                                                     const DecodeOptions& options,
                                                     std::span<const std::vector<std::int32_t>> prefixes,
                                                     SentenceIds ids, const ResultSink& sink) const;
  std::unique_ptr<Workspace> acquire(std::int64_t sentences, std::int64_t source_length, int threads) const;
  void release(std::unique_ptr<Workspace> w) const;
  void collect_statistics(Workspace& w) const;
  // Decodes one batch (indices into sources) on `w` and hands its results on.
  void decode_batch(Workspace& w, std::span<const std::int64_t> batch, std::span<const std::vector<std::int32_t>> sources,
                    std::span<const std::vector<std::int32_t>> prefixes, const DecodeOptions& options,
                    SentenceIds ids, std::vector<SentenceResult>& results, const ResultSink& sink) const;

  TranslatorConfig config_;
  std::shared_ptr<const ExecutionPlan> plan_;  // at the configured limits
  std::unique_ptr<BatchWorkers> workers_;      // inter_threads > 1 only
  mutable ForkSafeMutex mutex_;                // guards everything below (fork waits for it)
  // By (max_batch, max_source_length, threads).
  mutable std::map<std::tuple<std::int64_t, std::int64_t, int>, std::shared_ptr<const ExecutionPlan>> plans_;
  mutable std::vector<std::unique_ptr<Workspace>> idle_;
  mutable std::vector<double> step_seconds_;
  mutable double search_seconds_ = 0;
  mutable DecodeCounters counters_;
  mutable std::atomic<bool> profiling_{false};
};

}  // namespace attend::runtime
