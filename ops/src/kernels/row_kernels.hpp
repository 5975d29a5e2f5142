// Row kernels: normalisation, activation, softmax, scale-add. Each streams its row a
// small number of times; rows of a transformer (≤ tens of KB) stay in L1/L2 between
// passes, so they run near memory speed when the passes themselves are cheap:
// reductions keep independent accumulators (one would wait on the add/max latency at
// every vector) — for sums, the slots of SlotSums, so every ISA sums in the same order —
// and exponentials use the non-positive-argument exp2.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernel_table.hpp"
#include "kernels/simd.hpp"

namespace attend::ops::ATTEND_ISA_NS {

template <class A>
inline vfloat<A> load_n(const float* p, index_t n, float fill = 0.0f) {
  return n >= kLanes<A> ? vfloat<A>::load_unaligned(p) : load_partial<A>(p, n, fill);
}
template <class A>
inline void store_n(float* p, const vfloat<A>& v, index_t n) {
  if (n >= kLanes<A>) {
    v.store_unaligned(p);
  } else {
    store_partial<A>(p, v, n);
  }
}

// Element-wise pass: f(c, w) on [c, c + w) — whole vectors, then one partial tail.
// Four vectors per iteration: activations are long dependent chains (~30 ops), and
// independent vectors side by side let the core overlap them instead of waiting on
// each chain's latency.
template <class A, class F>
inline void for_each_vector(index_t n, const F& f) {
  constexpr int W = kLanes<A>;
  index_t c = 0;
  for (; c + 4 * W <= n; c += 4 * W) {
    f(c, index_t{W});
    f(c + W, index_t{W});
    f(c + 2 * W, index_t{W});
    f(c + 3 * W, index_t{W});
  }
  for (; c + W <= n; c += W) f(c, index_t{W});
  if (c < n) f(c, n - c);
}

// Output pass: y[c, c + w) = value(c, w) over the row. With `stream`, whole vectors go
// out as streaming stores, which need vector-aligned addresses: a partial head vector
// brings y + c to alignment first (value() already handles partial widths for tails).
template <class A, class F>
inline void for_each_output(float* y, index_t n, bool stream, const F& value) {
  constexpr int W = kLanes<A>;
  if (!stream) {
    for_each_vector<A>(n, [&](index_t c, index_t w) { store_n<A>(y + c, value(c, w), w); });
    return;
  }
  constexpr auto align = static_cast<std::uintptr_t>(W * sizeof(float));
  const index_t head = std::min<index_t>(n, static_cast<index_t>((align - reinterpret_cast<std::uintptr_t>(y) % align) % align / sizeof(float)));
  if (head > 0) store_partial<A>(y, value(0, head), head);
  index_t c = head;
  for (; c + 4 * W <= n; c += 4 * W) {
    stream_vector<A>(y + c, value(c, index_t{W}));
    stream_vector<A>(y + c + W, value(c + W, index_t{W}));
    stream_vector<A>(y + c + 2 * W, value(c + 2 * W, index_t{W}));
    stream_vector<A>(y + c + 3 * W, value(c + 3 * W, index_t{W}));
  }
  for (; c + W <= n; c += W) stream_vector<A>(y + c, value(c, index_t{W}));
  if (c < n) store_partial<A>(y + c, value(c, n - c), n - c);
}

// Sets the lanes at and past `w` to `fill` (only the partial tail of a row has any).
template <class A>
inline vfloat<A> keep_first(const vfloat<A>& v, index_t w, float fill = -0.0f) {
  using V = vfloat<A>;
  return w == kLanes<A> ? v : xsimd::select(lane_index<A>(0.f) < V(static_cast<float>(w)), v, V(fill));
}

// Σ over the row of value(c, w) in SlotSums' order (64 slots: four 16-lane chains).
// The lanes of the tail past the row's end are set to −0, so value() may leave anything
// there.
template <class A, class Value>
inline float sum_row(index_t n, const Value& value) {
  constexpr int W = kLanes<A>;
  SlotSums<A, 64> sums;
  index_t c = 0;
  for (; c + 64 <= n; c += 64)
#pragma GCC unroll 16
    for (int p = 0; p < 64 / W; ++p) sums.part[p] += value(c + p * W, index_t{W});
  for (; c + W <= n; c += W) sums.add(c, value(c, index_t{W}));
  if (c < n) sums.add(c, keep_first<A>(value(c, n - c), n - c));
  return sums.total();
}

// The row's maximum, four vectors at a time (the order of a maximum does not matter).
template <class A>
inline float row_max(const float* x, index_t n) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  V a0(-kInf), a1(-kInf), a2(-kInf), a3(-kInf);
  index_t c = 0;
  for (; c + 4 * W <= n; c += 4 * W) {
    a0 = xsimd::max(a0, V::load_unaligned(x + c));
    a1 = xsimd::max(a1, V::load_unaligned(x + c + W));
    a2 = xsimd::max(a2, V::load_unaligned(x + c + 2 * W));
    a3 = xsimd::max(a3, V::load_unaligned(x + c + 3 * W));
  }
  for (; c < n; c += W) a0 = xsimd::max(a0, load_n<A>(x + c, n - c, -kInf));
  return hmax<A>(xsimd::max(xsimd::max(a0, a1), xsimd::max(a2, a3)));
}

