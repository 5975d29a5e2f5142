// Random sampling: temperature, then top-k, then top-p (nucleus) filtering, then one
// draw. Draws come from a counter-based generator keyed by (seed, sentence id, draw,
// step), so a sentence gets the same tokens whatever batch it lands in. Temperature 0
// is the most likely token (CTranslate2's sampling_temperature = 0).
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

// Uniform in [0, 1), a pure function of its arguments. Draw 0 keeps the stream a
// sentence had before several draws per sentence existed.
double uniform(std::uint64_t seed, std::uint64_t sentence, std::uint64_t draw, std::uint64_t step) {
  std::uint64_t h = mix(mix(seed + 0x9e3779b97f4a7c15ull) ^ sentence);
  if (draw > 0) h = mix(h ^ (draw * 0xd1b54a32d192ed03ull));
  h = mix(h ^ step);
  return static_cast<double>(h >> 11) * 0x1p-53;
}

std::int32_t most_likely(const float* lp, std::int64_t V) {
  return static_cast<std::int32_t>(std::max_element(lp, lp + V) - lp);  // the first of equals
}

std::int32_t draw(const float* lp, std::int64_t V, const DecodeOptions& o, double u, SamplingScratch& s) {
  if (o.temperature == 0.0f || o.sampling_topk == 1) return most_likely(lp, V);
  // The k candidates, by decreasing probability where top-k or top-p needs an order.
  std::int64_t k = o.sampling_topk > 0 ? std::min<std::int64_t>(o.sampling_topk, V) : V;
  for (std::int64_t i = 0; i < V; ++i) s.order_[i] = static_cast<std::int32_t>(i);
  auto by_prob = [&](std::int32_t a, std::int32_t b) { return lp[a] > lp[b] || (lp[a] == lp[b] && a < b); };
  if (k < V) std::nth_element(s.order_.begin(), s.order_.begin() + k, s.order_.begin() + V, by_prob);
  if (o.sampling_topp < 1.0f) std::sort(s.order_.begin(), s.order_.begin() + k, by_prob);

  // Tempered probabilities relative to the best candidate — found by a scan, since the
  // candidates are only sorted when top-p asks: exp((lp − top)/T) ≤ 1, and the best
  // gets 1, however small T is.
  float top = lp[s.order_[0]];
  for (std::int64_t i = 1; i < k; ++i) top = std::max(top, lp[s.order_[i]]);
  double total = 0;
  for (std::int64_t i = 0; i < k; ++i) {
    s.probs_[i] = std::exp((lp[s.order_[i]] - top) / o.temperature);
    total += s.probs_[i];
  }
  if (o.sampling_topp < 1.0f) {  // smallest prefix whose tempered mass reaches top_p
    double mass = 0;
    std::int64_t keep = 0;
    while (keep < k && mass < o.sampling_topp * total) mass += s.probs_[keep++];
    k = std::max<std::int64_t>(keep, 1);
    total = mass;
  }
  double left = u * total;
  std::int64_t last_possible = 0;
  for (std::int64_t i = 0; i < k; ++i) {
    if (s.probs_[i] <= 0) continue;
    last_possible = i;
    left -= s.probs_[i];
    if (left < 0) return s.order_[i];
  }
  return s.order_[last_possible];  // rounding left a sliver: the last candidate that can be drawn
}

}  // namespace

std::int64_t sampling_select(const SearchInput& in, SamplingScratch& scratch, Selection* next) {
  const DecodeOptions& o = *in.options;
  return select_one_token_per_row(in, next, [&](std::int64_t r, const float* lp) {
    const LiveRow& row = in.live[r];
    const double u = uniform(o.seed, in.batch[row.sentence].id, static_cast<std::uint64_t>(row.draw),
                             static_cast<std::uint64_t>(in.step));
    return draw(lp, in.vocab, o, u, scratch);
  });
}

}  // namespace attend::runtime
