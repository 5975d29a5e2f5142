// Beam search, per sentence:
//   1. each live row proposes its 2·beam most likely tokens (total = row + token log p);
//   2. the sentence's candidates are ranked by total (ties: lower row, then lower token)
//      and the best 2·beam kept;
//   3. walking that ranking, an end-of-sequence candidate among the first `beam` ends a
//      hypothesis (scored log_prob / length^penalty); the first `beam` other candidates
//      become the next live rows;
//   4. a sentence with `beam` ended hypotheses is done and leaves the batch.
// During a forced target prefix a sentence keeps a single row continuing the prefix (an
// end-of-sequence in the prefix ends the hypothesis there).
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
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < in.rows;) {
    const std::int32_t sentence = in.live[i].sentence;
    std::int64_t j = i;
    while (j < in.rows && in.live[j].sentence == sentence) ++j;

    if (const std::int32_t forced = in.forced_token(sentence); forced >= 0) {
      const float lp = in.log_probs[i * in.vocab + forced];
      if (forced == in.eos)  // a prefix holding end-of-sequence ends there, as in greedy search
        in.finisher->finish(sentence, static_cast<std::int32_t>(i), in.live[i].log_prob + lp, lp);
      else
        next[n++] = {static_cast<std::int32_t>(i), forced, in.live[i].log_prob + lp, lp};
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

    const std::int64_t first = n;
    for (std::int64_t rank = 0; rank < keep && n - first < K; ++rank) {
      const Selection& c = cand[rank];
      if (c.token == in.eos) {
        if (rank < K) in.finisher->finish(sentence, c.parent, c.log_prob, c.token_log_prob);
        continue;
      }
      next[n++] = c;
    }
    if (in.finisher->finished(sentence) >= K) n = first;  // done: its rows leave
    i = j;
  }
  return n;
}

}  // namespace attend::runtime
