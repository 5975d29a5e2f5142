// Reference attention: materialise the scores, mask, softmax in double, weighted sum.
#include <cmath>
#include <limits>
#include <vector>

#include "attend/ops/reference.hpp"

namespace attend::ops::reference {
namespace {

double default_scale(float scale, index_t d) { return scale != 0.0f ? scale : 1.0 / std::sqrt(double(d)); }

// out[c] = Σ_j softmax(scores)_j · value(j)[c] over the visible keys; zeros if none.
template <class KeyFn, class ValueFn>
void attend_one(const float* q, index_t d, index_t visible, double scale, KeyFn key, ValueFn value, float* out) {
  std::vector<double> s(visible);
  double mx = -std::numeric_limits<double>::infinity();
  for (index_t j = 0; j < visible; ++j) {
    const float* k = key(j);
    double dot = 0.0;
    for (index_t c = 0; c < d; ++c) dot += double(q[c]) * k[c];
    s[j] = dot * scale;
    mx = std::max(mx, s[j]);
  }
  double sum = 0.0;
  for (index_t j = 0; j < visible; ++j) sum += (s[j] = std::exp(s[j] - mx));
  for (index_t c = 0; c < d; ++c) {
    double acc = 0.0;
    for (index_t j = 0; j < visible; ++j) acc += s[j] * value(j)[c];
    out[c] = visible > 0 ? static_cast<float>(acc / sum) : 0.0f;
  }
}

}  // namespace

void attention(const AttentionArgs& x) {
  const double scale = default_scale(x.scale, x.head_dim);
  for (index_t b = 0; b < x.batch; ++b)
    for (index_t h = 0; h < x.heads; ++h)
      for (index_t t = 0; t < x.q_len; ++t) {
        const index_t len = x.kv_lengths ? x.kv_lengths[b] : x.kv_len;
        index_t visible = len;
        if (x.causal) visible = std::min(len, std::max<index_t>(0, t + x.kv_len - x.q_len + 1));
        attend_one(
            x.q.at(b, h, t), x.head_dim, visible, scale, [&](index_t j) { return x.k.at(b, h, j); },
            [&](index_t j) { return x.v.at(b, h, j); }, x.out.at(b, h, t));
      }
}

// Addresses written out here rather than through KvCacheView::at, so that a bug in
// the view's addressing shows up as a difference instead of being shared.
const float* cache_element(const KvCacheView& c, index_t i, index_t j, index_t h) {
  index_t row = i;
  if (c.row_table != nullptr && c.row_table_ld == 0) row = c.row_table[i];
  if (c.row_table != nullptr && c.row_table_ld != 0) row = c.row_table[i * c.row_table_ld + j];
  return c.data + j * c.position_stride + row * c.row_stride + h * c.head_stride;
}

void attention_decode(const DecodeAttentionArgs& x) {
  const double scale = default_scale(x.scale, x.head_dim);
  for (index_t i = 0; i < x.rows; ++i)
    for (index_t h = 0; h < x.heads; ++h)
      attend_one(
          x.q + i * x.q_row_stride + h * x.head_dim, x.head_dim, x.kv_lengths[i], scale,
          [&](index_t j) { return cache_element(x.k, i, j, h); }, [&](index_t j) { return cache_element(x.v, i, j, h); },
          x.out + i * x.out_row_stride + h * x.head_dim);
}

}  // namespace attend::ops::reference
