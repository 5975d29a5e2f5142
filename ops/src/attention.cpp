// Fused attention driver: splits the work in (batch, head, group of kAttentionQueryGroup
// queries) items and hands each group to one of the ISA's kernels:
//   - attention_short_keys (kernels/attention_short.hpp) when the sentence has at most
//     kShortAttentionMaxKeys keys, the head a multiple of 16 dims up to
//     kShortAttentionMaxHeadDim, and no causal mask or relative positions: an encoder's
//     sentences, in two exact passes with keys in the lanes;
//   - otherwise the online-softmax tile kernel (kernels/attention_tile.hpp), tile by
//     tile, with a one-vector kernel for a last tile of at most a vector's queries,
//     which short sequences often end on.
// The choice depends only on the item's own key length and the head's shape, never on
// the batch, the threads or the ISA, so a sentence gets the same bits wherever it is.
// Items go round-robin to threads because under a causal mask later groups see more keys.
#include "attend/ops/attention.hpp"

#include <algorithm>

#include "attention_check.hpp"
#include "parallel.hpp"

namespace attend::ops {
namespace {

bool short_keys_kernel_applies(const AttentionArgs& x, index_t keys) {
  return !x.causal && !x.positions.active() && keys <= detail::kShortAttentionMaxKeys && x.head_dim % 16 == 0 &&
         x.head_dim <= detail::kShortAttentionMaxHeadDim;
}

}  // namespace

std::size_t attention_stack_bytes_per_thread() {
  const std::size_t tq = static_cast<std::size_t>(detail::active_kernels().attention_query_tile);
  // Qᵀ and Oᵀ (kMaxHeadDim × TQ each) and one Sᵀ tile; see kernels/attention_tile.hpp.
  // With relative positions, Qᵀ·keys and Wᵀ (2R + 1 distances × TQ each) besides.
  const std::size_t tile = tq * (2 * detail::kMaxHeadDim + detail::kAttentionKeyTile + 2 * (2 * kMaxRelativeKeyDistance + 1));
  // Qᵀ, all the keys' Pᵀ and 1/l for one pass of at most a group's queries; see
  // kernels/attention_short.hpp.
  const auto short_keys = static_cast<std::size_t>(
      detail::kAttentionQueryGroup * (detail::kShortAttentionMaxHeadDim + detail::kShortAttentionMaxKeys + 1));
  return sizeof(float) * std::max(tile, short_keys);
}

void attention(const AttentionArgs& x, int threads) {
  detail::check_attention("attention", x, threads);
  if (x.batch * x.heads * x.q_len == 0) return;

  const auto& kt = detail::active_kernels();
  const index_t TQ = kt.attention_query_tile, G = detail::kAttentionQueryGroup;
  static_assert(detail::kAttentionQueryGroup % 16 == 0, "groups start on every ISA's query tiles");
  const index_t groups = (x.q_len + G - 1) / G;
  const index_t items = x.batch * x.heads * groups;
  const float scale = detail::attention_scale(x.scale, x.head_dim);
  const index_t flops = 4 * x.batch * x.heads * x.q_len * std::max<index_t>(x.kv_len, 1) * x.head_dim;
  const int nt = detail::useful_threads(threads, flops, index_t{1} << 20);

  const index_t used = std::min<index_t>(nt, items);
  detail::parallel_round_robin(used, items, [&](index_t item) {
    const index_t group = item % groups, bh = item / groups;
    const index_t b = bh / x.heads, h = bh % x.heads;
    const index_t g0 = group * G, g_end = std::min(x.q_len, g0 + G);
    detail::AttentionTile t;
    if (const index_t next = item + used; next < items) {  // this thread's next item
      const index_t ng = next % groups, nbh = next / groups, nb = nbh / x.heads, nh = nbh % x.heads;
      t.next_q = x.q.at(nb, nh, ng * G);
      t.next_q_rows = static_cast<int>(std::min(G, x.q_len - ng * G));
      t.next_k = x.k.at(nb, nh, 0);
      t.next_v = x.v.at(nb, nh, 0);
      t.next_kv_len = x.kv_lengths ? x.kv_lengths[nb] : x.kv_len;
    }
    t.head_dim = x.head_dim;
    t.q_stride = x.q.seq_stride;
    t.k = x.k.at(b, h, 0);
    t.v = x.v.at(b, h, 0);
    t.k_stride = x.k.seq_stride;
    t.v_stride = x.v.seq_stride;
    t.kv_len = x.kv_lengths ? x.kv_lengths[b] : x.kv_len;
    t.scale = scale;
    t.out_stride = x.out.seq_stride;
    if (short_keys_kernel_applies(x, t.kv_len)) {
      t.q = x.q.at(b, h, g0);
      t.q_rows = static_cast<int>(g_end - g0);
      t.out = x.out.at(b, h, g0);
      return kt.attention_short_keys(t);
    }
    for (index_t t0 = g0; t0 < g_end; t0 += TQ) {
      t.q = x.q.at(b, h, t0);
      t.q_rows = static_cast<int>(std::min(TQ, x.q_len - t0));
      // Query t0 + r sees key j iff j ≤ t0 + r + (kv_len − q_len).
      t.causal_shift = x.causal ? t0 + x.kv_len - x.q_len : x.kv_len;
      t.out = x.out.at(b, h, t0);
      if (!x.positions.active()) {
        t.q_rows <= kt.float_lanes ? kt.attention_short_tile(t) : kt.attention_tile(t);
        continue;
      }
      t.positions = &x.positions;
      t.position_bias = x.positions.bias ? x.positions.bias + h * x.positions.bias_head_stride : nullptr;
      t.q_position = t0 + x.kv_len - x.q_len;
      kt.attention_tile_positions(t);
    }
  });
}

}  // namespace attend::ops
