// Search strategies: after each decoder step, choose the next live rows.
//
// Every strategy answers the same question — given the log-probabilities of the live
// rows, which (parent row, token) pairs continue, and which hypotheses end — so the
// decoding driver (workspace.cpp) treats greedy, sampling and beam search alike: it
// copies each new row's history from its parent (a few ints per step, never the KV
// cache) and drops rows nobody continues. Strategies write into preallocated arrays.
//
// Scores follow CTranslate2: a row's score is the sum of the log-probabilities of its
// generated tokens, forced prefix tokens counting 0; a hypothesis is registered (with
// its final, length-normalised score) when it picks an end token or reaches its last
// step, and that last token is part of it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "decoding/decoding.hpp"

namespace attend::runtime {

struct LiveRow {
  std::int32_t sentence = 0;  // batch index
  std::int32_t draw = 0;      // sampling with num_hypotheses > 1: which independent draw
  float score = 0;            // Σ log p of the generated tokens, forced ones excluded
};

struct Selection {
  std::int32_t parent = 0;    // live row it continues
  std::int32_t token = 0;
  float score = 0;            // the row's score with this token
  float token_log_prob = 0;
};

// Receives the hypotheses that end at this step (the driver copies the parent's history
// into the hypothesis store).
class Finisher {
 public:
  virtual ~Finisher() = default;
  // `ended`: the token is an end token (otherwise the sentence reached its last step).
  virtual void finish(std::int32_t sentence, const Selection& last, bool ended) = 0;
  virtual std::int64_t registered(std::int32_t sentence) const = 0;  // hypotheses so far
};

struct SearchInput {
  std::int64_t step = 0, rows = 0, vocab = 0;
  const float* log_probs = nullptr;  // [rows, vocab], after the logits rules…
  const float* row_shift = nullptr;  // …plus this per row, if given (a renormalisation)
  const LiveRow* live = nullptr;     // [rows], grouped by sentence in increasing order
  std::span<const std::int32_t> end_ids;
  const DecodeOptions* options = nullptr;
  std::span<const SourceRef> batch;
  const std::uint8_t* last_step = nullptr;  // [sentence]: this step is the sentence's last
  Finisher* finisher = nullptr;

  float shift(std::int64_t row) const { return row_shift != nullptr ? row_shift[row] : 0.0f; }
  bool is_end(std::int32_t token) const { return std::find(end_ids.begin(), end_ids.end(), token) != end_ids.end(); }
  bool biased() const { return options->prefix_bias_beta > 0; }
  // The forced token of `sentence` at this step, or -1 (a biased prefix is not forced).
  std::int32_t forced_token(std::int32_t sentence) const {
    const auto& prefix = batch[sentence].target_prefix;
    return !biased() && step < static_cast<std::int64_t>(prefix.size()) ? prefix[step] : -1;
  }
  // CTranslate2's target prefix (not context, not biased): its first free step.
  bool at_prefix_end(std::int32_t sentence) const {
    const auto P = static_cast<std::int64_t>(batch[sentence].target_prefix.size());
    return !options->prefix_is_context && !biased() && P > 0 && step == P;
  }
};

// Greedy and sampling: every row continues with one token — its forced prefix token, or
// choose(row, log_probs of the row) — unless that token ends the row's hypothesis.
template <class Choose>
std::int64_t select_one_token_per_row(const SearchInput& in, Selection* next, const Choose& choose) {
  std::int64_t n = 0;
  for (std::int64_t r = 0; r < in.rows; ++r) {
    const float* lp = in.log_probs + r * in.vocab;
    const LiveRow& row = in.live[r];
    const std::int32_t forced = in.forced_token(row.sentence);
    const std::int32_t token = forced >= 0 ? forced : choose(r, lp);  // a row's shift changes no choice
    const float token_lp = lp[token] + in.shift(r);
    const Selection s{static_cast<std::int32_t>(r), token, row.score + (forced >= 0 ? 0.0f : token_lp), token_lp};
    const bool ended = forced < 0 && in.is_end(token);
    if (ended || in.last_step[row.sentence]) in.finisher->finish(row.sentence, s, ended);
    else next[n++] = s;
  }
  return n;
}

class GreedyScratch {
 public:
  GreedyScratch(std::int64_t rows, int threads) : best_(rows), threads_(threads) {}
  std::vector<std::int32_t> best_;  // each row's argmax
  int threads_;
};
std::int64_t greedy_select(const SearchInput& in, GreedyScratch& scratch, Selection* next);

class SamplingScratch {
 public:
  explicit SamplingScratch(std::int64_t vocab) : probs_(vocab), order_(vocab) {}
  std::vector<float> probs_;
  std::vector<std::int32_t> order_;
};
std::int64_t sampling_select(const SearchInput& in, SamplingScratch& scratch, Selection* next);

class BeamScratch {
 public:
  BeamScratch(std::int64_t rows, std::int64_t beam, std::int64_t sentences, int threads)
      : top_ids_(rows * 2 * beam),
        top_log_probs_(rows * 2 * beam),
        candidates_(rows * 2 * beam),
        top_finished_(sentences),
        diverged_(sentences * beam),
        threads_(threads) {}
  void reset(std::int64_t sentences);

  std::vector<std::int32_t> top_ids_;  // each row's 2·beam best tokens (ops::row_top_k)…
  std::vector<float> top_log_probs_;   // …and their log p
  std::vector<Selection> candidates_;  // one sentence's candidates
  std::vector<std::uint8_t> top_finished_;  // [sentence]: its best candidate once ended
  // prefix_bias_beta: [sentence × beam position] the beam has left the prefix. As in
  // CTranslate2, the flag belongs to the position, not to the hypothesis that moves there.
  std::vector<std::uint8_t> diverged_;
  int threads_;
};
std::int64_t beam_select(const SearchInput& in, BeamScratch& scratch, Selection* next);

// prefix_bias_beta (Arthur et al.; CTranslate2's BiasedDecoder): rows still on their
// sentence's prefix get log((1 − β)·p + β·[token = the prefix's next token]).
void bias_towards_prefix(const SearchInput& in, const BeamScratch& scratch, float* log_probs);

}  // namespace attend::runtime