// Whether every element is finite: x − x is 0 for a finite x and NaN for NaN or ±∞,
// and a NaN survives any sum, so four running sums of x − x say it in two cheap
// operations per vector.
template <class A>
bool all_finite_row(const float* x, index_t n) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  V a0(0.0f), a1(0.0f), a2(0.0f), a3(0.0f);
  index_t c = 0;
  for (; c + 4 * W <= n; c += 4 * W) {
    const V x0 = V::load_unaligned(x + c), x1 = V::load_unaligned(x + c + W);
    const V x2 = V::load_unaligned(x + c + 2 * W), x3 = V::load_unaligned(x + c + 3 * W);
    a0 += x0 - x0, a1 += x1 - x1, a2 += x2 - x2, a3 += x3 - x3;
  }
  for (; c < n; c += W) {
    const V v = load_n<A>(x + c, n - c);
    a0 += v - v;
  }
  const V sum = (a0 + a1) + (a2 + a3);
  return xsimd::all(sum == V(0.0f));  // (==, not !=: an ordered compare says false for NaN)
}

// max |x| (four chains: a maximum's order does not matter) and Σ |x| in SlotSums'
// order (64 slots: four 16-lane chains, so neither waits on its own latency), in one
// pass over the row.
template <class A>
RowMagnitude row_magnitude(const float* x, index_t n) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>, P = 64 / W;
  SlotSums<A, 64> sums;
  V max[4] = {V(0.0f), V(0.0f), V(0.0f), V(0.0f)};
  auto take = [&](V& m, const V& v) { m = xsimd::select(m < v, v, m); };  // a NaN never wins
  index_t c = 0;
  for (; c + 64 <= n; c += 64)
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) {
      const V v = xsimd::abs(V::load_unaligned(x + c + p * W));
      take(max[p % 4], v);
      sums.part[p] += v;
    }
  for (; c < n; c += W) {
    const V v = keep_first<A>(xsimd::abs(load_n<A>(x + c, n - c)), n - c);  // −0 past the end
    take(max[0], v);
    sums.add(c, v);
  }
  take(max[0], max[1]), take(max[2], max[3]), take(max[0], max[2]);
  return {hmax<A>(max[0]), sums.total()};
}

// s = x + residual, written to dst (returns the row the later passes read).
template <class A>
inline const float* add_residual(const float* x, const float* residual, float* dst, index_t n) {
  if (residual == nullptr) return x;
  for_each_vector<A>(n, [&](index_t c, index_t w) {
    store_n<A>(dst + c, load_n<A>(x + c, w) + load_n<A>(residual + c, w), w);
  });
  return dst;
}

template <class A>
void layer_norm_row(const float* x, const float* residual, float* sum_out, float* y,
                    const float* gamma, const float* beta, float eps, index_t n, bool stream) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  const float* s = add_residual<A>(x, residual, sum_out ? sum_out : y, n);
  // Statistics in one pass over d = s − s[0]. Shifting by one of the row's own values
  // keeps d exact and small for rows with a large mean and a small spread, and keeps
  // E[d]² within a few σ² of E[d²], so var = E[d²] − E[d]² does not cancel away. Both
  // sums in SlotSums' order (32 slots: two 16-lane chains each).
  const V shift(s[0]);
  SlotSums<A, 32> sum_d, sum_dd;
  index_t c = 0;
  for (; c + 32 <= n; c += 32)
