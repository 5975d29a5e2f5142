// Plain loops: these ops run only when a caller asks to see attention, so they need no
// per-ISA kernel. Scores are summed in double, so they differ from the fused kernels'
// float sums by rounding only (the tests bound it: the weights applied to the values
// give the kernels' outputs).
#include "attend/ops/attention_probs.hpp"
#include "attend/ops/bf16.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention_check.hpp"
#include "check.hpp"
#include "parallel.hpp"

namespace attend::ops {

namespace {

// A key vector read element by element as float, whatever the cache stores (bf16 widens
// exactly, as the kernels widen it).
struct CachedKey {
  const void* data;
  KvType type;
  float operator[](index_t c) const {
    return type == KvType::bf16 ? float_from_bf16(static_cast<const std::uint16_t*>(data)[c]) : static_cast<const float*>(data)[c];
  }
};

// Key j of row i, head h of a cache.
CachedKey cached_key(const KvCacheView& k, index_t i, index_t j, index_t h) {
  return {static_cast<const char*>(k.data) + k.offset(i, j, h) * kv_type_bytes(k.type), k.type};
}

// The relative-position terms of one (head, query position), as RelativePositions
// defines them; `p` null: none.
struct RelativeTerms {
  const RelativePositions* p = nullptr;
  index_t head = 0, position = 0;

