// Decoding attention driver: one item per (row, head), split in contiguous chunks.
#include <algorithm>
#include <cmath>

#include "attend/ops/attention.hpp"
#include "attention_check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"

namespace attend::ops {

void attention_decode(const DecodeAttentionArgs& x, int threads) {
  constexpr const char* op = "attention_decode";
  detail::check_threads(op, threads);
  ATTEND_OP_CHECK(x.rows >= 0 && x.heads >= 0, op, "negative shape (rows ", x.rows, ", heads ", x.heads, ")");
  ATTEND_OP_CHECK(x.head_dim >= 1 && x.head_dim <= detail::kMaxHeadDim, op, "head_dim ", x.head_dim,
                  " is outside [1, ", detail::kMaxHeadDim, "]");
  ATTEND_OP_CHECK(std::isfinite(x.scale), op, "scale is not finite");
  detail::check_positions(op, x.positions, x.heads);
  if (x.rows * x.heads == 0) return;
  ATTEND_OP_CHECK(x.q && x.out && x.kv_lengths, op, "q, out and kv_lengths are required");
  ATTEND_OP_CHECK(x.k.data && x.v.data, op, "k or v cache is null");
  ATTEND_OP_CHECK(x.k.type == x.v.type, op, "k cache is ", kv_type_name(x.k.type), " but v cache is ",
                  kv_type_name(x.v.type));
  ATTEND_OP_CHECK(x.q_row_stride >= x.heads * x.head_dim && x.out_row_stride >= x.heads * x.head_dim, op,
                  "row strides must hold heads × head_dim = ", x.heads * x.head_dim, " floats");
  index_t keys = 0;
  for (index_t i = 0; i < x.rows; ++i) {
    ATTEND_OP_CHECK(x.kv_lengths[i] >= 0, op, "kv_lengths[", i, "] = ", x.kv_lengths[i], " is negative");
    keys += x.kv_lengths[i];
  }

  const auto& kt = detail::active_kernels();
  const float scale = x.scale != 0.0f ? x.scale : 1.0f / std::sqrt(static_cast<float>(x.head_dim));
  const index_t items = x.rows * x.heads;
  const int nt = detail::useful_threads(threads, 4 * keys * x.heads * x.head_dim, index_t{1} << 18);
  detail::parallel_chunks(nt, items, [&](index_t first, index_t last) {
    detail::DecodeQuery dq;
    dq.head_dim = x.head_dim;
    dq.k = &x.k;
    dq.v = &x.v;
    dq.scale = scale;
    const bool positions = x.positions.active();
    if (positions) dq.positions = &x.positions;
    for (index_t item = first; item < last; ++item) {
      dq.row = item / x.heads;
      dq.head = item % x.heads;
      dq.q = x.q + dq.row * x.q_row_stride + dq.head * x.head_dim;
      dq.out = x.out + dq.row * x.out_row_stride + dq.head * x.head_dim;
      dq.kv_len = x.kv_lengths[dq.row];
      if (!positions) {
        kt.attention_decode(dq);
        continue;
      }
      dq.position_bias = x.positions.bias ? x.positions.bias + dq.head * x.positions.bias_head_stride : nullptr;
      dq.q_position = x.query_positions ? x.query_positions[dq.row] : dq.kv_len - 1;
      kt.attention_decode_positions(dq);
    }
  });
}

}  // namespace attend::ops
