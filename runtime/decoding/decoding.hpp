// What a caller asks of decoding, and what it gets back.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace attend::runtime {

struct PlanLimits;

struct SamplingOptions {
  bool enabled = false;       // off: greedy (beam 1) or beam search
  std::int64_t top_k = 0;     // sample among the k most likely tokens; 0: all
  float top_p = 1.0f;         // …and among the smallest set whose probability reaches p
  float temperature = 1.0f;   // probabilities ∝ exp(log p / temperature)
  std::uint64_t seed = 0;     // with the sentence id, fixes every draw
};

struct DecodeOptions {
  std::int64_t beam_size = 1;
  std::int64_t num_hypotheses = 1;  // n-best, ≤ beam_size
  // Beam search ranks hypotheses by log_prob / length^length_penalty (length counts
  // generated tokens, the end-of-sequence token included).
  float length_penalty = 1.0f;
  std::int64_t max_length = 256;    // generated tokens, end-of-sequence excluded
  std::int64_t min_length = 0;      // end-of-sequence is impossible before this many tokens
  SamplingOptions sampling;

  // Throws attend::Error naming the option at fault (also against the plan's limits).
  void validate(const PlanLimits& limits) const;
};

// One sentence of a batch. Spans point into the caller's memory for the call's duration.
struct SourceRef {
  std::span<const std::int32_t> tokens;
  std::span<const std::int32_t> target_prefix;  // forced first target tokens
  std::uint64_t id = 0;                         // stable sentence id: seeds sampling
};

struct Hypothesis {
  std::vector<std::int32_t> tokens;    // generated tokens, end-of-sequence excluded
  float score = 0;                     // beam: log_prob / length^penalty; otherwise log_prob
  float log_prob = 0;                  // Σ log p(token), end-of-sequence included
  // log p of each generated token; one more entry than `tokens` when the hypothesis
  // ended with end-of-sequence (that token's log p comes last).
  std::vector<float> token_log_probs;
  bool finished = false;               // ended with end-of-sequence (not cut at max_length)
};

struct SentenceResult {
  std::vector<Hypothesis> hypotheses;  // best first
  // The model produced NaN or infinite logits for this sentence (an overflow in its
  // weights or activations): decoding stopped and its hypotheses are empty, score −∞.
  bool non_finite = false;
};

// Sees the raw logits of every live row after each decoder step (parity tests, debugging).
class LogitsObserver {
 public:
  virtual ~LogitsObserver() = default;
  // `row_sentence[i]` is the batch index of live row i; logits are [rows, vocab].
  virtual void on_step(std::int64_t step, std::int64_t rows, const std::int32_t* row_sentence, const float* logits,
                       std::int64_t vocab) = 0;
};

}  // namespace attend::runtime
