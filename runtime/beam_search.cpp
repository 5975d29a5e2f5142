// Beam search, per sentence:
//   1. each live row proposes its 2·beam most likely tokens (total = row + token log p);
//   2. the sentence's candidates are ranked by total (ties: lower row, then lower token)
//      and the best 2·beam kept;
//   3. walking that ranking, an end-of-sequence candidate among the first `beam` ends a
//      hypothesis (scored log_prob / length^penalty); the first `beam` other candidates
//      become the next live rows;
//   4. a sentence with `beam` ended hypotheses is done and leaves the batch.
// During a forced target prefix a sentence keeps a single row continuing the prefix.
// tools/reference.py implements the same procedure for the PyTorch parity tests.
#include <algorithm>
#include <cmath>
#include <limits>

#include "search.hpp"

namespace attend::runtime {
namespace {

bool better(const Selection& a, const Selection& b) {
  if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
  if (a.parent != b.parent) return a.parent < b.parent;
  return a.token < b.token;
}

// The `want` best tokens of one row (by log p, ties to the lower id), best first.
std::int64_t top_tokens(const float* lp, std::int64_t V, std::int64_t want, std::int32_t row, float base,
                        Selection* out) {
  std::int64_t n = 0;
  for (std::int64_t v = 0; v < V; ++v) {
    if (n == want && !(lp[v] > out[n - 1].token_log_prob)) continue;  // not better than the worst kept
    const Selection s{row, static_cast<std::int32_t>(v), base + lp[v], lp[v]};
    std::int64_t pos = n < want ? n++ : n - 1;
    while (pos > 0 && out[pos - 1].token_log_prob < s.token_log_prob) {
      out[pos] = out[pos - 1];
      --pos;
    }
    out[pos] = s;
  }
  return n;
}

}  // namespace

std::int64_t beam_select(const SearchInput& in, BeamScratch& scratch, Selection* next) {
  const std::int64_t K = in.options->beam_size;
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < in.rows;) {
    const std::int32_t sentence = in.live[i].sentence;
    std::int64_t j = i;
    while (j < in.rows && in.live[j].sentence == sentence) ++j;

    if (const std::int32_t forced = in.forced_token(sentence); forced >= 0) {
      const float lp = in.log_probs[i * in.vocab + forced];
      next[n++] = {static_cast<std::int32_t>(i), forced, in.live[i].log_prob + lp, lp};
      i = j;
      continue;
    }

    std::int64_t count = 0;
    for (std::int64_t r = i; r < j; ++r) {
      Selection* row_best = scratch.per_row_.data() + r * 2 * K;
      const std::int64_t got = top_tokens(in.log_probs + r * in.vocab, in.vocab, 2 * K, static_cast<std::int32_t>(r),
                                          in.live[r].log_prob, row_best);
      for (std::int64_t c = 0; c < got; ++c)
        if (std::isfinite(row_best[c].log_prob)) scratch.candidates_[count++] = row_best[c];
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
