// The static execution plan of an encoder-only model: its layers compiled for shape
// limits into a flat list of steps over buffers placed once in one arena (the arena
// planner and buffer types of execution_plan.hpp).
//
// Without padding: a batch's sequences are packed one after another into a single
// [tokens, d] matrix, so the GEMMs, LayerNorms and GELUs run on real tokens only — no
// row is ever a pad — and the fused attention (ops::attention, online softmax) runs per
// sequence over its own rows. Each sublayer runs a chunk of rows at a time (a row
// group): the attention's QKV projection, attention and output projection on whole
// sequences of up to a few hundred tokens, the feed-forward's fc1 and fc2 on 128 rows per
// thread. So only the [tokens, d] hidden state is as long as the batch: the [tokens, 3d]
// QKV, the context and the [tokens, ffn] intermediate hold one chunk, which stays in
// cache from the GEMM that writes it to the one that reads it. Four phases:
//   body        (rows = the batch's tokens) embeddings, layers → the last hidden state
//   pooler      (rows = sequences) BERT's pooler: tanh(dense(first token))
//   embedding   (rows = sequences) pooling (sentence-transformers' modes), Dense, Normalize
//   classifier  (rows = sequences) a *ForSequenceClassification head → logits
// A call runs the body and the heads it asks for.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/encoder_model.hpp"
#include "plan/execution_plan.hpp"

namespace attend::runtime {

struct EncoderLimits {
  std::int64_t max_batch = 32;     // sequences in one batch
  std::int64_t max_tokens = 8192;  // tokens in one batch, packed (the sum of its lengths)
  std::int64_t max_length = 512;   // tokens of one sequence
  int threads = 1;
  // Throws attend::Error naming the limit at fault.
  void validate(const EncoderConfig& config) const;
};

// Rows of the feed-forward sublayer per chunk, per thread, for an intermediate
// `ffn_width` wide: as many as keep its fp32 chunk within 3/4 of a core's L2, in
// multiples of 16 from 32 to 128 (encoder_plan.cpp says why).
std::int64_t feed_forward_chunk_rows_per_thread(std::int64_t ffn_width);

enum class EncoderPhase { body, pooler, embedding, classifier };
const char* encoder_phase_name(EncoderPhase p);

enum class EncoderStepKind {
  embed,        // out = token table[token] + positions[position] (+ the token type's delta)
  layer_norm,   // out = LN(in); in place allowed
  linear,       // out = act(in·Wᵀ + b) (+ residual)
  attention,    // out = attention of each sequence's rows of the fused QKV `in`
  first_token,  // out[s] = in[first token of sequence s]
  pool,         // out[s] = pooling of in's rows of sequence s
  tanh,         // out = tanh(out)
  normalize,    // out[s] = out[s] / max(‖out[s]‖₂, 1e-12), when the call asks (EncoderShape)
  outlier_rows, // out = [count, rows…]: the rows of `in` an int8 GEMM would lose (outlier_rows.hpp)
};
const char* encoder_step_kind_name(EncoderStepKind k);

struct EncoderStep {
  EncoderStepKind kind = EncoderStepKind::linear;
  EncoderPhase phase = EncoderPhase::body;
  std::string name;  // "encoder.layers.3.fc1"
  std::int64_t layer = -1;
  Operand in, out, residual;
  const Linear* linear = nullptr;
  ops::Activation activation = ops::Activation::none;
  int outliers = -1;  // linear: the outlier_rows list whose rows get int8's second term
  // layer_norm: where it writes its output rows' ops::RowMagnitude; outlier_rows: where
  // it reads them (-1: it measures `in` itself).
  int magnitudes = -1;
  const LayerNormWeights* norm = nullptr;
  Pooling pooling = Pooling::mean;
  int group = -1;  // ≥ 0: a step of row group EncoderPlan::groups()[group] (consecutive in
                   // the plan): the group's steps run in order over one chunk of rows,
                   // then over the next
  int threads = 1;
  double flops = 0, bytes = 0;  // at the limits
};

class EncoderPlan {
 public:
  static std::shared_ptr<const EncoderPlan> compile(std::shared_ptr<const EncoderModel> model, const EncoderLimits& limits);

  const EncoderModel& model() const { return *model_; }
  const std::shared_ptr<const EncoderModel>& model_ptr() const { return model_; }
  const EncoderLimits& limits() const { return limits_; }
  const std::vector<EncoderStep>& steps() const { return steps_; }
  const std::vector<PlanBuffer>& buffers() const { return buffers_; }
  std::size_t arena_bytes() const { return arena_bytes_; }
  std::size_t buffers_bytes() const { return buffers_bytes_; }
  // How a row group's rows are cut: chunks of at most `rows` rows, each ending where a
  // sequence ends if `whole_sequences` (a sequence is never longer than `rows`).
  struct RowGroup {
    std::int64_t rows = 0;
    bool whole_sequences = false;
  };
  const std::vector<RowGroup>& groups() const { return groups_; }
  // Whether a buffer holds one chunk of a row group (its row 0 is the chunk's first row)
  // rather than every row.
  bool holds_chunk(int buffer) const { return buffer >= 0 && chunk_buffers_[buffer]; }
  std::string describe() const;

  // Buffers the workspace fills before the body runs or reads after a phase.
  struct Io {
    int tokens, positions, types;  // [tokens] i32
    int starts;                    // [batch + 1] i32: sequence s is rows starts[s] … starts[s+1]−1
    int hidden;                    // [tokens, D]: the last hidden state
    int pooler = -1;               // [batch, D]
    int embedding;                 // [batch, embedding_dim]
    int logits = -1;               // [batch, num_labels]
  };
  const Io& io() const { return io_; }

 private:
  friend class EncoderPlanBuilder;
  std::shared_ptr<const EncoderModel> model_;
  EncoderLimits limits_;
  std::vector<EncoderStep> steps_;
  std::vector<PlanBuffer> buffers_;
  std::size_t arena_bytes_ = 0, buffers_bytes_ = 0;
  std::vector<RowGroup> groups_;
  std::vector<bool> chunk_buffers_;
  Io io_{};
};

}  // namespace attend::runtime
