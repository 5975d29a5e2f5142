// The static execution plan: a model compiled for shape limits into a flat list of
// steps, every intermediate buffer at a fixed offset of one arena.
//
// Two phases: the encoder (once per batch: embed, layers, the stacked cross-attention
// K/V projection) and the decoder step (once per generated token: embed one token per
// row, layers against the KV cache, output projection, log-softmax). Steps name their
// operands as columns of arena buffers; the phase gives the row count at run time
// (padded source tokens, or live decoder rows). Buffers are placed by liveness
// (arena_planner.hpp); decoder state carried from one step to the next (KV caches,
// row tables, cross K/V) is alive for the whole decoder phase.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace attend::runtime {

struct PlanLimits {
  std::int64_t max_batch = 32;          // sentences in one batch
  std::int64_t max_source_length = 256; // tokens of one source
  std::int64_t max_target_length = 256; // generated tokens (decoder steps)
  std::int64_t beam_size = 1;
  std::int64_t max_batch_tokens = 0;    // padded source tokens per batch; 0: max_batch × max_source_length
  int threads = 1;

  std::int64_t batch_tokens() const { return max_batch_tokens > 0 ? max_batch_tokens : max_batch * max_source_length; }
  std::int64_t decoder_rows() const { return max_batch * beam_size; }
  // Throws attend::Error naming the limit at fault: each within its ceiling (so the two
  // products above cannot overflow), all buffers together within 1 TiB.
  void validate(const ModelConfig& config) const;
};

enum class Phase { encoder, decoder };
enum class ElementType { f32, i32, bf16 };
std::size_t element_bytes(ElementType t);

struct PlanBuffer {
  std::string name;
  ElementType type = ElementType::f32;
  std::int64_t rows = 0, cols = 0;  // at the limits
  bool persistent = false;          // carried across decoder steps
  std::size_t bytes = 0, offset = 0;
  int first_use = 0, last_use = 0;  // step indices
};

// Columns [col, col + cols) of a buffer; the row count is the phase's.
struct Operand {
  int buffer = -1;
  std::int64_t col = 0, cols = 0;
};

enum class StepKind {
  embed_source,     // out = embedding(tokens)·scale + positions (+ LayerNorm)
  embed_target,
  layer_norm,       // out = LN(in) or RMSNorm(in), as the model says; in place allowed
  linear,           // out = act(alpha·in·Wᵀ + b) (+ residual)
  multiply,         // out = out ⊙ in (the gate of a gated feed-forward layer)
  encoder_attention,// out = attention(q, k, v = columns of the fused QKV `in`), source lengths masked
  cache_store,      // self K/V cache[layer][step][row] = K, V columns of `in`
  self_attention,   // out = attention(Q columns of `in`, cached K/V through the row table)
  cross_attention,  // out = attention(in, the layer's columns of the cross K/V)
  cross_kv_projection,  // cross K/V cache = in·Wᵀ + b, a chunk of rows at a time through the fp32
                        // `scratch`, stored head-major in the cache's type (plan_executor.cpp)
  alignment,        // out = the alignment layer's cross-attention probabilities (only when a decode asks)
  log_softmax,      // out = log_softmax(in)
};
const char* step_kind_name(StepKind k);

struct PlanStep {
  StepKind kind = StepKind::linear;
  Phase phase = Phase::encoder;
  std::string name;             // "decoder.layers.3.fc1"
  std::int64_t layer = -1;
  Operand in, out, residual;
  Operand scratch;              // cross_kv_projection: fp32 rows the GEMM writes before narrowing
  const Linear* linear = nullptr;
  ops::Activation activation = ops::Activation::none;
  float alpha = 1.0f;           // linear: scales in·Wᵀ (the decoder's output scale)
  const LayerNormWeights* norm = nullptr;
  int threads = 1;
  double flops = 0, bytes = 0;  // at the limits
};

class ExecutionPlan {
 public:
  static std::shared_ptr<const ExecutionPlan> compile(std::shared_ptr<const Model> model, const PlanLimits& limits);

  const Model& model() const { return *model_; }
  const std::shared_ptr<const Model>& model_ptr() const { return model_; }
  const PlanLimits& limits() const { return limits_; }
  const std::vector<PlanStep>& steps() const { return steps_; }
  const std::vector<PlanBuffer>& buffers() const { return buffers_; }
  std::size_t arena_bytes() const { return arena_bytes_; }

  // The threads that split the decoder's `rows` between them, each running every decoder
  // step on its share with one thread (1: the steps split their own work). All of the
  // plan's threads or none — a step on a share of rows gets one thread, so fewer would
  // idle the rest — and only where each thread gets rows enough to reuse each weight
  // byte kRowsPerWeightByte times (16 rows for int8 weights, 64 for float32): with fewer,
  // memory rather than arithmetic bounds a thread's step, since each streams every weight
  // for its rows alone (float32 on 16 rows a thread ran 15% slower than the ops' split of
  // columns, which reads each weight once; docs/performance.md).
  static constexpr std::int64_t kRowsPerWeightByte = 16;
  int decoder_row_threads(std::int64_t rows) const;
  std::size_t buffers_bytes() const { return buffers_bytes_; }  // with no sharing
  // Human-readable: buffers with offsets and lifetimes, steps with kernels, shapes,
  // FLOPs and bytes at the limits.
  std::string describe() const;

  // Buffers the decoding driver fills before a phase runs or reads after.
  struct Io {
    int source_tokens, source_positions, source_lengths;             // [batch tokens], [batch]
    int target_tokens, target_positions;                             // [rows]
    int query_positions;  // [rows] self-attention query position (relative attention; see workspace)
    int zero_embedding;   // [rows] 1: embed a zero vector (+ position) — the start of a Marian decoder
    int self_rows, self_lengths;                                     // [rows, max target], [rows]
    int cross_rows, cross_lengths;                                   // [rows]
    int self_keys, self_values;  // per layer [rows][heads][max target][head_dim]
    int cross_kv;  // [batch tokens · layers·2A] as 2·layers blocks [batch][heads][S][head_dim]
                   // (A: the attention width, heads·head_dim)
    // The element type of self_keys, self_values and cross_kv: the model's compute type's
    // (f32 for float32, bf16 for int8 and bfloat16; model/compute_type.hpp).
    ops::KvType kv_type;
    int logits, log_probs;                                           // [rows, target vocab]
    int alignment;                                                   // [rows, max source]: alignment step
  };
  const Io& io() const { return io_; }

 private:
  friend class PlanBuilder;
  std::shared_ptr<const Model> model_;
  PlanLimits limits_;
  std::vector<PlanStep> steps_;
  std::vector<PlanBuffer> buffers_;
  std::size_t arena_bytes_ = 0, buffers_bytes_ = 0;
  std::size_t decoder_weight_bytes_ = 1;  // bytes of the decoder's widest GEMM weight element
  Io io_{};
};

}  // namespace attend::runtime
