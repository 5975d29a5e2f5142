#include "decoding/hypothesis_store.hpp"

#include <algorithm>
#include <numeric>

namespace attend::runtime {

HypothesisStore::HypothesisStore(std::int64_t max_sentences, std::int64_t per_sentence, std::int64_t max_length)
    : per_sentence_(0), max_length_(max_length), count_(max_sentences, 0) {
  reset(0, per_sentence);
}

void HypothesisStore::reset(std::int64_t sentences, std::int64_t per_sentence) {
  if (const auto slots = static_cast<std::size_t>(static_cast<std::int64_t>(count_.size()) * per_sentence);
      slots > slots_.size()) {
    slots_.resize(slots);
    tokens_.resize(slots * max_length_);
    log_probs_.resize(slots * max_length_);
  }
  per_sentence_ = per_sentence;
  std::fill(count_.begin(), count_.begin() + sentences, 0);
}

void HypothesisStore::add(std::int64_t sentence, std::span<const std::int32_t> tokens,
                          std::span<const float> token_log_probs, float score, bool ended, HypothesisTrace trace) {
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
  s.score = score, s.ended = ended, s.trace = trace;
  s.length = static_cast<std::int32_t>(tokens.size());
  std::copy(tokens.begin(), tokens.end(), tokens_.begin() + (base + k) * max_length_);
  std::copy(token_log_probs.begin(), token_log_probs.end(), log_probs_.begin() + (base + k) * max_length_);
}

void HypothesisStore::collect(std::int64_t sentence, std::int64_t n, bool keep_end_token, SentenceResult& out,
                              std::vector<HypothesisTrace>& traces) const {
  const std::int64_t base = sentence * per_sentence_;
  std::vector<std::int64_t> order(count_[sentence]);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return slots_[base + a].score > slots_[base + b].score; });
  out.hypotheses.clear();
  traces.clear();
  for (std::int64_t i = 0; i < std::min<std::int64_t>(n, static_cast<std::int64_t>(order.size())); ++i) {
    const std::int64_t k = base + order[i];
    const Slot& s = slots_[k];
    const auto begin = k * max_length_;
    Hypothesis h;
    h.tokens.assign(tokens_.begin() + begin, tokens_.begin() + begin + s.length - (s.ended && !keep_end_token ? 1 : 0));
    h.token_log_probs.assign(log_probs_.begin() + begin, log_probs_.begin() + begin + s.length);
    h.log_prob = std::accumulate(h.token_log_probs.begin(), h.token_log_probs.end(), 0.0f);
    h.score = s.score, h.finished = s.ended;
    if (s.ended) h.end_token = tokens_[begin + s.length - 1];
    out.hypotheses.push_back(std::move(h));
    traces.push_back(s.trace);
  }
}

}  // namespace attend::runtime
