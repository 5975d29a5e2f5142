// Beam search, per sentence:
//   1. each live row proposes its 2·beam most likely tokens (total = row + token log p);
//   2. the sentence's candidates are ranked by total (ties: lower row, then lower token)
//      and the best 2·beam kept;
//   3. walking that ranking, an end-of-sequence candidate among the first `beam` ends a
//      hypothesis (scored log_prob / length^penalty); the first `beam` other candidates
//      become the next live rows;
//   4. a sentence with `beam` ended hypotheses is done and leaves the batch; with
//      length_penalty 0 (scores then only fall as hypotheses grow) as soon as its best
//      candidate has ended once and num_hypotheses have (CTranslate2's early exit).
// During a forced target prefix a sentence keeps a single row continuing the prefix;
// forced tokens add nothing to the log_prob, and right after the prefix only the best
// candidate may be end-of-sequence (both as CTranslate2).
// tools/reference.py implements the same procedure for the PyTorch parity tests.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attend/ops/argmax.hpp"
#include "decoding/search.hpp"

namespace attend::runtime {
namespace {

bool better(const Selection& a, const Selection& b) {
  if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
  if (a.parent != b.parent) return a.parent < b.parent;
  return a.token < b.token;
}

}  // namespace

std::int64_t beam_select(const SearchInput& in, BeamScratch& scratch, Selection* next) {
  const std::int64_t K = in.options->beam_size;
  // Every row's 2·K most likely tokens (by log p, ties to the lower id), best first.
  const std::int64_t per_row = std::min<std::int64_t>(2 * K, in.vocab);
  ops::row_top_k(ops::ConstMatrix(in.log_probs, in.rows, in.vocab), per_row, scratch.top_ids_.data(),
                 scratch.top_log_probs_.data(), scratch.threads_);
  if (in.step == 0) std::fill(scratch.top_finished_.begin(), scratch.top_finished_.end(), 0);
  const bool early_exit = in.options->length_penalty == 0.0f;
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < in.rows;) {
    const std::int32_t sentence = in.live[i].sentence;
    std::int64_t j = i;
    while (j < in.rows && in.live[j].sentence == sentence) ++j;

    if (const std::int32_t forced = in.forced_token(sentence); forced >= 0) {
      const float lp = in.log_probs[i * in.vocab + forced];
      next[n++] = {static_cast<std::int32_t>(i), forced, in.live[i].log_prob, lp};  // adds nothing, as in CTranslate2
      i = j;
      continue;
    }

    std::int64_t count = 0;
    for (std::int64_t r = i; r < j; ++r)
      for (std::int64_t c = r * per_row; c < (r + 1) * per_row; ++c) {
        const float lp = scratch.top_log_probs_[c];
        const Selection s{static_cast<std::int32_t>(r), scratch.top_ids_[c], in.live[r].log_prob + lp, lp};
        if (std::isfinite(s.log_prob)) scratch.candidates_[count++] = s;
      }
    Selection* cand = scratch.candidates_.data();
    const std::int64_t keep = std::min<std::int64_t>(count, 2 * K);
    std::partial_sort(cand, cand + keep, cand + count, better);
    // CTranslate2 (its issue #277): on the first free step after a forced prefix only the
    // best candidate may end the hypothesis; a lower-ranked end-of-sequence is replaced,
    // in its place, by token 0 with log p −1e10 — a row that dies at the next step.
    if (const auto& prefix = in.batch[sentence].target_prefix; !prefix.empty() && in.step == static_cast<std::int64_t>(prefix.size()))
      for (std::int64_t rank = 1; rank < keep; ++rank)
        if (cand[rank].token == in.eos) cand[rank].token = 0, cand[rank].log_prob = cand[rank].token_log_prob = -1e10f;

    const std::int64_t first = n;
    for (std::int64_t rank = 0; rank < keep && n - first < K; ++rank) {
      const Selection& c = cand[rank];
      if (c.token == in.eos) {
        if (rank < K) in.finisher->finish(sentence, c.parent, c.log_prob, c.token_log_prob);
        if (rank == 0) scratch.top_finished_[sentence] = 1;
        continue;
      }
      next[n++] = c;
    }
    // Done: its rows leave — except on the last step, where (as CTranslate2) the rows
    // still become hypotheses, cut at max_length, alongside the ended ones.
    const bool last_step = in.step + 1 == in.options->max_length;
    const bool done = early_exit ? scratch.top_finished_[sentence] && in.finisher->finished(sentence) >= in.options->num_hypotheses
                                 : in.finisher->finished(sentence) >= K;
    if (done && !last_step) n = first;
    i = j;
  }
  return n;
}

}  // namespace attend::runtime
