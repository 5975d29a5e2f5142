// Fused attention driver: splits the work in (batch, head, query tile) items and hands
// each to the ISA's tile kernel (kernels/attention_tile.hpp) — a one-vector kernel for
// a last tile of at most a vector's queries, which short sequences (BERT's ~50 tokens in
// 32-query tiles) often end on. Items go round-robin to threads because under a causal
// mask later query tiles see more keys.
#include "attend/ops/attention.hpp"

#include <algorithm>

#include "attention_check.hpp"
#include "parallel.hpp"

namespace attend::ops {

std::size_t attention_stack_bytes_per_thread() {
  const std::size_t tq = static_cast<std::size_t>(detail::active_kernels().attention_query_tile);
  // Qᵀ and Oᵀ (kMaxHeadDim × TQ each) and one Sᵀ tile; see kernels/attention_tile.hpp.
  // With relative positions, Qᵀ·keys and Wᵀ (2R + 1 distances × TQ each) besides.
  return sizeof(float) * tq * (2 * detail::kMaxHeadDim + detail::kAttentionKeyTile + 2 * (2 * kMaxRelativeKeyDistance + 1));
}

void attention(const AttentionArgs& x, int threads) {
  detail::check_attention("attention", x, threads);
  if (x.batch * x.heads * x.q_len == 0) return;

  const auto& kt = detail::active_kernels();
  const index_t TQ = kt.attention_query_tile;
  const index_t q_tiles = (x.q_len + TQ - 1) / TQ;
  const index_t items = x.batch * x.heads * q_tiles;
  const float scale = detail::attention_scale(x.scale, x.head_dim);
  const index_t flops = 4 * x.batch * x.heads * x.q_len * std::max<index_t>(x.kv_len, 1) * x.head_dim;
  const int nt = detail::useful_threads(threads, flops, index_t{1} << 20);

  detail::parallel_round_robin(std::min<index_t>(nt, items), items, [&](index_t item) {
    const index_t tile = item % q_tiles, bh = item / q_tiles;
    const index_t b = bh / x.heads, h = bh % x.heads;
    const index_t t0 = tile * TQ;
    detail::AttentionTile t;
    t.head_dim = x.head_dim;
    t.q = x.q.at(b, h, t0);
    t.q_stride = x.q.seq_stride;
    t.q_rows = static_cast<int>(std::min(TQ, x.q_len - t0));
    t.k = x.k.at(b, h, 0);
    t.v = x.v.at(b, h, 0);
    t.k_stride = x.k.seq_stride;
    t.v_stride = x.v.seq_stride;
    t.kv_len = x.kv_lengths ? x.kv_lengths[b] : x.kv_len;
    // Query t0 + r sees key j iff j ≤ t0 + r + (kv_len − q_len).
    t.causal_shift = x.causal ? t0 + x.kv_len - x.q_len : x.kv_len;
    t.scale = scale;
    t.out = x.out.at(b, h, t0);
    t.out_stride = x.out.seq_stride;
    if (!x.positions.active()) return t.q_rows <= kt.float_lanes ? kt.attention_short_tile(t) : kt.attention_tile(t);
    t.positions = &x.positions;
    t.position_bias = x.positions.bias ? x.positions.bias + h * x.positions.bias_head_stride : nullptr;
    t.q_position = t0 + x.kv_len - x.q_len;
    kt.attention_tile_positions(t);
  });
}

}  // namespace attend::ops