#pragma GCC unroll 8
    for (int p = 0; p < 32 / W; ++p) {
      const V d = V::load_unaligned(s + c + p * W) - shift;
      sum_d.part[p] += d;
      sum_dd.part[p] = fmadd<A>(d, d, sum_dd.part[p]);
    }
  for (; c < n; c += W) {
    const index_t w = std::min<index_t>(W, n - c);
    const V d = keep_first<A>(load_n<A>(s + c, w) - shift, w);
    sum_d.add(c, d);
    sum_dd.at(c) = fmadd<A>(d, d, sum_dd.at(c));
  }
  const float inv_n = 1.0f / static_cast<float>(n);
  const float mean_d = sum_d.total() * inv_n;
  const float var = std::max(sum_dd.total() * inv_n - mean_d * mean_d, 0.0f);
  const V mu(mean_d), inv(1.0f / std::sqrt(var + eps));
  for_each_output<A>(y, n, stream, [&](index_t c, index_t w) {
    V out = ((load_n<A>(s + c, w) - shift) - mu) * inv * load_n<A>(gamma + c, w);
    if (beta) out += load_n<A>(beta + c, w);
    return out;
  });
}

template <class A>
void rms_norm_row(const float* x, const float* residual, float* sum_out, float* y,
                  const float* gamma, float eps, index_t n, bool stream) {
  using V = vfloat<A>;
  const float* s = add_residual<A>(x, residual, sum_out ? sum_out : y, n);
  const float sq = sum_row<A>(n, [&](index_t c, index_t w) {
    const V v = load_n<A>(s + c, w);
    return v * v;
  });
  const V inv(1.0f / std::sqrt(sq / static_cast<float>(n) + eps));
  for_each_output<A>(y, n, stream,
                     [&](index_t c, index_t w) { return load_n<A>(s + c, w) * inv * load_n<A>(gamma + c, w); });
}

// flatten: every loop below inlines its activation; a called 30-op body passes its
// vector through memory each time.
template <class A>
__attribute__((flatten)) void activation_row(Activation a, const float* x, float* y, index_t n, bool stream) {
  // One switch per row, so each loop body is a single activation.
  auto apply = [&](auto act) {
    for_each_output<A>(y, n, stream, [&](index_t c, index_t w) { return act(load_n<A>(x + c, w)); });
  };
  switch (a) {
    case Activation::none: apply([](const vfloat<A>& v) { return v; }); break;
    case Activation::relu: apply([](const vfloat<A>& v) { return activate<A>(Activation::relu, v); }); break;
    case Activation::gelu: apply([](const vfloat<A>& v) { return gelu_erf<A>(v); }); break;
    case Activation::gelu_tanh: apply([](const vfloat<A>& v) { return activate<A>(Activation::gelu_tanh, v); }); break;
    case Activation::silu: apply([](const vfloat<A>& v) { return activate<A>(Activation::silu, v); }); break;
    case Activation::gelu_sigmoid: apply([](const vfloat<A>& v) { return activate<A>(Activation::gelu_sigmoid, v); }); break;
  }
}

template <class A>
void softmax_row(const float* x, float* y, index_t n) {
  using V = vfloat<A>;
  const V mx(row_max<A>(x, n));
  const float sum = sum_row<A>(n, [&](index_t c, index_t w) {
    const V e = exp_nonpositive<A>(load_n<A>(x + c, w, -kInf) - mx);
    store_n<A>(y + c, e, w);
    return e;
  });
  const V inv(1.0f / sum);
  for_each_vector<A>(n, [&](index_t c, index_t w) { store_n<A>(y + c, load_n<A>(y + c, w) * inv, w); });
}

template <class A>
void log_softmax_row(const float* x, float* y, index_t n) {
  using V = vfloat<A>;
  const float mx = row_max<A>(x, n);
  const float sum =
      sum_row<A>(n, [&](index_t c, index_t w) { return exp_nonpositive<A>(load_n<A>(x + c, w, -kInf) - V(mx)); });
  const V lse(mx + std::log(sum));
  for_each_vector<A>(n, [&](index_t c, index_t w) { store_n<A>(y + c, load_n<A>(x + c, w) - lse, w); });
}

// Two passes: the maximum (vector max), then the first vector holding it (one compare
// and test per vector) and the first lane in it. The row is in L1/L2 for the second.
template <class A>
index_t argmax_row(const float* x, index_t n) {
  using V = vfloat<A>;
  constexpr index_t W = kLanes<A>;
  const float mx = row_max<A>(x, n);
  const V m(mx);
  index_t c = 0;
  while (c + W <= n && !xsimd::any(V::load_unaligned(x + c) == m)) c += W;
  for (; c < n; ++c)
    if (x[c] == mx) return c;
  return 0;  // only NaN: no element equals the maximum
}

