// Random sampling: temperature, then top-k, then top-p (nucleus) filtering, then one
// draw. Draws come from a counter-based generator keyed by (seed, sentence id, step),
// so a sentence gets the same tokens whatever batch it lands in.
#include <algorithm>
#include <cmath>

#include "decoding/search.hpp"

namespace attend::runtime {
namespace {

std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1), a pure function of its arguments.
double uniform(std::uint64_t seed, std::uint64_t sentence, std::uint64_t step) {
  const std::uint64_t h = mix(mix(mix(seed + 0x9e3779b97f4a7c15ull) ^ sentence) ^ step);
  return static_cast<double>(h >> 11) * 0x1p-53;
}

std::int32_t draw(const float* lp, std::int64_t V, const SamplingOptions& o, std::uint64_t sentence_id,
                  std::int64_t step, SamplingScratch& s) {
  // Candidates by decreasing probability (only as many as top-k keeps need ordering).
  std::int64_t k = o.top_k > 0 ? std::min<std::int64_t>(o.top_k, V) : V;
  for (std::int64_t i = 0; i < V; ++i) s.order_[i] = static_cast<std::int32_t>(i);
  auto by_prob = [&](std::int32_t a, std::int32_t b) { return lp[a] > lp[b] || (lp[a] == lp[b] && a < b); };
  if (k < V) std::nth_element(s.order_.begin(), s.order_.begin() + k, s.order_.begin() + V, by_prob);
  if (o.top_p < 1.0f || k < V) std::sort(s.order_.begin(), s.order_.begin() + k, by_prob);

  // Tempered probabilities of the k candidates, relative to the best.
  const float top = lp[s.order_[0]];
  double total = 0;
  for (std::int64_t i = 0; i < k; ++i) {
    s.probs_[i] = std::exp((lp[s.order_[i]] - top) / o.temperature);
    total += s.probs_[i];
  }
  if (o.top_p < 1.0f) {  // smallest prefix whose tempered mass reaches top_p
    double mass = 0;
    std::int64_t keep = 0;
    while (keep < k && mass < o.top_p * total) mass += s.probs_[keep++];
    k = std::max<std::int64_t>(keep, 1);
    total = mass;
  }
  double u = uniform(o.seed, sentence_id, static_cast<std::uint64_t>(step)) * total;
  for (std::int64_t i = 0; i < k; ++i) {
    u -= s.probs_[i];
    if (u < 0) return s.order_[i];
  }
  return s.order_[k - 1];
}

}  // namespace

std::int64_t sampling_select(const SearchInput& in, SamplingScratch& scratch, Selection* next) {
  return select_one_token_per_row(in, next, [&](std::int64_t r, const float* lp) {
    return draw(lp, in.vocab, in.options->sampling, in.batch[in.live[r].sentence].id, in.step, scratch);
  });
}

}  // namespace attend::runtime
