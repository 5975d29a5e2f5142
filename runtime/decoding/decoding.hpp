// What a caller asks of decoding, and what it gets back.
//
// The options are the public attend::TranslationOptions (include/attend/options.hpp),
// used as they are; DecodeOptions only adds what the API resolves from them (token
// strings to ids). The semantics follow CTranslate2's decoding (src/decoding.cc):
//   - a hypothesis' score is Σ log p of its generated tokens — forced target-prefix
//     tokens count 0 — divided by length^length_penalty, where the length counts the
//     prefix and the end token; greedy search and sampling are normalised too;
//     coverage_penalty adds β·Σ_source log(min(attention received, 1));
//   - repetition_penalty, no_repeat_ngram_size, disable_unk, suppress_sequences and
//     min_length act on the logits, before the log-softmax, so the log-probabilities
//     are renormalised over what is allowed; so does use_vmap's restriction to a
//     sentence's candidates.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "attend/options.hpp"

namespace attend::runtime {

struct PlanLimits;
struct ModelConfig;

struct DecodeOptions : TranslationOptions {
  // Resolved by the API from end_token and suppress_sequences (strings): ids in the
  // target vocabulary. end_ids unset: the model's end-of-sequence; empty: no end token.
  std::optional<std::vector<std::int32_t>> end_ids;
  std::vector<std::vector<std::int32_t>> suppress_ids;
  // The target prefix is context rather than a CTranslate2 target prefix: forced, but not
  // part of the scores, lengths, min/max_length or the repetition rules (how CTranslate2
  // completes alternatives after their first token). Set by the alternatives driver.
  bool prefix_is_context = false;
  // CTranslate2's decode_alternatives runs the decoder over the prefix (less its last
  // token) as one sequence; for two families that pass computes other numbers than
  // step-by-step decoding, and attend reproduces them: Marian zeroes every embedding of
  // the pass (not only the start's), T5's bias shifts the pass's queries by its length − 1
  // (the offset of a single cached query). The pass covers the prefix less this many trailing tokens (the driver's
  // context may end with an alternative's first token); −1: no such pass.
  std::int64_t one_pass_prefix_tail = -1;
  // transformers' generate() rules instead of CTranslate2's (decoding/transformers_rules.hpp),
  // and the end token it forces at the length cap (-1: none).
  bool transformers_rules = false;
  std::int32_t forced_eos_id = -1;
  // use_vmap: the target ids the sentence with this id (SourceRef::id) may produce,
  // sorted and distinct — every other logit is −∞ before the rules and the log-softmax,
  // as CTranslate2 restricts its output layer to the vocabulary map's candidates.
  // Resolved by the API (text/vocabulary_map.hpp); unset with use_vmap is an error.
  std::function<std::span<const std::int32_t>(std::uint64_t id)> candidates;
  // Compute threads of each batch of the call, which then decodes its batches one after
  // another (0: the translator's split). Set by the API for a caller that runs calls side
  // by side itself and knows how many threads are free (the server's lanes: one alone
  // gets every thread); the results are the same bits whatever the threads.
  int threads = 0;

  // max_length with 0 resolved to the plan's max_target_length.
  std::int64_t max_length_within(const PlanLimits& limits) const;
  // Throws attend::OptionError naming the option at fault (also against the plan's
  // limits and the model's vocabulary).
  void validate(const PlanLimits& limits, const ModelConfig& model) const;
};

// One sentence of a batch. Spans point into the caller's memory for the call's duration.
struct SourceRef {
  std::span<const std::int32_t> tokens;
  std::span<const std::int32_t> target_prefix;  // forced (or biased) first target tokens
  std::uint64_t id = 0;                         // stable sentence id: seeds sampling
};

struct Hypothesis {
  // Generated tokens (the target prefix included); the end token only with
  // return_end_token.
  std::vector<std::int32_t> tokens;
  float score = 0;                     // see the top of this file
  float log_prob = 0;                  // Σ token_log_probs (forced tokens included)
  // log p of each generated token; one more entry than `tokens` when the hypothesis
  // ended with an end token that `tokens` leaves out (that token's log p comes last).
  std::vector<float> token_log_probs;
  bool finished = false;               // ended with an end token (not cut at max_length)
  std::int32_t end_token = -1;         // finished: the end token (also when `tokens` leaves it out)
  // return_attention: per entry of `tokens` (and a trailing end token), the alignment
  // layer's cross-attention over the source positions given to the encoder.
  std::vector<std::vector<float>> attention;
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
