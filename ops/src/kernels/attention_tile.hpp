// Fused attention for one tile of TQ queries of one (batch, head): online softmax over
// key tiles of kAttentionKeyTile keys.
//
// Everything is vectorised across the tile's queries (TQ = QV vectors of lanes), so any
// head_dim works — down to the 4 of small real models — with K and V read in place as
// broadcast operands:
//   Sᵀ[j][q]  = Σ_c K[j][c] · Qᵀ[c][q]      (Qᵀ packed once per tile, pre-scaled by
//                                             scale·log2 e so softmax uses exp2)
//   m' = max(m, max_j Sᵀ[j]);  α = 2^(m − m');  l = α·l + Σ_j 2^(Sᵀ[j] − m')
//   Oᵀ[c][q]  = α·Oᵀ[c][q] + Σ_j V[j][c] · Pᵀ[j][q]
// Extra memory: Qᵀ, Oᵀ (head_dim × TQ) and one Sᵀ tile, on the stack.
//
// With relative positions (kPositions, ops::RelativePositions) each Sᵀ tile gets its
// position term before the running max: a per-head bias by clipped distance δ (T5),
// and/or Qᵀ·keys[δ], computed once per tile for the 2R+1 distances like scores against
// 2R+1 extra keys (Shaw). Relative values are folded in through Wᵀ[δ][q] = Σ_j P over
// the keys at distance δ, rescaled with Oᵀ, and added as Σ_δ values[δ]·Wᵀ[δ] at the end.
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include "kernel_table.hpp"
#include "kernels/simd.hpp"

namespace attend::ops::ATTEND_ISA_NS {

// Sᵀ rows for JR keys: st[jj][·] = Σ_c k_jj[c] · qt[c][·]
template <class A, int QV, int JR>
inline void attention_scores(float* st, const float* qt, const float* k, index_t k_stride,
                             index_t d) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>, TQ = QV * W;
  V acc[JR][QV];
  const float* kp[JR];
#pragma GCC unroll 16
  for (int j = 0; j < JR; ++j) {
    kp[j] = k + j * k_stride;
#pragma GCC unroll 4
    for (int v = 0; v < QV; ++v) acc[j][v] = V(0.0f);
  }
  for (index_t c = 0; c < d; ++c) {
    V q[QV];
#pragma GCC unroll 4
    for (int v = 0; v < QV; ++v) q[v] = V::load_aligned(qt + c * TQ + v * W);
#pragma GCC unroll 16
    for (int j = 0; j < JR; ++j) {
      const V kb(kp[j][c]);
#pragma GCC unroll 4
      for (int v = 0; v < QV; ++v) acc[j][v] = fmadd<A>(kb, q[v], acc[j][v]);
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < JR; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < QV; ++v) acc[j][v].store_aligned(st + j * TQ + v * W);
}

// CR rows of Oᵀ: ot[cc][·] += Σ_j v_j[c0 + cc] · st[j][·]
template <class A, int QV, int CR>
inline void attention_accumulate(float* ot, const float* st, const float* v, index_t v_stride,
                                 index_t keys) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>, TQ = QV * W;
  V acc[CR][QV];
#pragma GCC unroll 16
  for (int c = 0; c < CR; ++c)
#pragma GCC unroll 4
    for (int w = 0; w < QV; ++w) acc[c][w] = V::load_aligned(ot + c * TQ + w * W);
  for (index_t j = 0; j < keys; ++j) {
    V p[QV];
#pragma GCC unroll 4
    for (int w = 0; w < QV; ++w) p[w] = V::load_aligned(st + j * TQ + w * W);
    const float* vr = v + j * v_stride;
#pragma GCC unroll 16
    for (int c = 0; c < CR; ++c) {
      const V vb(vr[c]);
#pragma GCC unroll 4
      for (int w = 0; w < QV; ++w) acc[c][w] = fmadd<A>(vb, p[w], acc[c][w]);
    }
  }
#pragma GCC unroll 16
  for (int c = 0; c < CR; ++c)
#pragma GCC unroll 4
    for (int w = 0; w < QV; ++w) acc[c][w].store_aligned(ot + c * TQ + w * W);
}

// Calls f(std::integral_constant<int, n>) for a run-time n in [1, R]: remainders get a
// block of exactly their size instead of n one-row blocks, whose single accumulator
// chain would leave the FMA units waiting on latency.
template <int R, class F>
inline void with_block_size(index_t n, const F& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    ((n == I + 1 ? (f(std::integral_constant<int, I + 1>{}), true) : false) || ...);
  }(std::make_integer_sequence<int, R>{});
}

