// Fused attention for short key ranges (an encoder's sentences: ≤ kShortAttentionMaxKeys
// keys, head_dim a multiple of 16 up to kShortAttentionMaxHeadDim, no mask but the key
// length, no relative positions): a group of queries of one (batch, head) in two exact
// passes over all its keys, the scores in L1.
//
// The scores and the softmax keep the tile kernel's layout and order
// (kernels/attention_tile.hpp: queries in the lanes, Qᵀ packed, K read in place, the
// max, 2^(s − m) and l = Σ_j p in key order per lane); the output does not: with P in
// L1, O[r][·] = Σ_j P[r][j] · V[j][·] is computed a row of head dims at a time (dims in
// the lanes, P broadcast, V's rows read in place), so the output is written as rows —
// no Oᵀ to transpose back (the tile kernel spent a sixth of a 54-token, 32-dim head on
// it) and no query padding in the second product (54 queries cost 64 lanes there).
// Every product and sum keeps its order and its fused roundings, so for up to
// kAttentionKeyTile keys (one tile of the online softmax, which is then exact) the
// results are the tile kernel's bits, on every ISA; past that the softmax here is the
// exact two-pass one (the running max never rescales), the same on every ISA too.
// Which kernel a query gets depends only on its own sentence's key length and the head
// shape (attention.cpp), never on the batch.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernel_table.hpp"
#include "kernels/attention_tile.hpp"
#include "kernels/simd.hpp"

