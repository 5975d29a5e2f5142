// Decoding attention: one query (a row's head) against its cached keys, online softmax
// over key tiles, vectorised along head_dim (with a partial last vector, so any
// head_dim works). Keys are fetched through the cache view's row table, which is how
// beam search reorders hypotheses without moving cached data. The cache holds E: float,
// or bf16 bits (std::uint16_t) widened to float as they are loaded — every product and
// sum is fp32 either way.
#pragma once

#include <algorithm>

#include "kernel_table.hpp"
#include "kernels/simd.hpp"

namespace attend::ops::ATTEND_ISA_NS {

// Σ a·b in SlotSums' order over 16 slots (the register path's key_products agree).
template <class A, class E>
inline float dot(const float* a, const E* b, index_t n) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  SlotSums<A, 16> sums;
  index_t c = 0;
  for (; c + W <= n; c += W) sums.at(c) = fmadd<A>(V::load_unaligned(a + c), load_widened<A>(b + c), sums.at(c));
  if (c < n)
    sums.at(c) = fmadd<A>(load_partial<A>(a + c, n - c, 0.f), load_widened_partial<A>(b + c, n - c), sums.at(c));
  return sums.total();
}

// y[0, n) = y·scale + p·x ; y is 64-byte aligned scratch padded to whole vectors.
template <class A, class E>
inline void scale_axpy(float* y, float scale, float p, const E* x, index_t n) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  index_t c = 0;
  for (; c + W <= n; c += W)
    fmadd<A>(V(p), load_widened<A>(x + c), V::load_aligned(y + c) * V(scale)).store_aligned(y + c);
  if (c < n)
    fmadd<A>(V(p), load_widened_partial<A>(x + c, n - c), V::load_aligned(y + c) * V(scale)).store_aligned(y + c);
}

// Turns a tile's scaled scores s[0, n) into exp2(s − m_new) in place and returns their
// sum; the last partial vector is masked (filled with −inf, which exp2 maps to 0).
template <class A>
inline float exponentiate_tile(float* s, index_t n, float m_new) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  SlotSums<A, 16> sum;
  index_t j = 0;
  for (; j + W <= n; j += W) {
    const V p = exp2_nonpositive<A>(V::load_aligned(s + j) - V(m_new));
    p.store_aligned(s + j);
    sum.add(j, p);
  }
  if (j < n) {
    const V p = exp2_nonpositive<A>(load_partial<A>(s + j, n - j, -kInf) - V(m_new));
    store_partial<A>(s + j, p, n - j);
    sum.add(j, p);
  }
  return sum.total();
}

// Cached keys and values of one row lie a whole position apart (the cache is
// position-major, so a decoding step appends one contiguous block): a stride far beyond
// a page, which the hardware prefetchers do not follow. Without help every key is a
// cache miss paid in full; these fetch the lines of keys to come while earlier ones are
// computed.
template <class E>
inline void prefetch_vector(const E* p, index_t d) {
  constexpr index_t kLine = 64 / sizeof(E);
  for (index_t c = 0; c < d; c += kLine) __builtin_prefetch(p + c);
}
template <class E>
inline void prefetch_keys(const KvCacheView& cache, index_t row, index_t head, index_t first, index_t last, index_t d) {
  for (index_t j = first; j < last; ++j) prefetch_vector(cache.at<E>(row, j, head), d);
}

