// Search strategies: after each decoder step, choose the next live rows.
//
// Every strategy answers the same question — given the log-probabilities of the live
// rows, which (parent row, token) pairs continue, and which hypotheses end — so the
// decoding driver (workspace.cpp) treats greedy, sampling and beam search alike: it
// copies each new row's history from its parent (a few ints per step, never the KV
// cache) and drops rows nobody continues. Strategies write into preallocated arrays.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "decoding/decoding.hpp"

namespace attend::runtime {

struct LiveRow {
  std::int32_t sentence = 0;  // batch index
  float log_prob = 0;         // Σ log p so far
};

struct Selection {
  std::int32_t parent = 0;    // live row it continues
  std::int32_t token = 0;
  float log_prob = 0;         // cumulative, this token included
  float token_log_prob = 0;
};

// Receives hypotheses that end with end-of-sequence (the driver copies the parent's
// history into the hypothesis store).
class Finisher {
 public:
  virtual ~Finisher() = default;
  virtual void finish(std::int32_t sentence, std::int32_t parent, float log_prob, float eos_log_prob) = 0;
  virtual std::int64_t finished(std::int32_t sentence) const = 0;
};

struct SearchInput {
  std::int64_t step = 0, rows = 0, vocab = 0;
  const float* log_probs = nullptr;  // [rows, vocab]; end-of-sequence already masked before min_length
  const LiveRow* live = nullptr;     // [rows], grouped by sentence in increasing order
  std::int32_t eos = 0;
  const DecodeOptions* options = nullptr;
  std::span<const SourceRef> batch;
  Finisher* finisher = nullptr;

  // The forced token of `sentence` at this step, or -1.
  std::int32_t forced_token(std::int32_t sentence) const {
    const auto& prefix = batch[sentence].target_prefix;
    return step < static_cast<std::int64_t>(prefix.size()) ? prefix[step] : -1;
  }
};

// Each returns the number of selections written to `next` (at most rows × beam).
class GreedyScratch {
 public:
  GreedyScratch(std::int64_t rows, int threads) : best_(rows), threads_(threads) {}
  std::vector<std::int32_t> best_;  // each row's argmax
  int threads_;
};
std::int64_t greedy_select(const SearchInput& in, GreedyScratch& scratch, Selection* next);

// Greedy and sampling: every row continues with one token — its forced prefix token, or
// choose(row, log_probs of the row) — unless that token is end-of-sequence, which ends
// the row's sentence.
template <class Choose>
std::int64_t select_one_token_per_row(const SearchInput& in, Selection* next, const Choose& choose) {
  std::int64_t n = 0;
  for (std::int64_t r = 0; r < in.rows; ++r) {
    const float* lp = in.log_probs + r * in.vocab;
    const LiveRow& row = in.live[r];
    const std::int32_t forced = in.forced_token(row.sentence);
    const std::int32_t token = forced >= 0 ? forced : choose(r, lp);
    // As CTranslate2, a forced prefix token adds nothing to the hypothesis's log_prob.
    const float total = row.log_prob + (forced >= 0 ? 0.0f : lp[token]);
    if (token == in.eos) {
      in.finisher->finish(row.sentence, static_cast<std::int32_t>(r), total, lp[token]);
    } else {
      next[n++] = {static_cast<std::int32_t>(r), token, total, lp[token]};
    }
  }
  return n;
}

class SamplingScratch {
 public:
  explicit SamplingScratch(std::int64_t vocab) : probs_(vocab), order_(vocab) {}
  std::vector<float> probs_;
  std::vector<std::int32_t> order_;
};
std::int64_t sampling_select(const SearchInput& in, SamplingScratch& scratch, Selection* next);

class BeamScratch {
 public:
  BeamScratch(std::int64_t rows, std::int64_t beam, int threads)
      : top_ids_(rows * 2 * beam), top_log_probs_(rows * 2 * beam), candidates_(rows * 2 * beam), top_finished_(rows),
        threads_(threads) {}
  std::vector<std::int32_t> top_ids_;  // each row's 2·beam best tokens (ops::row_top_k)…
  std::vector<float> top_log_probs_;   // …and their log p
  std::vector<Selection> candidates_;  // one sentence's candidates
  std::vector<std::uint8_t> top_finished_;  // per sentence: its best candidate has ended once
  int threads_;
};
std::int64_t beam_select(const SearchInput& in, BeamScratch& scratch, Selection* next);

}  // namespace attend::runtime