// Keeps the k best seen so far sorted (largest first; an equal value never passes one
// found earlier, so ties keep the lower index). After the first k, whole vectors that
// hold nothing above the k-th best are skipped with one compare: in a vocabulary-sized
// row almost every vector is.
template <class A>
void top_k_row(const float* x, index_t n, index_t k, std::int32_t* idx, float* val) {
  using V = vfloat<A>;
  constexpr index_t W = kLanes<A>;
  index_t have = 0;
  auto offer = [&](index_t c) {
    const float v = x[c];
    if (have == k && !(v > val[k - 1])) return;
    index_t pos = have < k ? have++ : k - 1;
    for (; pos > 0 && val[pos - 1] < v; --pos) val[pos] = val[pos - 1], idx[pos] = idx[pos - 1];
    val[pos] = v, idx[pos] = static_cast<std::int32_t>(c);
  };
  index_t c = 0;
  for (; c < n && have < k; ++c) offer(c);
  for (; c + W <= n; c += W)
    if (xsimd::any(V::load_unaligned(x + c) > V(val[k - 1])))
      for (index_t l = 0; l < W; ++l) offer(c + l);
  for (; c < n; ++c) offer(c);
}

// W int8 at p (any alignment) as floats; exact.
template <class A>
inline vfloat<A> load_s8(const std::int8_t* p) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16) return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#endif
#if defined(__AVX2__)
  if constexpr (kLanes<A> == 8) return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#endif
  if constexpr (kLanes<A> == 4) {  // SSE2 has no sign-extending byte load: put each byte on
    std::int32_t four;              // top of a 32-bit lane, then shift it down arithmetically
    std::memcpy(&four, p, sizeof four);
    __m128i b = _mm_cvtsi32_si128(four);
    b = _mm_unpacklo_epi8(b, b);
    b = _mm_unpacklo_epi16(b, b);
    return _mm_cvtepi32_ps(_mm_srai_epi32(b, 24));
  }
}
// The first n (< lanes) int8 at p as floats, the other lanes 0; never reads past p[n-1].
template <class A>
inline vfloat<A> load_s8_partial(const std::int8_t* p, index_t n) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  if constexpr (kLanes<A> == 16)
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1u), p)));
#endif
  alignas(16) std::int8_t t[16] = {};
  for (index_t i = 0; i < n; ++i) t[i] = p[i];
  return load_s8<A>(t);
}

// y[c, c + w) = load(c, w)·scale + add over the row: the embedding gather of one row,
// whatever the table stores (load widens it to floats).
template <class A, class Load>
inline void scale_add_widened(float scale, const float* add_row, float* y, index_t n, const Load& load) {
  using V = vfloat<A>;
  for_each_vector<A>(n, [&](index_t c, index_t w) {
    V v = load(c, w) * V(scale);
    if (add_row) v += load_n<A>(add_row + c, w);
    store_n<A>(y + c, v, w);
  });
}

template <class A>
void scale_add_row(const float* x, float scale, const float* add_row, float* y, index_t n) {
  scale_add_widened<A>(scale, add_row, y, n, [&](index_t c, index_t w) { return load_n<A>(x + c, w); });
}

template <class A>
void bf16_scale_add_row(const std::uint16_t* x, float scale, const float* add_row, float* y, index_t n) {
  scale_add_widened<A>(scale, add_row, y, n, [&](index_t c, index_t w) {
    return w == kLanes<A> ? load_bf16<A>(x + c) : load_bf16_partial<A>(x + c, w);
  });
}

// fl(q·factor) first, then ·scale: the product a dequantized fp32 table would hold
// (CTranslate2 dequantizes, then scales), not q·(factor·scale), which rounds elsewhere.
template <class A>
void s8_scale_add_row(const std::int8_t* q, float factor, float scale, const float* add_row, float* y, index_t n) {
  using V = vfloat<A>;
  scale_add_widened<A>(scale, add_row, y, n, [&](index_t c, index_t w) {
    return (w == kLanes<A> ? load_s8<A>(q + c) : load_s8_partial<A>(q + c, w)) * V(factor);
  });
}

// y = x rounded to bf16 (raw bits), nearest even.
template <class A>
void f32_to_bf16_row(const float* x, std::uint16_t* y, index_t n) {
  constexpr int W = kLanes<A>;
  index_t c = 0;
  for (; c + W <= n; c += W) store_bf16<A>(y + c, vfloat<A>::load_unaligned(x + c));
  if (c < n) {
    alignas(64) std::uint16_t t[W];
    store_bf16<A>(t, load_partial<A>(x + c, n - c, 0.0f));
    for (index_t i = 0; c + i < n; ++i) y[c + i] = t[i];
  }
}

}  // namespace attend::ops::ATTEND_ISA_NS
