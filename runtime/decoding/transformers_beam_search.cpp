// Beam search as transformers' generate() (generation/utils.py, _beam_search, 5.x): per
// sentence, the 2·num_beams best continuations of all its beams by accumulated log p;
// those among the first num_beams that end (an end token, or any token at the length
// cap) are offered to the finished set, which keeps the num_beams best by
// score / length^length_penalty; the first num_beams that do not end run on; the sentence
// is done at the cap, or when its finished set is full and (early_stopping false or
// "never") the best running beam cannot beat the worst finished one.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attend/ops/argmax.hpp"
#include "decoding/transformers_rules.hpp"

namespace attend::runtime {
namespace {

bool better(const Selection& a, const Selection& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.parent != b.parent) return a.parent < b.parent;
  return a.token < b.token;
}

float normalised(float score, std::int64_t length, float penalty) {
  return score / std::pow(static_cast<float>(length), penalty);
}

}  // namespace

void TransformersBeamState::reset(std::int64_t sentences, std::int64_t beam, std::int64_t max_length) {
  beam_ = beam, max_length_ = max_length;
  scores_.assign(static_cast<std::size_t>(sentences * beam), -std::numeric_limits<float>::infinity());
  count_.assign(static_cast<std::size_t>(sentences), 0);
}

bool TransformersBeamState::admit(std::int32_t sentence, float score) {
  float* s = scores_.data() + sentence * beam_;
  std::int64_t& n = count_[sentence];
  if (n < beam_) {
    s[n++] = score;
    return true;
  }
  float* worst = std::min_element(s, s + beam_);
  if (!(score > *worst)) return false;
  *worst = score;
  return true;
}

float TransformersBeamState::worst(std::int32_t sentence) const {
  const float* s = scores_.data() + sentence * beam_;
  return *std::min_element(s, s + count_[sentence]);
}

std::int64_t transformers_beam_select(const SearchInput& in, BeamScratch& scratch, TransformersBeamState& state,
                                      Selection* next) {
  const DecodeOptions& o = *in.options;
  const std::int64_t K = o.beam_size, width = 2 * K;
  const std::int64_t per_row = std::min<std::int64_t>(width, in.vocab);
  ops::row_top_k(ops::ConstMatrix(in.log_probs, in.rows, in.vocab), per_row, scratch.top_ids_.data(),
                 scratch.top_log_probs_.data(), scratch.threads_);
  const std::int64_t length = in.step + 1;  // generated tokens with this step's, the end token included
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < in.rows;) {
    const std::int32_t sentence = in.live[i].sentence;
    std::int64_t j = i;
    while (j < in.rows && in.live[j].sentence == sentence) ++j;
    const bool last = in.last_step[sentence] != 0;

    // A forced token (a target language): one row follows it, its log p counting 0 — as
    // generate()'s beams, of which all but the first start at −10⁹, would.
    if (const std::int32_t forced = in.forced_token(sentence); forced >= 0) {
      const Selection s{static_cast<std::int32_t>(i), forced, in.live[i].score, in.log_probs[i * in.vocab + forced]};
      if (last) {
        if (state.admit(sentence, normalised(s.score, length, o.length_penalty))) in.finisher->finish(sentence, s, false);
      } else {
        next[n++] = s;
      }
      i = j;
      continue;
    }

    std::int64_t count = 0;
    for (std::int64_t r = i; r < j; ++r)
      for (std::int64_t c = r * per_row; c < (r + 1) * per_row; ++c) {
        const float lp = scratch.top_log_probs_[c];
        const Selection s{static_cast<std::int32_t>(r), scratch.top_ids_[c], in.live[r].score + lp, lp};
        if (std::isfinite(s.score)) scratch.candidates_[count++] = s;
      }
    Selection* cand = scratch.candidates_.data();
    const std::int64_t keep = std::min<std::int64_t>(count, width);
    std::partial_sort(cand, cand + keep, cand + count, better);

    for (std::int64_t k = 0; k < std::min(keep, K); ++k) {
      const bool ended = in.is_end(cand[k].token);
      if ((ended || last) && state.admit(sentence, normalised(cand[k].score, length, o.length_penalty)))
        in.finisher->finish(sentence, cand[k], ended);
    }
    const std::int64_t first = n;
    if (!last)
      for (std::int64_t k = 0; k < keep && n - first < K; ++k)
        if (!in.is_end(cand[k].token)) next[n++] = cand[k];

    bool done = last || n == first;
    if (!done && state.full(sentence)) {
      if (o.early_stopping == 1) {
        done = true;
      } else {
        const std::int64_t best_length = o.early_stopping == 2 && o.length_penalty > 0 ? state.max_length() : length;
        done = !(normalised(next[first].score, best_length, o.length_penalty) > state.worst(sentence));
      }
    }
    if (done) n = first;  // its rows leave
    i = j;
  }
  return n;
}

}  // namespace attend::runtime