// Covers [0, n) with ⌈n/R⌉ blocks of near-equal size, calling f(offset, size) with the
// size as a constant: 64 = 11+11+11+11+10+10 keeps ≥ 20 accumulators in every block,
// where 12+12+12+12+12+4 ended on an 8-accumulator block that ran at half speed.
template <int R, class F>
inline void for_balanced_blocks(index_t n, const F& f) {
  const index_t blocks = (n + R - 1) / R, base = n / std::max<index_t>(blocks, 1), extra = n - base * blocks;
  index_t at = 0;
  for (index_t b = 0; b < blocks; ++b) {
    const index_t size = base + (b < extra ? 1 : 0);
    with_block_size<R>(size, [&](auto c) { f(at, c); });
    at += size;
  }
}

// Qᵀ[c][r] = q_r[c]·qscale for the tile's rows (0 past them), a lanes × lanes block at a
// time through registers (a scalar loop over the d × TQ elements, and the one storing
// the output below, took ~a third of a 54-query, 32-dim tile's time).
template <class A, int QV>
inline void pack_scaled_queries(float* qt, const detail::AttentionTile& t, float qscale) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>, TQ = QV * W;
  const index_t d = t.head_dim;
  for (int v = 0; v < QV; ++v)
    for (index_t c0 = 0; c0 < d; c0 += W) {
      const index_t cols = std::min<index_t>(W, d - c0);
      V x[W];
#pragma GCC unroll 16
      for (int i = 0; i < W; ++i) {
        const int r = v * W + i;
        const float* q = t.q + r * t.q_stride + c0;
        x[i] = r >= t.q_rows ? V(0.0f) : cols == W ? V::load_unaligned(q) : load_partial<A>(q, cols, 0.0f);
      }
      transpose_block<A>(x);
      for (index_t i = 0; i < cols; ++i) (x[i] * V(qscale)).store_aligned(qt + (c0 + i) * TQ + v * W);
    }
}

// out_r[c] = Oᵀ[c][r]·inv_l[r] for the tile's rows, a lanes × lanes block at a time.
template <class A, int QV>
inline void store_normalized_output(const detail::AttentionTile& t, const float* ot, const vfloat<A> (&inv_l)[QV]) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>, TQ = QV * W;
  const index_t d = t.head_dim;
  for (int v = 0; v < QV && v * W < t.q_rows; ++v)
    for (index_t c0 = 0; c0 < d; c0 += W) {
      const index_t cols = std::min<index_t>(W, d - c0);
      V x[W];
#pragma GCC unroll 16
      for (int i = 0; i < W; ++i) x[i] = i < cols ? V::load_aligned(ot + (c0 + i) * TQ + v * W) * inv_l[v] : V(0.0f);
      transpose_block<A>(x);
      const int rows = std::min(W, t.q_rows - v * W);
      for (int i = 0; i < rows; ++i) {
        float* o = t.out + (v * W + i) * t.out_stride + c0;
        if (cols == W) {
          x[i].store_unaligned(o);
        } else {
          store_partial<A>(o, x[i], cols);
        }
      }
    }
}

// Clipped distance index δ + R of key j from query position i.
inline index_t relative_index(index_t j, index_t i, index_t r) { return std::clamp(j - i, -r, r) + r; }

template <class A, int QV, int R, bool kPositions = false>
void attention_tile(const detail::AttentionTile& t) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>, TQ = QV * W, TK = detail::kAttentionKeyTile;
  const index_t d = t.head_dim;
  const int nq = t.q_rows;

  alignas(64) float qt[detail::kMaxHeadDim * TQ];
  alignas(64) float ot[detail::kMaxHeadDim * TQ];
  alignas(64) float st[TK * TQ];

  pack_scaled_queries<A, QV>(qt, t, t.scale * kLog2e);
  std::fill(ot, ot + d * TQ, 0.0f);

  // Relative positions: Qᵀ·keys[δ] (scaled like Sᵀ) and the weights Wᵀ per distance.
  constexpr index_t kRel = kPositions ? 2 * kMaxRelativeKeyDistance + 1 : 1;
  alignas(64) float qk_rel[kRel * TQ];
  alignas(64) float w_rel[kRel * TQ];
  const RelativePositions* pos = t.positions;
  const index_t rd = kPositions ? pos->max_distance : 0, nd = 2 * rd + 1;
  if constexpr (kPositions) {
    if (pos->keys)
      for_balanced_blocks<R>(nd, [&](index_t c, auto n) {
        attention_scores<A, QV, decltype(n)::value>(qk_rel + c * TQ, qt, pos->keys + c * d, d, d);
      });
    if (pos->values) std::fill(w_rel, w_rel + nd * TQ, 0.0f);
  }

  V m[QV], l[QV];
