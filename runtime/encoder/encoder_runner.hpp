// Running an encoder-only model over any number of sequences, thread-safe: batches
// formed by tokens (sorted by length, capped by sequences and by packed tokens — no
// padding), a pool of workspaces so concurrent calls each get their own, several
// batches at once on the translator's batch workers (inter_threads) with intra_threads
// compute threads each. Memory follows the work: a workspace's plan is sized for the
// batches it gets (tokens and sequences rounded up to a power of two), in which only
// the hidden state is as long as the batch (the sublayers run in chunks: encoder_plan.hpp),
// and the pool keeps, per thread count, the workspaces of the latest batch sizes only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "encoder/encoder_workspace.hpp"
#include "batching/batch_workers.hpp"
#include "batching/fork_guard.hpp"

namespace attend::runtime {

struct EncoderRunnerConfig {
  int threads = 1;                      // compute threads per batch (intra_threads)
  int inter_threads = 1;                // batches run at once by one call
  std::int64_t max_batch_size = 32;     // sequences per batch
  std::int64_t max_batch_tokens = 8192; // tokens per batch (packed)
  std::int64_t max_length = 0;          // tokens of one sequence (0: the model's positions)
};

// What one sequence gives, as asked (EncoderHeads); empty vectors for what was not.
struct SequenceOutput {
  std::int64_t length = 0;
  std::vector<float> hidden;     // [length, D], the last hidden state
  std::vector<float> pooler;     // [D]
  std::vector<float> embedding;  // [embedding_dim]
  std::vector<float> logits;     // [num_labels]
};

struct EncoderRunOptions {
  EncoderHeads heads;
  bool hidden = false;  // copy each sequence's last hidden state out
  // Compute threads of each batch of this call, which then runs its batches one after
  // another (0: as configured — a lone batch on every thread, several side by side). For
  // a caller that runs calls side by side itself and knows how many threads are free
  // (the server's lanes: one alone gets every thread, the results are the same bits either way).
  int threads = 0;
};

class EncoderRunner {
 public:
  EncoderRunner(std::shared_ptr<const EncoderModel> model, const EncoderRunnerConfig& config);

  using Sink = std::function<void(std::size_t i, SequenceOutput&& output)>;
  // `types`: empty, or one (possibly empty: all type 0) per sequence. With a `sink`,
  // each output goes there as soon as its batch ends (any order of i) and the returned
  // vector is empty. Throws attend::Error naming the sequence (index first_index + i).
  std::vector<SequenceOutput> run(std::span<const std::vector<std::int32_t>> ids,
                                  std::span<const std::vector<std::int32_t>> types, const EncoderRunOptions& options,
                                  const Sink& sink = {}, std::size_t first_index = 0) const;

  // Every layer and head's self-attention of one sequence (EncoderWorkspace::
  // trace_attention), on a workspace of the pool with all the runner's threads. Throws
  // attend::Error as run() does.
  AttentionCapture trace_attention(std::span<const std::int32_t> ids, std::span<const std::int32_t> types) const;

  // Why a sequence cannot run (empty, longer than max_length, an id or token type outside
  // the model's), or "" when it can. Tokens are counted from 1 ("token 3 of 5").
  std::string problem(std::span<const std::int32_t> ids, std::span<const std::int32_t> types) const;

  const EncoderPlan& plan() const { return *plan_; }  // at the configured limits
  const EncoderModel& model() const { return plan_->model(); }
  const EncoderRunnerConfig& config() const { return config_; }
  std::int64_t max_length() const { return plan_->limits().max_length; }

  // Profile and counters summed over every call (safe while others run).
  void set_profiling(bool on) const { profiling_.store(on, std::memory_order_relaxed); }
  std::vector<double> step_seconds() const;
  std::vector<EncoderStepCost> step_costs() const;  // one per plan step, as step_seconds
  EncoderCounters counters() const;
  void reset_statistics() const;
  // The compute threads of each workspace waiting for a call (the threads the batches of
  // the latest calls ran on).
  std::vector<int> idle_workspace_threads() const;

 private:
  std::shared_ptr<const EncoderPlan> plan_for(std::int64_t sequences, std::int64_t tokens, std::int64_t longest,
                                              int threads) const;
  std::unique_ptr<EncoderWorkspace> acquire(std::int64_t sequences, std::int64_t tokens, std::int64_t longest,
                                            int threads) const;
  void release(std::unique_ptr<EncoderWorkspace> w) const;
  // Throws attend::Error naming the sequence at index `sequence` if it cannot run
  // (problem() says why).
  void check(std::size_t sequence, std::span<const std::int32_t> ids, std::span<const std::int32_t> types) const;
  void collect_statistics(EncoderWorkspace& w) const;
  void run_batch(EncoderWorkspace& w, std::span<const std::int64_t> batch, std::span<const std::vector<std::int32_t>> ids,
                 std::span<const std::vector<std::int32_t>> types, const EncoderRunOptions& options,
                 std::vector<SequenceOutput>& results, const Sink& sink) const;

  EncoderRunnerConfig config_;
  std::shared_ptr<const EncoderPlan> plan_;
  std::unique_ptr<BatchWorkers> workers_;  // inter_threads > 1 only
  mutable ForkSafeMutex mutex_;            // guards everything below (fork waits for it)
  mutable std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, int>, std::shared_ptr<const EncoderPlan>> plans_;
  mutable std::vector<std::unique_ptr<EncoderWorkspace>> idle_;
  mutable std::vector<double> step_seconds_;
  mutable std::vector<EncoderStepCost> step_costs_;
  mutable EncoderCounters counters_;
  mutable std::atomic<bool> profiling_{false};
};

}  // namespace attend::runtime