// Head dims up to NV vectors (64 floats on AVX2, 128 on AVX-512): q and the output
// accumulator stay in registers for the whole key loop. Keeping the accumulator in
// memory put a store→load round trip (~15 cycles) on every key's critical path.
template <class A, int NV, class E>
void attention_decode_registers(const detail::DecodeQuery& dq) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>, TK = detail::kAttentionKeyTile;
  const index_t d = dq.head_dim, last = d - (NV - 1) * W;  // floats in the last vector, 1…W
  auto load = [&](const auto* p, int v) { return v < NV - 1 || last == W ? load_widened<A>(p + v * W) : load_widened_partial<A>(p + v * W, last); };

  const float qscale = dq.scale * kLog2e;
  V q[NV], o[NV];
  for (int v = 0; v < NV; ++v) q[v] = load(dq.q, v) * V(qscale), o[v] = V(0.0f);
  const V lanes = lane_index<A>(0.0f);
  alignas(64) float s[TK];
  // Each key's place in the caches, found once per tile (and W keys beyond it, for the
  // prefetches): with a row table that is a load and a multiply per key, which every
  // later use — products, values, both prefetches — would otherwise repeat. Keys and
  // values share the offsets when their views share a layout (the runtime's do).
  const KvCacheView &kc = *dq.k, &vc = *dq.v;
  const bool shared = kc.position_stride == vc.position_stride && kc.row_stride == vc.row_stride &&
                      kc.head_stride == vc.head_stride && kc.row_table == vc.row_table && kc.row_table_ld == vc.row_table_ld;
  const E* kdata = static_cast<const E*>(kc.data);
  const E* vdata = static_cast<const E*>(vc.data);
  index_t koff[TK + W], voff_own[TK + W];
  const index_t* voff = shared ? koff : voff_own;
  float m = -kInf, l = 0.0f;
  for (index_t j0 = 0; j0 < dq.kv_len; j0 += TK) {
    const index_t jn = std::min<index_t>(TK, dq.kv_len - j0), known = std::min<index_t>(TK + W, dq.kv_len - j0);
    for (index_t j = 0; j < known; ++j) {
      koff[j] = kc.offset(dq.row, j0 + j, dq.head);
      if (!shared) voff_own[j] = vc.offset(dq.row, j0 + j, dq.head);
    }
    if (j0 == 0)
      for (index_t j = 0; j < std::min<index_t>(W, known); ++j) prefetch_vector(kdata + koff[j], d);
    // q·k in dot()'s order: head dim c in slot c mod 16 (part v mod P of the vectors),
    // the parts folded by halves into one vector, which sum_each folds on.
    auto key_products = [&](index_t j) {
      constexpr int P = 16 / W;
      const E* k = kdata + koff[j];
      V acc[P];
      for (int p = 0; p < P; ++p) acc[p] = p < NV ? q[p] * load(k, p) : V(-0.0f);
      for (int v = P; v < NV; ++v) acc[v % P] = fmadd<A>(q[v], load(k, v), acc[v % P]);
      for (int n = P / 2; n >= 1; n /= 2)
        for (int p = 0; p < n; ++p) acc[p] += acc[p + n];
      return acc[0];
    };
    // W keys at a time, reduced together (~3 vector ops per key instead of a ~8-op
    // horizontal sum each); a last partial group is padded with zero products.
    V tile_max(-kInf);
    for (index_t j = 0; j < jn; j += W) {
      const index_t n = std::min<index_t>(W, jn - j);
      // The next group's keys, and this group's values (read after the tile's scores).
      for (index_t p = j + W; p < std::min<index_t>(j + 2 * W, known); ++p) prefetch_vector(kdata + koff[p], d);
      for (index_t p = j; p < j + n; ++p) prefetch_vector(vdata + voff[p], d);
      V products[W];
      for (int k = 0; k < W; ++k) products[k] = k < n ? key_products(j + k) : V(0.0f);
      const V scores = sum_each<A>(products);
      if (n == W) {
        scores.store_aligned(s + j);
        tile_max = xsimd::max(tile_max, scores);
      } else {
        store_partial<A>(s + j, scores, n);
        tile_max = xsimd::max(tile_max, xsimd::select(lanes < V(static_cast<float>(n)), scores, V(-kInf)));
      }
    }
    const float mt = hmax<A>(tile_max);
    const float m_new = std::max(m, mt);
    const float alpha = std::exp2(m - m_new);  // 0 on the first tile (m = −inf)
    l = l * alpha + exponentiate_tile<A>(s, jn, m_new);
    for (int v = 0; v < NV; ++v) o[v] *= V(alpha);
    for (index_t j = 0; j < jn; ++j) {
      const E* val = vdata + voff[j];
      for (int v = 0; v < NV; ++v) o[v] = fmadd<A>(V(s[j]), load(val, v), o[v]);
    }
    m = m_new;
  }
  const V inv_l(l > 0.0f ? 1.0f / l : 0.0f);
  for (int v = 0; v < NV - 1; ++v) (o[v] * inv_l).store_unaligned(dq.out + v * W);
  store_partial<A>(dq.out + (NV - 1) * W, o[NV - 1] * inv_l, last);
}

