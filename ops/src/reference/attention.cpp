// Reference attention: materialise the scores, mask, softmax in double, weighted sum.
#include <cmath>
#include <limits>
#include <vector>

#include "attend/ops/bf16.hpp"
#include "attend/ops/reference.hpp"

namespace attend::ops::reference {
namespace {

double default_scale(float scale, index_t d) { return scale != 0.0f ? scale : 1.0 / std::sqrt(double(d)); }

// The relative-position terms of one (query position, head), written out plainly:
// the key j's distance row, or null when there are no such terms.
struct Relative {
  const RelativePositions* p = nullptr;
  index_t head = 0, position = 0;
  index_t index(index_t j) const {
    const index_t r = p->max_distance, delta = j - position;
    return (delta < -r ? -r : delta > r ? r : delta) + r;
  }
};

// out[c] = Σ_j softmax(scores)_j · value(j)[c] over the visible keys; zeros if none.
// score_j = scale·q·(key(j) + rel_key) + rel_bias; value(j) + rel_value.
template <class KeyFn, class ValueFn>
void attend_one(const float* q, index_t d, index_t visible, double scale, KeyFn key, ValueFn value, float* out,
                const Relative& rel = {}) {
  std::vector<double> s(visible);
  double mx = -std::numeric_limits<double>::infinity();
  for (index_t j = 0; j < visible; ++j) {
    const auto k = key(j);
    const float* rk = rel.p && rel.p->keys ? rel.p->keys + rel.index(j) * d : nullptr;
    double dot = 0.0;
    for (index_t c = 0; c < d; ++c) dot += double(q[c]) * (double(k[c]) + (rk ? rk[c] : 0.0));
    s[j] = dot * scale;
    if (rel.p && rel.p->bias) s[j] += rel.p->bias[rel.head * rel.p->bias_head_stride + rel.index(j)];
    mx = std::max(mx, s[j]);
  }
  double sum = 0.0;
  for (index_t j = 0; j < visible; ++j) sum += (s[j] = std::exp(s[j] - mx));
  for (index_t c = 0; c < d; ++c) {
    double acc = 0.0;
    for (index_t j = 0; j < visible; ++j) {
      const double rv = rel.p && rel.p->values ? rel.p->values[rel.index(j) * d + c] : 0.0;
      acc += s[j] * (value(j)[c] + rv);
    }
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
        const Relative rel{x.positions.active() ? &x.positions : nullptr, h, t + x.kv_len - x.q_len};
        attend_one(
            x.q.at(b, h, t), x.head_dim, visible, scale, [&](index_t j) { return x.k.at(b, h, j); },
            [&](index_t j) { return x.v.at(b, h, j); }, x.out.at(b, h, t), rel);
      }
}

// A cached head vector read element by element as float, whatever the cache stores.
struct CachedVector {
  const void* p;
  KvType type;
  double operator[](index_t c) const {
    return type == KvType::bf16 ? float_from_bf16(static_cast<const std::uint16_t*>(p)[c]) : static_cast<const float*>(p)[c];
  }
};

// Addresses written out here rather than through KvCacheView::at, so that a bug in
// the view's addressing shows up as a difference instead of being shared.
CachedVector cache_element(const KvCacheView& c, index_t i, index_t j, index_t h) {
  index_t row = i;
  if (c.row_table != nullptr && c.row_table_ld == 0) row = c.row_table[i];
  if (c.row_table != nullptr && c.row_table_ld != 0) row = c.row_table[i * c.row_table_ld + j];
  const index_t at = j * c.position_stride + row * c.row_stride + h * c.head_stride;
  return {static_cast<const char*>(c.data) + at * kv_type_bytes(c.type), c.type};
}

void attention_decode(const DecodeAttentionArgs& x) {
  const double scale = default_scale(x.scale, x.head_dim);
  for (index_t i = 0; i < x.rows; ++i)
    for (index_t h = 0; h < x.heads; ++h) {
      const index_t position = x.query_positions ? x.query_positions[i] : x.kv_lengths[i] - 1;
      const Relative rel{x.positions.active() ? &x.positions : nullptr, h, position};
      attend_one(
          x.q + i * x.q_row_stride + h * x.head_dim, x.head_dim, x.kv_lengths[i], scale,
          [&](index_t j) { return cache_element(x.k, i, j, h); }, [&](index_t j) { return cache_element(x.v, i, j, h); },
          x.out + i * x.out_row_stride + h * x.head_dim, rel);
    }
}

}  // namespace attend::ops::reference
