// Beam search, per sentence, as CTranslate2's BeamSearch (src/decoding.cc):
//   1. the sentence's candidates are its rows' 2·beam best continuations, ranked by
//      score (row score + token log p; ties: lower row, then lower token);
//   2. walking the first `beam` of them, one that ends (an end token, or any token at
//      the sentence's last step) registers a hypothesis, and its place goes to the next
//      candidate beyond the first `beam` that does not end; the others go on;
//   3. the sentence is done at its last step; or, with length_penalty 0 and no coverage
//      penalty, once its best candidate has ended and num_hypotheses are registered;
//      otherwise once round(beam × patience) are registered.
// With a target prefix, a sentence keeps a single row through the forced tokens (their
// log p count 0), and at the first free step only the best candidate may end: the
// others that would are turned into dead rows (token 0, score −10¹⁰), as CTranslate2 does.
// tools/reference.py implements the same procedure for the PyTorch parity tests.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attend/ops/argmax.hpp"
#include "decoding/search.hpp"

namespace attend::runtime {
namespace {

bool better(const Selection& a, const Selection& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.parent != b.parent) return a.parent < b.parent;
  return a.token < b.token;
}

bool done(const SearchInput& in, const BeamScratch& scratch, std::int32_t sentence) {
  const DecodeOptions& o = *in.options;
  const std::int64_t registered = in.finisher->registered(sentence);
  if (o.length_penalty == 0 && o.coverage_penalty == 0)
    return scratch.top_finished_[sentence] && registered >= o.num_hypotheses;
  return registered >= static_cast<std::int64_t>(std::round(static_cast<float>(o.beam_size) * o.patience));
}

}  // namespace

void BeamScratch::reset(std::int64_t sentences) {
  std::fill_n(top_finished_.begin(), sentences, 0);
  std::fill_n(diverged_.begin(), sentences * (diverged_.size() / top_finished_.size()), 0);
}

std::int64_t beam_select(const SearchInput& in, BeamScratch& scratch, Selection* next) {
  const std::int64_t K = in.options->beam_size, width = 2 * K;
  // Every row's 2·K most likely tokens (by log p, ties to the lower id), best first.
  const std::int64_t per_row = std::min<std::int64_t>(width, in.vocab);
  ops::row_top_k(ops::ConstMatrix(in.log_probs, in.rows, in.vocab), per_row, scratch.top_ids_.data(),
                 scratch.top_log_probs_.data(), scratch.threads_);
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < in.rows;) {
    const std::int32_t sentence = in.live[i].sentence;
    std::int64_t j = i;
    while (j < in.rows && in.live[j].sentence == sentence) ++j;
    const bool last = in.last_step[sentence] != 0;

    if (const std::int32_t forced = in.forced_token(sentence); forced >= 0) {
      const float lp = in.log_probs[i * in.vocab + forced] + in.shift(i);
      const Selection s{static_cast<std::int32_t>(i), forced, in.live[i].score, lp};
      if (last) in.finisher->finish(sentence, s, false);
      else next[n++] = s;
      i = j;
      continue;
    }

    std::int64_t count = 0;
    for (std::int64_t r = i; r < j; ++r)
      for (std::int64_t c = r * per_row; c < (r + 1) * per_row; ++c) {
        const float lp = scratch.top_log_probs_[c] + in.shift(r);
        const Selection s{static_cast<std::int32_t>(r), scratch.top_ids_[c], in.live[r].score + lp, lp};
        if (std::isfinite(s.score)) scratch.candidates_[count++] = s;
      }
    Selection* cand = scratch.candidates_.data();
    const std::int64_t keep = std::min<std::int64_t>(count, width);
    std::partial_sort(cand, cand + keep, cand + count, better);
    if (in.at_prefix_end(sentence))
      for (std::int64_t k = 1; k < keep; ++k)
        if (in.is_end(cand[k].token)) cand[k] = {static_cast<std::int32_t>(i), 0, -1e10f, cand[k].token_log_prob};
    if (in.biased()) {  // the flags of the beam positions, from the first K candidates
      const auto& prefix = in.batch[sentence].target_prefix;
      std::uint8_t* diverged = scratch.diverged_.data() + sentence * K;
      for (std::int64_t k = 0; k < std::min(keep, K); ++k)
        diverged[k] = in.step >= static_cast<std::int64_t>(prefix.size()) || diverged[k] || cand[k].token != prefix[in.step];
    }

    const std::int64_t first = n;
    std::int64_t secondary = K;
    for (std::int64_t k = 0; k < std::min(keep, K); ++k) {
      const Selection& c = cand[k];
      const bool ended = in.is_end(c.token);
      if (!ended && !last) {
        next[n++] = c;
        continue;
      }
      if (k == 0) scratch.top_finished_[sentence] = 1;
      in.finisher->finish(sentence, c, ended);
      std::int64_t replacement = k;  // none left that goes on: CTranslate2 keeps the ended one
      for (std::int64_t s = secondary; s < keep; ++s)
        if (!in.is_end(cand[s].token)) {
          replacement = s, secondary = s + 1;
          break;
        }
      next[n++] = cand[replacement];
    }
    if (last || done(in, scratch, sentence)) n = first;  // done: its rows leave
    i = j;
  }
  return n;
}

void bias_towards_prefix(const SearchInput& in, const BeamScratch& scratch, float* log_probs) {
  const float beta = in.options->prefix_bias_beta;
  const std::int64_t K = in.options->beam_size;
  for (std::int64_t i = 0, position = 0; i < in.rows; ++i) {
    const std::int32_t sentence = in.live[i].sentence;
    position = i > 0 && in.live[i - 1].sentence == sentence ? position + 1 : 0;
    const auto& prefix = in.batch[sentence].target_prefix;
    if (in.step >= static_cast<std::int64_t>(prefix.size()) || scratch.diverged_[sentence * K + position]) continue;
    float* lp = log_probs + i * in.vocab;
    const float discount = std::log1p(-beta);  // log((1 − β)·p) = log p + log(1 − β)
    for (std::int64_t v = 0; v < in.vocab; ++v) lp[v] += discount;
    const std::int32_t biased = prefix[in.step];
    lp[biased] = std::log(std::exp(lp[biased]) + beta);
  }
}

}  // namespace attend::runtime