// Wider heads: the accumulator lives in aligned scratch.
//
// With relative positions (kPositions, ops::RelativePositions) every score gets the term
// of its clipped distance δ to the query position — a per-head bias (T5) and/or q·keys[δ],
// computed once for the 2R+1 distances (Shaw) — and relative values are folded in
// through w[δ] = Σ_j p_j over the keys at distance δ (rescaled with the accumulator),
// added as Σ_δ w[δ]·values[δ] at the end. Any head_dim takes this path then.
template <class A, class E, bool kPositions = false>
void attention_decode_scratch(const detail::DecodeQuery& dq) {
  constexpr int W = kLanes<A>, TK = detail::kAttentionKeyTile;
  constexpr index_t kRel = kPositions ? 2 * kMaxRelativeKeyDistance + 1 : 1;
  const index_t d = dq.head_dim;
  alignas(64) float o[detail::kMaxHeadDim + W] = {};
  alignas(64) float s[TK];
  [[maybe_unused]] float qk_rel[kRel], w_rel[kRel];
  [[maybe_unused]] const RelativePositions* pos = dq.positions;
  [[maybe_unused]] const index_t rd = kPositions ? pos->max_distance : 0, nd = 2 * rd + 1;
  [[maybe_unused]] auto relative_index = [&](index_t j) { return std::clamp(j - dq.q_position, -rd, rd) + rd; };

  // q pre-scaled, as the register path scales it, so both give the same scores.
  const float qscale = dq.scale * kLog2e;
  alignas(64) float q[detail::kMaxHeadDim];
  for (index_t c = 0; c < d; ++c) q[c] = dq.q[c] * qscale;
  if constexpr (kPositions) {
    if (pos->keys)
      for (index_t c = 0; c < nd; ++c) qk_rel[c] = dot<A>(q, pos->keys + c * d, d);
    if (pos->values) std::fill(w_rel, w_rel + nd, 0.0f);
  }
  float m = -kInf, l = 0.0f;
  for (index_t j0 = 0; j0 < dq.kv_len; j0 += TK) {
    const index_t jn = std::min<index_t>(TK, dq.kv_len - j0);
    prefetch_keys<E>(*dq.k, dq.row, dq.head, j0, j0 + jn, d);
    prefetch_keys<E>(*dq.v, dq.row, dq.head, j0, j0 + jn, d);
    float mt = -kInf;
    for (index_t j = 0; j < jn; ++j) {
      s[j] = dot<A>(q, dq.k->at<E>(dq.row, j0 + j, dq.head), d);
      if constexpr (kPositions) {
        const index_t at = relative_index(j0 + j);
        if (dq.position_bias) s[j] += dq.position_bias[at] * kLog2e;
        if (pos->keys) s[j] += qk_rel[at];
      }
      mt = std::max(mt, s[j]);
    }
    const float m_new = std::max(m, mt);
    const float alpha = std::exp2(m - m_new);  // 0 on the first tile (m = −inf)
    l = l * alpha + exponentiate_tile<A>(s, jn, m_new);
    // Rescale O by α once, folded into the first key's update.
    float scale = alpha;
    for (index_t jj = 0; jj < jn; ++jj) {
      scale_axpy<A>(o, scale, s[jj], dq.v->at<E>(dq.row, j0 + jj, dq.head), d);
      scale = 1.0f;
    }
    if constexpr (kPositions)
      if (pos->values) {
        if (alpha != 1.0f)
          for (index_t c = 0; c < nd; ++c) w_rel[c] *= alpha;
        for (index_t jj = 0; jj < jn; ++jj) w_rel[relative_index(j0 + jj)] += s[jj];
      }
    m = m_new;
  }
  if constexpr (kPositions)
    if (pos->values)
      for (index_t c = 0; c < nd; ++c) scale_axpy<A>(o, 1.0f, w_rel[c], pos->values + c * d, d);
  const float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
  for (index_t c = 0; c < d; ++c) dq.out[c] = o[c] * inv_l;
}

template <class A, class E>
void attention_decode_typed(const detail::DecodeQuery& dq) {
  constexpr int W = kLanes<A>;
  switch ((dq.head_dim + W - 1) / W) {
    case 1: return attention_decode_registers<A, 1, E>(dq);
    case 2: return attention_decode_registers<A, 2, E>(dq);
    case 3: return attention_decode_registers<A, 3, E>(dq);
    case 4: return attention_decode_registers<A, 4, E>(dq);
    case 5: return attention_decode_registers<A, 5, E>(dq);
    case 6: return attention_decode_registers<A, 6, E>(dq);
    case 7: return attention_decode_registers<A, 7, E>(dq);
    case 8: return attention_decode_registers<A, 8, E>(dq);
    default: return attention_decode_scratch<A, E>(dq);
  }
}

// The cache's element type (the same for keys and values; the driver checks) picks the
// instantiation.
template <class A>
void attention_decode(const detail::DecodeQuery& dq) {
  if (dq.k->type == KvType::bf16) return attention_decode_typed<A, std::uint16_t>(dq);
  attention_decode_typed<A, float>(dq);
}
template <class A>
void attention_decode_positions(const detail::DecodeQuery& dq) {
  if (dq.k->type == KvType::bf16) return attention_decode_scratch<A, std::uint16_t, true>(dq);
  attention_decode_scratch<A, float, true>(dq);
}

}  // namespace attend::ops::ATTEND_ISA_NS
