// Decoding attention: one query (a row's head) against its cached keys, online softmax
// over key tiles, vectorised along head_dim (with a partial last vector, so any
// head_dim works). Keys are fetched through the cache view's row table, which is how
// beam search reorders hypotheses without moving cached data.
#pragma once

#include <algorithm>

#include "kernel_table.hpp"
#include "kernels/simd.hpp"

namespace attend::ops::ATTEND_ISA_NS {

template <class A>
inline float dot(const float* a, const float* b, index_t n) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  V acc0(0.0f), acc1(0.0f);
  index_t c = 0;
  for (; c + 2 * W <= n; c += 2 * W) {
    acc0 = xsimd::fma(V::load_unaligned(a + c), V::load_unaligned(b + c), acc0);
    acc1 = xsimd::fma(V::load_unaligned(a + c + W), V::load_unaligned(b + c + W), acc1);
  }
  for (; c + W <= n; c += W) acc0 = xsimd::fma(V::load_unaligned(a + c), V::load_unaligned(b + c), acc0);
  if (c < n) acc1 = xsimd::fma(load_partial<A>(a + c, n - c, 0.f), load_partial<A>(b + c, n - c, 0.f), acc1);
  return hsum<A>(acc0 + acc1);
}

// y[0, n) = y·scale + p·x ; y is 64-byte aligned scratch padded to whole vectors.
template <class A>
inline void scale_axpy(float* y, float scale, float p, const float* x, index_t n) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  index_t c = 0;
  for (; c + W <= n; c += W)
    xsimd::fma(V(p), V::load_unaligned(x + c), V::load_aligned(y + c) * V(scale)).store_aligned(y + c);
  if (c < n)
    xsimd::fma(V(p), load_partial<A>(x + c, n - c, 0.f), V::load_aligned(y + c) * V(scale)).store_aligned(y + c);
}

template <class A>
void attention_decode(const detail::DecodeQuery& dq) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>, TK = detail::kAttentionKeyTile;
  const index_t d = dq.head_dim;
  alignas(64) float o[detail::kMaxHeadDim + W] = {};
  alignas(64) float s[TK];

  const float qscale = dq.scale * kLog2e;
  float m = -kInf, l = 0.0f;
  for (index_t j0 = 0; j0 < dq.kv_len; j0 += TK) {
    const index_t jn = std::min<index_t>(TK, dq.kv_len - j0);
    float mt = -kInf;
    for (index_t j = 0; j < jn; ++j) {
      s[j] = dot<A>(dq.q, dq.k->at(dq.row, j0 + j, dq.head), d) * qscale;
      mt = std::max(mt, s[j]);
    }
    const float m_new = std::max(m, mt);
    const float alpha = std::exp2(m - m_new);  // 0 on the first tile (m = −inf)
    index_t j = 0;
    V sum(0.0f);
    for (; j + W <= jn; j += W) {
      const V p = exp2_nonpositive<A>(V::load_aligned(s + j) - V(m_new));
      p.store_aligned(s + j);
      sum += p;
    }
    float tail = 0.0f;
    for (; j < jn; ++j) {
      s[j] = std::exp2(s[j] - m_new);
      tail += s[j];
    }
    l = l * alpha + hsum<A>(sum) + tail;
    // Rescale O by α once, folded into the first key's update.
    float scale = alpha;
    for (index_t jj = 0; jj < jn; ++jj) {
      scale_axpy<A>(o, scale, s[jj], dq.v->at(dq.row, j0 + jj, dq.head), d);
      scale = 1.0f;
    }
    m = m_new;
  }
  const float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
  for (index_t c = 0; c < d; ++c) dq.out[c] = o[c] * inv_l;
}

}  // namespace attend::ops::ATTEND_ISA_NS
