// Per-call state for running an encoder plan: the plan's memory (PlanMemory, the piece
// every model kind's workspace holds) and what a batch needs beside it — nothing is
// allocated while running. One workspace per thread; any number share one plan.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "plan/encoder_executor.hpp"
#include "plan/encoder_plan.hpp"
#include "plan/plan_memory.hpp"

namespace attend::runtime {

// One input sequence: token ids and their token types (empty: all type 0).
struct SequenceRef {
  std::span<const std::int32_t> ids;
  std::span<const std::int32_t> types;
};

// The heads a call runs after the body (the last hidden state is always computed).
struct EncoderHeads {
  bool pooler = false;      // BERT's pooler output (models with a pooler)
  bool embedding = false;   // pooling, Dense modules, Normalize
  int normalize = -1;       // the embedding's L2 normalisation: -1 as the model (a Normalize
                            // module), 0 never, 1 always (sentence-transformers' normalize_embeddings)
  bool logits = false;      // the classification head (models with one)
};

struct EncoderCounters {
  std::int64_t batches = 0, sequences = 0, tokens = 0;
};

class EncoderWorkspace {
 public:
  explicit EncoderWorkspace(std::shared_ptr<const EncoderPlan> plan);

  const EncoderPlan& plan() const { return *plan_; }

  // Runs one batch within the plan's limits (throws attend::Error naming the sequence,
  // before any work, when it does not fit or holds an id or type outside the model's).
  // Results stay until the next call.
  void run(std::span<const SequenceRef> batch, const EncoderHeads& heads);

  // Every layer and head's self-attention of one sequence (AttentionCapture::
  // encoder_self; the decoder's maps stay empty): the body run on it alone, each
  // attention step also writing its weights. Throws as run() does.
  void trace_attention(const SequenceRef& sequence, AttentionCapture& capture);

  // Sequence b of the last batch: its last hidden state [length, D] (rows packed), and
  // the heads' rows.
  ops::ConstMatrix hidden(std::int64_t b) const;
  std::span<const float> pooler(std::int64_t b) const;
  std::span<const float> embedding(std::int64_t b) const;
  std::span<const float> logits(std::int64_t b) const;

  void set_profiling(bool on) { profiling_ = on; }
  std::span<const double> step_seconds() const { return memory_.step_seconds(); }
  std::span<const EncoderStepCost> step_costs() const { return step_costs_; }
  const EncoderCounters& counters() const { return counters_; }
  void reset_statistics();
  std::size_t reserved_bytes() const { return memory_.arena_bytes(); }

 private:
  void validate(std::span<const SequenceRef> batch) const;
  void fill_inputs(std::span<const SequenceRef> batch);  // the body's inputs, and shape_'s token and sequence counts
  std::span<const float> row(int buffer, std::int64_t b) const;

  std::shared_ptr<const EncoderPlan> plan_;
  PlanMemory memory_;
  EncoderExecutor exec_;
  EncoderShape shape_;
  bool profiling_ = false;
  std::vector<EncoderStepCost> step_costs_;  // one per plan step, added to while profiling
  EncoderCounters counters_;
};

}  // namespace attend::runtime
