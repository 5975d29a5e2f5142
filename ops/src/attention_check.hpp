// Argument checks shared by the fused and unfused attention drivers.
#pragma once

#include <cmath>

#include "attend/ops/attention.hpp"
#include "check.hpp"
#include "kernel_table.hpp"

namespace attend::ops::detail {

inline void check_positions(const char* op, const RelativePositions& p, index_t heads) {
  if (!p.active()) return;
  ATTEND_OP_CHECK(p.max_distance >= 0, op, "relative positions: max_distance ", p.max_distance, " is negative");
  ATTEND_OP_CHECK((p.keys == nullptr && p.values == nullptr) || p.max_distance <= kMaxRelativeKeyDistance, op,
                  "relative keys/values: max_distance ", p.max_distance, " exceeds ", kMaxRelativeKeyDistance);
  ATTEND_OP_CHECK(p.bias == nullptr || heads <= 1 || p.bias_head_stride >= 2 * p.max_distance + 1, op,
                  "relative bias: head stride ", p.bias_head_stride, " is below 2·max_distance + 1 = ", 2 * p.max_distance + 1);
}

inline void check_attention(const char* op, const AttentionArgs& x, int threads) {
  check_threads(op, threads);
  ATTEND_OP_CHECK(x.batch >= 0 && x.heads >= 0 && x.q_len >= 0 && x.kv_len >= 0, op,
                  "negative shape (batch ", x.batch, ", heads ", x.heads, ", q_len ", x.q_len, ", kv_len ",
                  x.kv_len, ")");
  ATTEND_OP_CHECK(x.head_dim >= 1 && x.head_dim <= kMaxHeadDim, op, "head_dim ", x.head_dim,
                  " is outside [1, ", kMaxHeadDim, "]");
  ATTEND_OP_CHECK(std::isfinite(x.scale), op, "scale is not finite");
  check_positions(op, x.positions, x.heads);
  if (x.batch * x.heads * x.q_len == 0) return;
  ATTEND_OP_CHECK(x.q.data && x.out.data, op, "q or out is null");
  ATTEND_OP_CHECK(x.kv_len == 0 || (x.k.data && x.v.data), op, "k or v is null");
  if (x.kv_lengths) {
    for (index_t b = 0; b < x.batch; ++b)
      ATTEND_OP_CHECK(x.kv_lengths[b] >= 0 && x.kv_lengths[b] <= x.kv_len, op, "kv_lengths[", b, "] = ",
                      x.kv_lengths[b], " is outside [0, kv_len = ", x.kv_len, "]");
  }
}

inline float attention_scale(float scale, index_t head_dim) {
  return scale != 0.0f ? scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

}  // namespace attend::ops::detail
