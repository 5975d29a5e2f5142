// Per-call state for decoding with a shared plan: the arena (PlanMemory, the piece every
// model kind's workspace holds), and the decoding loop's own — the live rows and their
// histories, the search scratch and the registered hypotheses — all reserved when the
// workspace is created (attention histories: when a decode first asks for them), so the
// decode loop allocates nothing. One workspace per thread; any number of workspaces can
// share one plan and model.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "attend/ops/aligned_buffer.hpp"
#include "decoding/decoding.hpp"
#include "decoding/hypothesis_store.hpp"
#include "decoding/logits_rules.hpp"
#include "decoding/search.hpp"
#include "decoding/transformers_rules.hpp"
#include "plan/execution_plan.hpp"
#include "plan/plan_memory.hpp"
#include "plan/plan_executor.hpp"

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
  // The best options.num_hypotheses hypotheses of sentence `b` of the last batch (none
  // if its logits were not finite: SentenceResult::non_finite).
  void result(std::int64_t b, SentenceResult& out) const;

  // Every layer and head's attention of `source` producing `outputs` (the tokens a decode
  // gave, a final end token included): the source through the encoder, then the decoder
  // teacher-forced, one step per output — the plan, kernels and caches a decode uses,
  // each attention step also writing its weights into `capture` (sized here). The
  // caller checks the source and outputs against the plan's limits and vocabularies.
  void trace_attention(std::span<const std::int32_t> source, std::span<const std::int32_t> outputs,
                       AttentionCapture& capture);

  // Profiling: seconds per plan step (indexed like plan().steps()) and for the search,
  // summed over decode() calls while enabled.
  void set_profiling(bool on) { profiling_ = on; }
  std::span<const double> step_seconds() const { return memory_.step_seconds(); }
  double search_seconds() const { return search_seconds_; }
  const DecodeCounters& counters() const { return counters_; }
  void reset_statistics();

  std::size_t reserved_bytes() const;  // arena + decoding state

 private:
  void validate(std::span<const SourceRef> batch, const DecodeOptions& options) const;
  // Returns the padded length; `capture`: see trace_attention.
  std::int64_t encode(std::span<const SourceRef> batch, AttentionCapture* capture = nullptr);
  // Row r's decoder inputs for step t besides its token: its position, the query position
  // and zero embedding of CTranslate2's one-pass prefix (`pass` steps of it; 0: none),
  // the keys it sees, its cache slot.
  void write_step_inputs(std::int64_t t, std::int64_t r, std::int64_t pass);
  void start_rows(std::span<const SourceRef> batch, std::int64_t draws);
  void prepare_attention(std::int64_t rows, std::int64_t source_length);
  void record_attention(std::int64_t step, std::int64_t rows);
  void apply_logits_rules(std::int64_t step, std::int64_t rows);
  void apply_transformers_rules(std::int64_t step, std::int64_t rows);  // transformers_rules.cpp
  // use_vmap: a row whose sentence has candidates gets its logits outside them −∞, the
  // rules, and its log-softmax recomputed; returns false for a row without.
  bool restrict_to_candidates(std::int64_t step, std::int64_t row, float* logits, float* log_probs);
  std::int64_t select(std::int64_t step, std::int64_t rows);
  void advance(std::int64_t step, std::int64_t next_rows);
  bool mark_non_finite_rows(std::int64_t rows);
  std::int64_t drop_non_finite(std::int64_t selected);

  // Where a sentence's generated tokens start, as the rules, lengths and scores count
  // them: after a context prefix, else at 0 (a CTranslate2 target prefix counts).
  std::int64_t prefix_offset(std::int32_t sentence) const;
  // Steps [0, n) of `sentence` that CTranslate2 runs as one sequence (see
  // DecodeOptions::one_pass_prefix_tail); 0 when it does not.
  std::int64_t one_pass_steps(std::int32_t sentence) const;
  float coverage(std::int64_t step, std::int64_t row, std::int64_t from_step);

  // Finisher: a hypothesis ended (end token or last step).
  void finish(std::int32_t sentence, const Selection& last, bool ended) override;
  // Streaming (options_->on_token): hands one chosen token of batch sentence `sentence`
  // to the callback; returns whether it asked to stop that row.
  bool stream_token(std::int32_t sentence, std::int32_t draw, std::int32_t token, float log_prob, bool last);
  // The continuing rows' tokens of this step, streamed; the rows the callback stopped
  // become unfinished hypotheses and leave next_. Returns the rows that go on.
  std::int64_t stream_step(std::int64_t rows);
  std::int64_t registered(std::int32_t sentence) const override { return registered_[sentence]; }

  std::shared_ptr<const ExecutionPlan> plan_;
  PlanMemory memory_;  // the arena the plan runs in (attention caches included)
  PlanExecutor exec_;
  std::int64_t T_;  // max target length = history length
  std::int64_t vocab_;

  // Live rows and their histories, double-buffered: a new row copies its parent's.
  std::vector<LiveRow> live_[2];
  std::vector<std::int32_t> tokens_[2];
  std::vector<float> log_probs_[2];
  std::vector<std::int32_t> next_table_;  // the new rows' cache-slot table, before it replaces the plan's
  std::vector<Selection> next_;
  std::vector<float> finish_scratch_;     // a hypothesis' log p's
  std::vector<std::int32_t> finish_tokens_;
  std::vector<float> rules_scratch_;
  std::vector<float> row_shift_;  // per live row: add to its log p's (in-place renormalisation)
  bool shifted_ = false;          // some row_shift_ is not 0 this step
  std::vector<std::int32_t> source_lengths_;
  std::vector<std::int64_t> registered_;
  std::vector<std::uint8_t> last_step_;
  std::vector<std::uint8_t> non_finite_;  // per sentence of the batch: its logits were not finite
  std::vector<std::uint8_t> finite_rows_; // per decoder row of this step: its logits were all finite
  std::vector<std::uint8_t> recompute_rows_;  // per decoder row of this step: the rules changed its logits
  std::vector<std::span<const std::int32_t>> candidates_;  // per sentence of the batch (use_vmap; empty: all)
  int cur_ = 0;
  std::int64_t step_ = 0;

  // Per decode() call: the options, the batch, the end tokens and the rules.
  const DecodeOptions* options_ = nullptr;
  bool stopping_ = false;  // ending a row on_token stopped: finish() streams no token
  std::span<const SourceRef> batch_;
  std::vector<std::int32_t> end_ids_;
  LogitsRules rules_;
  bool attention_ = false;  // the alignment step runs and its rows are kept
  std::int64_t num_hypotheses_ = 1;
  bool keep_end_token_ = false;

  // Attention histories: [step][row][source] of the rows live at each step, and each
  // row's parent among the previous step's rows, so that a hypothesis' attention is
  // followed back from its last row instead of copied at every step.
  std::vector<float> attention_rows_;
  std::vector<std::int32_t> parents_;
  std::int64_t attention_stride_rows_ = 0, attention_source_ = 0;

  HypothesisStore store_;
  GreedyScratch greedy_;
  BeamScratch beam_;
  TransformersBeamState transformers_beam_;
  std::vector<std::int32_t> history_;  // transformers' rules: the decoder start token, then the row's tokens
  SamplingScratch sampling_;

  bool profiling_ = false;
  double search_seconds_ = 0;
  DecodeCounters counters_;
};

}  // namespace attend::runtime