namespace attend::ops::ATTEND_ISA_NS {

// Prefetches (hint H) the cache lines of `rows` rows of n floats from p, row stride
// `stride` (rows need not be aligned to lines).
template <int H>
inline void prefetch_rows(const float* p, index_t stride, index_t rows, index_t n) {
  for (index_t r = 0; r < rows; ++r) {
    const auto first = reinterpret_cast<std::uintptr_t>(p + r * stride) & ~std::uintptr_t{63};
    const auto end = reinterpret_cast<std::uintptr_t>(p + r * stride + n);
    for (std::uintptr_t line = first; line < end; line += 64)
      _mm_prefetch(reinterpret_cast<const char*>(line), static_cast<_mm_hint>(H));
  }
}

// The next item's queries, keys and values into L2, part `part` of `parts` (a share of
// each, so that the requests spread over the item instead of queuing at its start).
inline void prefetch_next_item(const detail::AttentionTile& t, index_t part, index_t parts) {
  if (t.next_q == nullptr) return;
  auto share = [&](const float* p, index_t stride, index_t rows) {
    const index_t r0 = rows * part / parts, r1 = rows * (part + 1) / parts;
    prefetch_rows<_MM_HINT_T1>(p + r0 * stride, stride, r1 - r0, t.head_dim);
  };
  share(t.next_q, t.q_stride, t.next_q_rows);
  // (A long next sentence goes to the tile kernel, which reads its keys tile by tile.)
  const index_t keys = std::min(t.next_kv_len, index_t{detail::kShortAttentionMaxKeys});
  share(t.next_k, t.k_stride, keys);
  share(t.next_v, t.v_stride, keys);
}

// Output rows for QR queries and CV vectors of head dims from c0, with P stored as
// Pᵀ[j][r] (row stride p_ld):
// out_r[c0 + ·] = (Σ_j Pᵀ[j][r] · v_j[c0 + ·]) · inv_l[r]
template <class A, int QR, int CV>
inline void short_values(float* out, index_t out_stride, const float* p, index_t p_ld, const float* inv_l,
                         const float* v, index_t v_stride, index_t keys) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  V acc[QR][CV];
#pragma GCC unroll 16
  for (int r = 0; r < QR; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < CV; ++c) acc[r][c] = V(0.0f);
  for (index_t j = 0; j < keys; ++j) {
    V x[CV];
#pragma GCC unroll 8
    for (int c = 0; c < CV; ++c) x[c] = V::load_unaligned(v + j * v_stride + c * W);
#pragma GCC unroll 16
    for (int r = 0; r < QR; ++r) {
      const V pr(p[j * p_ld + r]);
#pragma GCC unroll 8
      for (int c = 0; c < CV; ++c) acc[r][c] = fmadd<A>(pr, x[c], acc[r][c]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < QR; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < CV; ++c) (acc[r][c] * V(inv_l[r])).store_unaligned(out + r * out_stride + c * W);
}

// Pᵀ (st[j][·], row stride QV·W) and inv_l for the queries [q0, q0 + nq) of the group:
// Qᵀ packed, Sᵀ against every key, then per lane the max, 2^(s − m) and 1/Σ p — the
// tile kernel's steps and order, keys walked in the outer loop so that the QV lanes'
// chains overlap.
template <class A, int QV, int JR>
void short_keys_probabilities(const detail::AttentionTile& t, index_t q0, int nq, float* qt, float* st, float* inv_l) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>, TQ = QV * W;
  const index_t d = t.head_dim, keys = t.kv_len;
  detail::AttentionTile rows = t;
  rows.q = t.q + q0 * t.q_stride;
  rows.q_rows = nq;
  pack_scaled_queries<A, QV>(qt, rows, t.scale * kLog2e);
  for_balanced_blocks<JR>(keys, [&](index_t j, auto n) {
    attention_scores<A, QV, decltype(n)::value>(st + j * TQ, qt, t.k + j * t.k_stride, t.k_stride, d);
  });
  V m[QV], sum[QV];
#pragma GCC unroll 4
  for (int v = 0; v < QV; ++v) m[v] = V(-kInf), sum[v] = V(0.0f);
  for (index_t j = 0; j < keys; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < QV; ++v) m[v] = xsimd::max(m[v], V::load_aligned(st + j * TQ + v * W));
  // A row that has seen only −inf scores exponentiates against 0 (2^−inf = 0, not NaN).
#pragma GCC unroll 4
  for (int v = 0; v < QV; ++v) m[v] = xsimd::select(m[v] == V(-kInf), V(0.0f), m[v]);
  for (index_t j = 0; j < keys; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < QV; ++v) {
      float* s = st + j * TQ + v * W;
      const V p = exp2_nonpositive<A>(V::load_aligned(s) - m[v]);
      p.store_aligned(s);
      sum[v] += p;
    }
#pragma GCC unroll 4
  for (int v = 0; v < QV; ++v)
    xsimd::select(sum[v] > V(0.0f), V(1.0f) / sum[v], V(0.0f)).store_aligned(inv_l + v * W);
}

// QV: query vectors of a pass (the group's queries in passes of QV·W, a last short one
// in as many vectors as it needs); AS: accumulators of a scores block (keys × QV);
// CB × (AV / CB): head-dim vectors × query rows of an output block.
template <class A, int QV, int AS, int CB, int AV>
void attention_short_keys(const detail::AttentionTile& t) {
  constexpr int W = kLanes<A>, TQ = QV * W;
  static_assert(TQ <= detail::kAttentionQueryGroup, "attention_stack_bytes_per_thread counts a group's queries");
  constexpr index_t kMaxKeys = detail::kShortAttentionMaxKeys, kMaxD = detail::kShortAttentionMaxHeadDim;
  const index_t d = t.head_dim, keys = t.kv_len;
  const index_t cv = d / W;  // d is a multiple of 16, so of every ISA's lanes

  if (keys == 0) {  // nothing to attend: zeros, like the tile kernel
    for (int r = 0; r < t.q_rows; ++r) std::fill(t.out + r * t.out_stride, t.out + r * t.out_stride + d, 0.0f);
    return;
  }
  alignas(64) float qt[kMaxD * TQ];
  alignas(64) float st[kMaxKeys * TQ];
  alignas(64) float inv_l[TQ];
  // The values into L1 for the first pass's output.
  prefetch_rows<_MM_HINT_T0>(t.v, t.v_stride, keys, d);

  const index_t passes = (t.q_rows + TQ - 1) / TQ;
  for (int q0 = 0; q0 < t.q_rows; q0 += TQ) {
    const int nq = std::min(TQ, t.q_rows - q0);
    prefetch_next_item(t, q0 / TQ, passes);
    with_block_size<QV>((nq + W - 1) / W, [&](auto qv) {
      constexpr int n = decltype(qv)::value, tq = n * W;
      short_keys_probabilities<A, n, std::min(12, AS / n)>(t, q0, nq, qt, st, inv_l);
      float* out = t.out + q0 * t.out_stride;
      for_balanced_blocks<CB>(cv, [&](index_t c, auto nc) {
        constexpr int rows_per_block = AV / decltype(nc)::value;
        for_balanced_blocks<rows_per_block>(nq, [&](index_t r, auto nr) {
          short_values<A, decltype(nr)::value, decltype(nc)::value>(out + r * t.out_stride + c * W, t.out_stride,
                                                                    st + r, tq, inv_l + r, t.v + c * W, t.v_stride,
                                                                    keys);
        });
      });
    });
  }
}

}  // namespace attend::ops::ATTEND_ISA_NS
