// Plain loops: this op runs only when a caller asks for attention, on one layer, so
// it needs no per-ISA kernel (and it is its own reference).
#include "attend/ops/attention_probs.hpp"
#include "attend/ops/bf16.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "check.hpp"
#include "parallel.hpp"

namespace attend::ops {

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
          float s = 0;
          if (a.k.type == KvType::bf16) {
            const std::uint16_t* k = a.k.at<std::uint16_t>(i, j, h);
            for (index_t d = 0; d < a.head_dim; ++d) s += q[d] * float_from_bf16(k[d]);
          } else {
            const float* k = a.k.at<float>(i, j, h);
            for (index_t d = 0; d < a.head_dim; ++d) s += q[d] * k[d];
          }
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
