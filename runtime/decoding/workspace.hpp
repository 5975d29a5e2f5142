// Per-call state for decoding with a shared plan: the arena, the live rows and their
// histories, the search scratch and the ended hypotheses — all reserved when the
// workspace is created, so decode() allocates nothing. One workspace per thread;
// any number of workspaces can share one plan and model.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "attend/ops/aligned_buffer.hpp"
#include "decoding/decoding.hpp"
#include "plan/execution_plan.hpp"
#include "decoding/hypothesis_store.hpp"
#include "plan/plan_executor.hpp"
#include "decoding/search.hpp"

namespace attend::runtime {

struct DecodeCounters {
  std::int64_t batches = 0, sentences = 0;
  std::int64_t source_tokens = 0;     // real (unpadded) source tokens encoded
  std::int64_t decoder_row_steps = 0; // live rows summed over decoder steps (tokens computed, pruned ones included)
  std::int64_t decoder_steps = 0;
};

class Workspace final : private Finisher {
 public:
  explicit Workspace(std::shared_ptr<const ExecutionPlan> plan);

  const ExecutionPlan& plan() const { return *plan_; }

  // Decodes one batch within the plan's limits; throws attend::Error (before any work)
  // on a batch or options the plan cannot take. Results stay until the next call.
  void decode(std::span<const SourceRef> batch, const DecodeOptions& options, LogitsObserver* observer = nullptr);
  // The best options.num_hypotheses hypotheses of sentence `b` of the last batch, always
  // that many (padded with empty ones of score −∞ when fewer ended).
  void result(std::int64_t b, SentenceResult& out) const;

  // Profiling: seconds per plan step (indexed like plan().steps()) and for the search,
  // summed over decode() calls while enabled.
  void set_profiling(bool on) { profiling_ = on; }
  std::span<const double> step_seconds() const { return step_seconds_; }
  double search_seconds() const { return search_seconds_; }
  const DecodeCounters& counters() const { return counters_; }
  void reset_statistics();

  std::size_t reserved_bytes() const;  // arena + decoding state

 private:
  void validate(std::span<const SourceRef> batch, const DecodeOptions& options) const;
  std::int64_t encode(std::span<const SourceRef> batch);  // returns the padded length
  void start_rows(std::span<const SourceRef> batch);
  std::int64_t select(std::int64_t step, std::int64_t rows, std::span<const SourceRef> batch, const DecodeOptions& o);
  void advance(std::int64_t step, std::int64_t next_rows);
  void keep_unfinished(std::int64_t rows, std::int64_t length);
  bool mark_non_finite_rows(std::int64_t rows);
  std::int64_t drop_non_finite(std::int64_t selected);
  float score(float log_prob, std::int64_t length) const;

  // Finisher: a hypothesis ended with end-of-sequence.
  void finish(std::int32_t sentence, std::int32_t parent, float log_prob, float eos_log_prob) override;
  std::int64_t finished(std::int32_t sentence) const override { return store_.count(sentence); }

  std::shared_ptr<const ExecutionPlan> plan_;
  ops::AlignedBuffer arena_;
  PlanExecutor exec_;
  std::int64_t T_;  // max target length = history length
  std::int64_t vocab_;

  // Live rows and their histories, double-buffered: a new row copies its parent's.
  std::vector<LiveRow> live_[2];
  std::vector<std::int32_t> tokens_[2];
  std::vector<float> log_probs_[2];
  std::vector<std::int32_t> next_table_;  // the new rows' cache-slot table, before it replaces the plan's
  std::vector<Selection> next_;
  std::vector<float> finish_scratch_;     // a hypothesis's log p's plus end-of-sequence
  std::vector<std::int32_t> source_lengths_;
  std::vector<std::uint8_t> non_finite_;  // per sentence of the batch: its logits were not finite
  int cur_ = 0;
  std::int64_t step_ = 0;
  const DecodeOptions* options_ = nullptr;  // valid during decode() only
  std::int64_t num_hypotheses_ = 1;

  HypothesisStore store_;
  GreedyScratch greedy_;
  BeamScratch beam_;
  SamplingScratch sampling_;

  bool profiling_ = false;
  std::vector<double> step_seconds_;
  double search_seconds_ = 0;
  DecodeCounters counters_;
};

}  // namespace attend::runtime