  index_t index(index_t j) const {
    const index_t r = p->max_distance, delta = j - position;
    return std::clamp(delta, -r, r) + r;
  }
};

// One query's probabilities over keys [0, visible) into out[0, visible), zeros up to
// out[columns): score_j = scale·q·(key(j) + relative key) + relative bias, softmax with
// the maximum subtracted (the scores are kept in `out` meanwhile).
template <class Key>
void weights_row(const float* q, index_t head_dim, float scale, const RelativeTerms& rel, index_t visible, index_t columns,
                 const Key& key, float* out) {
  double top = -std::numeric_limits<double>::infinity();
  for (index_t j = 0; j < visible; ++j) {
    const auto k = key(j);
    const float* rk = rel.p != nullptr && rel.p->keys != nullptr ? rel.p->keys + rel.index(j) * head_dim : nullptr;
    double dot = 0;
    for (index_t c = 0; c < head_dim; ++c) dot += double(q[c]) * (double(k[c]) + (rk != nullptr ? double(rk[c]) : 0.0));
    double s = dot * scale;
    if (rel.p != nullptr && rel.p->bias != nullptr) s += rel.p->bias[rel.head * rel.p->bias_head_stride + rel.index(j)];
    out[j] = static_cast<float>(s);
    top = std::max(top, double(out[j]));
  }
  double total = 0;
  for (index_t j = 0; j < visible; ++j) {
    const double e = std::exp(double(out[j]) - top);
    out[j] = static_cast<float>(e);
    total += e;
  }
  for (index_t j = 0; j < visible; ++j) out[j] = static_cast<float>(double(out[j]) / total);
  std::fill(out + visible, out + columns, 0.0f);
}

}  // namespace

void attention_weights(const AttentionArgs& x, const WeightsView& out, int threads) {
  const char* op = "attention_weights";
  detail::check_attention(op, x, threads);
  if (x.batch * x.heads * x.q_len == 0) return;
  const float scale = detail::attention_scale(x.scale, x.head_dim);
  const bool relative = x.positions.active();
  const int nt = detail::useful_threads(threads, x.batch * x.heads * x.q_len * x.kv_len * x.head_dim, 1 << 16);
  // One item per (batch, head): its query rows in order.
  detail::parallel_chunks(nt, x.batch * x.heads, [&](index_t begin, index_t end) {
    for (index_t item = begin; item < end; ++item) {
      const index_t b = item / x.heads, h = item % x.heads;
      const index_t length = x.kv_lengths != nullptr ? x.kv_lengths[b] : x.kv_len;
      for (index_t t = 0; t < x.q_len; ++t) {
        // Query t sits at position t + kv_len − q_len (bottom-right aligned, as `causal`).
        const index_t position = t + x.kv_len - x.q_len;
        const index_t visible = x.causal ? std::clamp<index_t>(position + 1, 0, length) : length;
        const RelativeTerms rel{relative ? &x.positions : nullptr, h, position};
        weights_row(x.q.at(b, h, t), x.head_dim, scale, rel, visible, x.kv_len,
                    [&](index_t j) { return x.k.at(b, h, j); }, out.at(b, h, t));
      }
    }
  });
}

void attention_decode_weights(const DecodeAttentionArgs& x, const WeightsView& out, index_t columns, int threads) {
  const char* op = "attention_decode_weights";
  detail::check_threads(op, threads);
  ATTEND_OP_CHECK(x.rows >= 0 && x.heads >= 0 && x.head_dim >= 1, op, "needs rows ≥ 0, heads ≥ 0, head_dim ≥ 1");
  ATTEND_OP_CHECK(std::isfinite(x.scale), op, "scale is not finite");
  detail::check_positions(op, x.positions, x.heads);
  if (x.rows * x.heads == 0) return;
  ATTEND_OP_CHECK(x.q != nullptr && x.k.data != nullptr && x.kv_lengths != nullptr && out.data != nullptr, op,
                  "q, k, kv_lengths and out are required");
  for (index_t i = 0; i < x.rows; ++i)
    ATTEND_OP_CHECK(x.kv_lengths[i] >= 0 && x.kv_lengths[i] <= columns, op, "kv_lengths[", i, "] = ", x.kv_lengths[i],
                    " is outside [0, columns = ", columns, "]");
  const float scale = detail::attention_scale(x.scale, x.head_dim);
  const bool relative = x.positions.active();
  const int nt = detail::useful_threads(threads, x.rows * x.heads * columns * x.head_dim, 1 << 16);
  detail::parallel_chunks(nt, x.rows * x.heads, [&](index_t begin, index_t end) {
    for (index_t item = begin; item < end; ++item) {
      const index_t i = item / x.heads, h = item % x.heads;
      // The query sits at query_positions[i], or at the newest cached key (the step's own).
      const index_t position = x.query_positions != nullptr ? x.query_positions[i] : x.kv_lengths[i] - 1;
      const RelativeTerms rel{relative ? &x.positions : nullptr, h, position};
      weights_row(x.q + i * x.q_row_stride + h * x.head_dim, x.head_dim, scale, rel, x.kv_lengths[i], columns,
                  [&](index_t j) { return cached_key(x.k, i, j, h); },
                  out.at(i, h, 0));
    }
  });
}

void attention_probabilities(const AttentionProbsArgs& a, int threads) {
  const char* op = "attention_probabilities";
  detail::check_threads(op, threads);
  ATTEND_OP_CHECK(a.rows >= 0 && a.heads >= 1 && a.head_dim >= 1, op, "needs rows ≥ 0, heads ≥ 1, head_dim ≥ 1");
  if (a.rows == 0) return;
  ATTEND_OP_CHECK(a.q != nullptr && a.k.data != nullptr && a.kv_lengths != nullptr && a.out != nullptr, op,
                  "null pointer");
  ATTEND_OP_CHECK(a.out_row_stride >= a.columns, op, "out_row_stride is smaller than columns");
  for (index_t i = 0; i < a.rows; ++i)
    ATTEND_OP_CHECK(a.kv_lengths[i] >= 0 && a.kv_lengths[i] <= a.columns, op, "a row's kv length exceeds columns");
  const float scale = a.scale != 0.0f ? a.scale : 1.0f / std::sqrt(static_cast<float>(a.head_dim));
  const int nt = detail::useful_threads(threads, a.rows * a.columns * a.heads * a.head_dim, 1 << 16);
  detail::parallel_chunks(nt, a.rows, [&](index_t begin, index_t end) {
    for (index_t i = begin; i < end; ++i) {
      float* out = a.out + i * a.out_row_stride;
      const index_t n = a.kv_lengths[i];
      std::fill(out, out + a.columns, 0.0f);
      for (index_t h = 0; h < a.heads; ++h) {
        const float* q = a.q + i * a.q_row_stride + h * a.head_dim;
        // Scores into out[n..] would clash with the zeros; accumulate per head instead:
        // first the maximum, then exp and the sum, then the normalised average.
        float top = -std::numeric_limits<float>::infinity();
        auto score = [&](index_t j) {
          const CachedKey k = cached_key(a.k, i, j, h);
          float s = 0;
          for (index_t d = 0; d < a.head_dim; ++d) s += q[d] * k[d];
          return s * scale;
        };
        for (index_t j = 0; j < n; ++j) top = std::max(top, score(j));
        double total = 0;
        for (index_t j = 0; j < n; ++j) total += std::exp(static_cast<double>(score(j) - top));
        const double weight = 1.0 / (total * static_cast<double>(a.heads));
        for (index_t j = 0; j < n; ++j) out[j] += static_cast<float>(std::exp(static_cast<double>(score(j) - top)) * weight);
      }
    }
  });
}

}  // namespace attend::ops