#pragma GCC unroll 4
  for (int v = 0; v < QV; ++v) {
    m[v] = V(-kInf);
    l[v] = V(0.0f);
  }

  // The last row of the tile sees keys up to (nq − 1) + causal_shift.
  const index_t j_end = std::min<index_t>(t.kv_len, index_t{nq} + t.causal_shift);
  for (index_t j0 = 0; j0 < j_end; j0 += TK) {
    const index_t jn = std::min<index_t>(TK, j_end - j0);

    for_balanced_blocks<R>(jn, [&](index_t j, auto n) {
      attention_scores<A, QV, decltype(n)::value>(st + j * TQ, qt, t.k + (j0 + j) * t.k_stride, t.k_stride, d);
    });

    if constexpr (kPositions) {
      const float* bias = t.position_bias;
      for (index_t jj = 0; jj < jn; ++jj) {
        float* s = st + jj * TQ;
        for (int r = 0; r < TQ; ++r) {
          const index_t at = relative_index(j0 + jj, t.q_position + r, rd);
          float add = bias ? bias[at] * kLog2e : 0.0f;
          if (pos->keys) add += qk_rel[at * TQ + r];
          s[r] += add;
        }
      }
    }

    // Causal mask: key j0+j is hidden from rows r < j0 + j − causal_shift.
    if (j0 + jn - 1 > t.causal_shift) {
      for (index_t jj = 0; jj < jn; ++jj) {
        const index_t hidden_rows = j0 + jj - t.causal_shift;
        if (hidden_rows <= 0) continue;
#pragma GCC unroll 4
        for (int v = 0; v < QV; ++v) {
          const auto hide = lane_index<A>(static_cast<float>(v * W)) < V(static_cast<float>(hidden_rows));
          float* s = st + jj * TQ + v * W;
          xsimd::select(hide, V(-kInf), V::load_aligned(s)).store_aligned(s);
        }
      }
    }

    V base[QV], alpha[QV];
    bool grew = false;
#pragma GCC unroll 4
    for (int v = 0; v < QV; ++v) {
      V mt(-kInf);
      for (index_t jj = 0; jj < jn; ++jj) mt = xsimd::max(mt, V::load_aligned(st + jj * TQ + v * W));
      const V m_new = xsimd::max(m[v], mt);
      // A row that has seen only masked keys keeps m = −inf; exponentiate against 0
      // instead so that 2^(−inf − 0) = 0 rather than NaN.
      base[v] = xsimd::select(m_new == V(-kInf), V(0.0f), m_new);
      alpha[v] = exp2_nonpositive<A>(m[v] - base[v]);
      grew = grew || xsimd::any(m_new > m[v]);
      m[v] = m_new;
    }
    // Past the first tiles the running max rarely moves; α is then exactly 1 and Oᵀ
    // needs no rescaling pass.
    if (grew) {
      for (index_t c = 0; c < d; ++c)
#pragma GCC unroll 4
        for (int v = 0; v < QV; ++v) {
          float* o = ot + c * TQ + v * W;
          (V::load_aligned(o) * alpha[v]).store_aligned(o);
        }
      if constexpr (kPositions)
        if (pos->values)
          for (index_t c = 0; c < nd; ++c)
            for (int v = 0; v < QV; ++v) {
              float* w = w_rel + c * TQ + v * W;
              (V::load_aligned(w) * alpha[v]).store_aligned(w);
            }
    }
#pragma GCC unroll 4
    for (int v = 0; v < QV; ++v) {
      V sum(0.0f);
      for (index_t jj = 0; jj < jn; ++jj) {
        float* s = st + jj * TQ + v * W;
        const V p = exp2_nonpositive<A>(V::load_aligned(s) - base[v]);
        p.store_aligned(s);
        sum += p;
      }
      l[v] = fmadd<A>(l[v], alpha[v], sum);
    }

    if constexpr (kPositions)
      if (pos->values)
        for (index_t jj = 0; jj < jn; ++jj)
          for (int r = 0; r < TQ; ++r) w_rel[relative_index(j0 + jj, t.q_position + r, rd) * TQ + r] += st[jj * TQ + r];

    const float* v0 = t.v + j0 * t.v_stride;
    for_balanced_blocks<R>(d, [&](index_t c, auto n) {
      attention_accumulate<A, QV, decltype(n)::value>(ot + c * TQ, st, v0 + c, t.v_stride, jn);
    });
  }

  if constexpr (kPositions)
    if (pos->values)
      for_balanced_blocks<R>(d, [&](index_t c, auto n) {
        attention_accumulate<A, QV, decltype(n)::value>(ot + c * TQ, w_rel, pos->values + c, d, nd);
      });

  V inv_l[QV];
#pragma GCC unroll 4
  for (int v = 0; v < QV; ++v) inv_l[v] = xsimd::select(l[v] > V(0.0f), V(1.0f) / l[v], V(0.0f));
  store_normalized_output<A, QV>(t, ot, inv_l);
}

}  // namespace attend::ops::ATTEND_ISA_NS
