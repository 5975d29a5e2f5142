#include "decoding/hypothesis_store.hpp"

#include <algorithm>
#include <numeric>

namespace attend::runtime {

HypothesisStore::HypothesisStore(std::int64_t max_sentences, std::int64_t per_sentence, std::int64_t max_length)
    : per_sentence_(per_sentence),
      max_length_(max_length),
      slots_(max_sentences * per_sentence),
      tokens_(max_sentences * per_sentence * max_length),
      log_probs_(max_sentences * per_sentence * (max_length + 1)),
      count_(max_sentences, 0) {}

void HypothesisStore::reset(std::int64_t sentences) { std::fill(count_.begin(), count_.begin() + sentences, 0); }

void HypothesisStore::add(std::int64_t sentence, std::span<const std::int32_t> tokens,
                          std::span<const float> token_log_probs, float score, float log_prob, bool finished) {
  std::int64_t k = count_[sentence];
  const std::int64_t base = sentence * per_sentence_;
  if (k == per_sentence_) {  // full: replace the worst if this one is better
    std::int64_t worst = 0;
    for (std::int64_t i = 1; i < per_sentence_; ++i)
      if (slots_[base + i].score < slots_[base + worst].score) worst = i;
    if (!(score > slots_[base + worst].score)) return;
    k = worst;
  } else {
    ++count_[sentence];
  }
  Slot& s = slots_[base + k];
  s.score = score, s.log_prob = log_prob, s.finished = finished;
  s.length = static_cast<std::int32_t>(tokens.size());
  s.log_probs = static_cast<std::int32_t>(token_log_probs.size());
  std::copy(tokens.begin(), tokens.end(), tokens_.begin() + (base + k) * max_length_);
  std::copy(token_log_probs.begin(), token_log_probs.end(), log_probs_.begin() + (base + k) * (max_length_ + 1));
}

void HypothesisStore::collect(std::int64_t sentence, std::int64_t n, SentenceResult& out) const {
  const std::int64_t base = sentence * per_sentence_;
  std::vector<std::int64_t> order(count_[sentence]);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return slots_[base + a].score > slots_[base + b].score; });
  out.hypotheses.clear();
  for (std::int64_t i = 0; i < std::min<std::int64_t>(n, static_cast<std::int64_t>(order.size())); ++i) {
    const std::int64_t k = base + order[i];
    const Slot& s = slots_[k];
    Hypothesis h;
    h.tokens.assign(tokens_.begin() + k * max_length_, tokens_.begin() + k * max_length_ + s.length);
    h.token_log_probs.assign(log_probs_.begin() + k * (max_length_ + 1),
                             log_probs_.begin() + k * (max_length_ + 1) + s.log_probs);
    h.score = s.score, h.log_prob = s.log_prob, h.finished = s.finished;
    out.hypotheses.push_back(std::move(h));
  }
}

}  // namespace attend::runtime
