// SIMD helpers shared by the kernels, written once against xsimd's batch<float, Arch>.
//
// Included only by the isa_*.cpp translation units, each compiled with its own ISA
// flags and inside its own namespace (ATTEND_ISA_NS), so no symbol compiled for one
// ISA can be picked by the linker for another.
//
// Every ISA computes the same bits. Apart from the fp32 and bf16 GEMMs (whose K order
// and fused products follow the micro-kernel), a kernel's result does not depend on the
// vector width or the instruction set, so a model gives identical outputs on any CPU
// (ATTEND_ISA included). Three rules make it so:
//   - products are fused where the code says fmadd and nowhere else: the kernels are
//     compiled with -ffp-contract=off, and SSE2, which has no FMA, computes fmadd
//     exactly in double precision (fma_exact_sse2);
//   - sums across lanes follow one order whatever the width: SlotSums and
//     sum_by_halves below;
//   - no hardware estimates (rcpps, rcp14ps differ): divisions are divisions.
#pragma once

#ifndef ATTEND_ISA_NS
#error "kernels/*.hpp are included only from kernels/isa_*.cpp"
#endif

#include <immintrin.h>
#include <xsimd/xsimd.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "attend/ops/types.hpp"

// For the element-wise math below: a row kernel calls it from several loops (whole
// vectors, tails, streamed or not), and once GCC stops inlining a 30-op body it passes
// vectors through memory on every call (−20% on GeLU rows).
#define ATTEND_VECTOR_MATH inline __attribute__((always_inline))

namespace attend::ops::ATTEND_ISA_NS {

template <class A>
using vfloat = xsimd::batch<float, A>;

template <class A>
inline constexpr int kLanes = static_cast<int>(vfloat<A>::size);

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- fused multiply-add, exact on every ISA ----------------------------------------

#if !defined(__FMA__)
// a·b + c rounded once, for 4 floats without an FMA unit: the product is exact in
// double (24 + 24 bits ≤ 53); the double sum is rounded to odd (rounded to nearest,
// then, if that was inexact and its last bit is even, moved one ulp towards the exact
// value, which TwoSum gives), and rounding that to float is then the correctly rounded
// fused result (Boldo & Melquiond: round-to-odd in p + 2 bits or more, then to nearest
// in p bits, is rounding to nearest once). ~30 instructions: only SSE2 pays it.
inline __m128d round_to_odd_sum_sse2(__m128d p, __m128d c) {
  const __m128d s = _mm_add_pd(p, c);
  const __m128d bp = _mm_sub_pd(s, c), bc = _mm_sub_pd(s, bp);
  const __m128d e = _mm_add_pd(_mm_sub_pd(p, bp), _mm_sub_pd(c, bc));  // p + c − s, exactly
  const __m128i bits = _mm_castpd_si128(s);
  // Inexact, finite, and an even last bit: those lanes move one ulp towards e.
  const __m128i even = _mm_shuffle_epi32(_mm_cmpeq_epi32(_mm_and_si128(bits, _mm_set_epi32(0, 1, 0, 1)), _mm_setzero_si128()),
                                         _MM_SHUFFLE(2, 2, 0, 0));
  const __m128d finite = _mm_cmplt_pd(_mm_andnot_pd(_mm_set1_pd(-0.0), s), _mm_set1_pd(std::numeric_limits<double>::infinity()));
  const __m128i move = _mm_and_si128(even, _mm_castpd_si128(_mm_and_pd(_mm_cmpneq_pd(e, _mm_setzero_pd()), finite)));
  // Away from zero (bits + 1) when e has the sign of s, towards it (bits − 1) otherwise.
  const __m128i opposite = _mm_shuffle_epi32(_mm_srai_epi32(_mm_xor_si128(bits, _mm_castpd_si128(e)), 31), _MM_SHUFFLE(3, 3, 1, 1));
  const __m128i step = _mm_or_si128(opposite, _mm_set_epi32(0, 1, 0, 1));  // −1 or +1 as int64
  return _mm_castsi128_pd(_mm_add_epi64(bits, _mm_and_si128(move, step)));
}
inline __m128 fma_exact_sse2(__m128 a, __m128 b, __m128 c) {
  auto half = [](__m128 x, __m128 y, __m128 z) {
    return _mm_cvtpd_ps(round_to_odd_sum_sse2(_mm_mul_pd(_mm_cvtps_pd(x), _mm_cvtps_pd(y)), _mm_cvtps_pd(z)));
  };
  const __m128 lo = half(a, b, c);
  const __m128 hi = half(_mm_movehl_ps(a, a), _mm_movehl_ps(b, b), _mm_movehl_ps(c, c));
  return _mm_movelh_ps(lo, hi);
}
#endif

// a·b + c and c − a·b with one rounding, on every ISA.
// (Not xsimd::fma: xsimd 8.1 has no AVX-512 one, and its generic a·b + c is two
// roundings once contraction is off.)
template <class A>
ATTEND_VECTOR_MATH vfloat<A> fmadd(const vfloat<A>& a, const vfloat<A>& b, const vfloat<A>& c) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16) return _mm512_fmadd_ps(a, b, c);
#endif
#if defined(__FMA__)
  if constexpr (kLanes<A> == 8) return _mm256_fmadd_ps(a, b, c);
  if constexpr (kLanes<A> == 4) return _mm_fmadd_ps(a, b, c);
#else
  static_assert(kLanes<A> == 4, "without FMA only the 4-lane SSE2 path exists");
  return fma_exact_sse2(a, b, c);
#endif
}
template <class A>
ATTEND_VECTOR_MATH vfloat<A> fnmadd(const vfloat<A>& a, const vfloat<A>& b, const vfloat<A>& c) {
  return fmadd<A>(-a, b, c);
}
// a·b + c, fused where the ISA has an FMA, else a multiply and an add: only for the fp32
// and bf16 GEMMs, whose results follow their micro-kernel anyway and which SSE2 should
// not run at the exact emulation's speed.
template <class A>
ATTEND_VECTOR_MATH vfloat<A> multiply_add(const vfloat<A>& a, const vfloat<A>& b, const vfloat<A>& c) {
#if defined(__FMA__)
  return fmadd<A>(a, b, c);
#else
  return a * b + c;
#endif
}

// ---- sums in one order whatever the width --------------------------------------------

// The lanes of v summed by halves — lane l + lane l + W/2, down to one — which is how a
// sum of 16 slots continues once the wider ISAs have folded their extra lanes.
template <class A>
inline float sum_by_halves(const vfloat<A>& v) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16) {
    const __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
    const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
    return _mm_cvtss_f32(_mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1)));
  }
#endif
#if defined(__AVX__)
  if constexpr (kLanes<A> == 8) {
    const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
    return _mm_cvtss_f32(_mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1)));
  }
#endif
  if constexpr (kLanes<A> == 4) {
    const __m128 h2 = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1)));
  }
}

// Sums over a row in the canonical order: element i goes to slot i mod S (S a multiple
// of 16: enough independent chains to hide the add latency), each slot summed in
// increasing i, then the S slots folded by halves (slot l + slot l + S/2) down to one.
// A W-lane ISA keeps the slots as S/W vectors: vector p holds slots [pW, pW + W).
// Lanes past a row's end must hold −0, the additive identity (x + −0 = x for every x,
// −0 included), so that the slots a wider vector touches with padding keep their bits.
template <class A, int S>
struct SlotSums {
  static constexpr int W = kLanes<A>, P = S / W;
  static_assert(S % 16 == 0 && P >= 1, "S is a multiple of the widest vector");
  vfloat<A> part[P];

  SlotSums() {
#pragma GCC unroll 16
    for (auto& p : part) p = vfloat<A>(-0.0f);
  }
  // Part of the vector that holds row elements [c, c + W) (c a multiple of W).
  vfloat<A>& at(index_t c) { return part[(c / W) % P]; }
  void add(index_t c, const vfloat<A>& v) { at(c) += v; }
  float total() const {
    vfloat<A> p[P];
#pragma GCC unroll 16
    for (int i = 0; i < P; ++i) p[i] = part[i];
#pragma GCC unroll 16
    for (int n = P / 2; n >= 1; n /= 2)
#pragma GCC unroll 16
      for (int i = 0; i < n; ++i) p[i] += p[i + n];
    return sum_by_halves<A>(p[0]);
  }
};

template <class A>
inline float hmax(const vfloat<A>& v) {
  alignas(64) float t[kLanes<A>];
  v.store_aligned(t);
  float m = t[0];
  for (int i = 1; i < kLanes<A>; ++i) m = t[i] > m ? t[i] : m;
  return m;
}

// out[i] = Σ lanes of rows[i] by halves (sum_by_halves' order), for all lanes rows at
// once: ~3 vector ops per row instead of a full horizontal sum each. AVX-512 folds
// 512 → 256 → 128 → 64 → 32-bit halves, then one permute back to row order; AVX2 the
// same from 256 bits; SSE2 one row at a time.
template <class A>
inline vfloat<A> sum_each(const vfloat<A>* rows) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16) {
    __m512 s1[8], s2[4], s3[2];
    for (int i = 0; i < 8; ++i) {  // rows i and i+8: their 256-bit halves added
      const __m512 a = rows[i], b = rows[i + 8];
      s1[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
    }
    for (int i = 0; i < 4; ++i)  // quarters now hold rows (i, i+8, i+4, i+12)
      s2[i] = _mm512_add_ps(_mm512_shuffle_f32x4(s1[i], s1[i + 4], _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_f32x4(s1[i], s1[i + 4], _MM_SHUFFLE(3, 1, 3, 1)));
    for (int i = 0; i < 2; ++i)
      s3[i] = _mm512_add_ps(_mm512_shuffle_ps(s2[i], s2[i + 2], _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm512_shuffle_ps(s2[i], s2[i + 2], _MM_SHUFFLE(3, 2, 3, 2)));
    const __m512 s4 = _mm512_add_ps(_mm512_shuffle_ps(s3[0], s3[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm512_shuffle_ps(s3[0], s3[1], _MM_SHUFFLE(3, 1, 3, 1)));
    // s4 holds rows 0 2 1 3 | 8 10 9 11 | 4 6 5 7 | 12 14 13 15 (a self-inverse order).
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15), s4);
  }
#endif
#if defined(__AVX__)
  if constexpr (kLanes<A> == 8) {
    __m256 s1[4], s2[2];
    for (int i = 0; i < 4; ++i)  // rows i and i+4: their 128-bit halves added
      s1[i] = _mm256_add_ps(_mm256_permute2f128_ps(rows[i], rows[i + 4], 0x20), _mm256_permute2f128_ps(rows[i], rows[i + 4], 0x31));
    for (int i = 0; i < 2; ++i)  // lanes l + l+2 of rows (i, i+4) and (i+2, i+6)
      s2[i] = _mm256_add_ps(_mm256_shuffle_ps(s1[i], s1[i + 2], _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm256_shuffle_ps(s1[i], s1[i + 2], _MM_SHUFFLE(3, 2, 3, 2)));
    const __m256 s3 = _mm256_add_ps(_mm256_shuffle_ps(s2[0], s2[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm256_shuffle_ps(s2[0], s2[1], _MM_SHUFFLE(3, 1, 3, 1)));
    // s3 holds rows 0 2 1 3 | 4 6 5 7.
    return _mm256_permutevar8x32_ps(s3, _mm256_setr_epi32(0, 2, 1, 3, 4, 6, 5, 7));
  }
#endif
  alignas(64) float out[kLanes<A>];
  for (int i = 0; i < kLanes<A>; ++i) out[i] = sum_by_halves<A>(rows[i]);
  return vfloat<A>::load_aligned(out);
}

// Transposes the W×W block whose row i is r[i] (W = lanes), in registers: unpacks, then
// shuffles within 128-bit lanes, then moves of whole 128-bit lanes (64 shuffles for
// AVX-512's 16×16, 24 for AVX2's 8×8, SSE2's 4×4 by its macro). Moves values, computes
// nothing: the same bits on every ISA.
template <class A>
ATTEND_VECTOR_MATH void transpose_block(vfloat<A> (&r)[kLanes<A>]) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16) {
    __m512 t[16], u[16];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {  // lane L of t[2k]: rows 2k, 2k+1 at columns 4L, 4L+1; t[2k+1]: 4L+2, 4L+3
      t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
      t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {  // lane L of u[4k+m]: column 4L+m of rows 4k … 4k+3
      u[4 * k] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * k + 1] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {  // column 4L+m = lane L of u[m], u[4+m], u[8+m], u[12+m]
      const __m512 x0 = _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(2, 0, 2, 0));
      const __m512 x1 = _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(3, 1, 3, 1));
      const __m512 y0 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], _MM_SHUFFLE(2, 0, 2, 0));
      const __m512 y1 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], _MM_SHUFFLE(3, 1, 3, 1));
      r[m] = _mm512_shuffle_f32x4(x0, y0, _MM_SHUFFLE(2, 0, 2, 0));
      r[8 + m] = _mm512_shuffle_f32x4(x0, y0, _MM_SHUFFLE(3, 1, 3, 1));
      r[4 + m] = _mm512_shuffle_f32x4(x1, y1, _MM_SHUFFLE(2, 0, 2, 0));
      r[12 + m] = _mm512_shuffle_f32x4(x1, y1, _MM_SHUFFLE(3, 1, 3, 1));
    }
    return;
  }
#endif
#if defined(__AVX__)
  if constexpr (kLanes<A> == 8) {
    __m256 t[8], u[8];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
      t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
#pragma GCC unroll 2
    for (int k = 0; k < 2; ++k) {
      u[4 * k] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      r[m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x20);
      r[4 + m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x31);
    }
    return;
  }
#endif
  if constexpr (kLanes<A> == 4) {
    __m128 r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3];
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    r[0] = r0, r[1] = r1, r[2] = r2, r[3] = r3;
  }
}

// Partial vectors use the ISA's masked loads and stores where it has them: building a
// vector from scalar stores and reloading it stalls on store forwarding (~15 cycles),
// which made a head_dim-4 decode attention spend most of its time there.
#if defined(__AVX2__)
inline __m256i lanes_below_avx2(index_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

// First n (≤ lanes) floats of p, the other lanes set to `fill`; never reads past p[n-1].
template <class A>
inline vfloat<A> load_partial(const float* p, index_t n, float fill) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16)
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), static_cast<__mmask16>((1u << n) - 1u), p);
#endif
#if defined(__AVX2__)
  if constexpr (kLanes<A> == 8) {
    const __m256i m = lanes_below_avx2(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
#endif
  alignas(64) float t[kLanes<A>];
  for (int i = 0; i < kLanes<A>; ++i) t[i] = i < n ? p[i] : fill;
  return vfloat<A>::load_aligned(t);
}

// Stores the first n (≤ lanes) lanes of v; never writes past p[n-1].
template <class A>
inline void store_partial(float* p, const vfloat<A>& v, index_t n) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16) {
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1u), v);
    return;
  }
#endif
#if defined(__AVX2__)
  if constexpr (kLanes<A> == 8) {
    _mm256_maskstore_ps(p, lanes_below_avx2(n), v);
    return;
  }
#endif
  alignas(64) float t[kLanes<A>];
  v.store_aligned(t);
  for (index_t i = 0; i < n; ++i) p[i] = t[i];
}

// float → bf16 bits, rounded to nearest even; a NaN stays a (quiet) NaN instead of
// rounding into the infinity next to it.
template <class A>
ATTEND_VECTOR_MATH xsimd::batch<std::uint32_t, A> bf16_round_bits(const vfloat<A>& x) {
  using VU = xsimd::batch<std::uint32_t, A>;
  const VU u = xsimd::bitwise_cast<VU>(x);
  const VU rounded = (u + VU(0x7fffu) + ((u >> 16) & VU(1u))) & VU(0xffff0000u);
  const auto quiet_nan = xsimd::bitwise_cast<vfloat<A>>(VU(0x7fc00000u));
  return xsimd::bitwise_cast<VU>(xsimd::select(xsimd::isnan(x), quiet_nan, xsimd::bitwise_cast<vfloat<A>>(rounded)));
}

// W floats → bf16 bits (their rounded top halves) at p.
template <class A>
inline void store_bf16(std::uint16_t* p, const vfloat<A>& x) {
  using VU = xsimd::batch<std::uint32_t, A>;
  const VU top = bf16_round_bits<A>(x) >> 16;
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(top));
    return;
  }
#endif
#if defined(__AVX2__)
  if constexpr (kLanes<A> == 8) {  // packus works within 128-bit lanes: gather the halves after
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(top, top), 0b1000);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
    return;
  }
#endif
  alignas(64) std::uint32_t t[kLanes<A>];
  top.store_aligned(t);
  for (int i = 0; i < kLanes<A>; ++i) p[i] = static_cast<std::uint16_t>(t[i]);
}

// bf16 → float is exact: a bf16 is the top half of the float's bits. Loads W bf16 at p
// (any alignment) as a float vector.
template <class A>
inline vfloat<A> load_bf16(const std::uint16_t* p) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
#endif
#if defined(__AVX2__)
  if constexpr (kLanes<A> == 8)
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
#endif
  if constexpr (kLanes<A> == 4)
    return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
// The first n (≤ lanes) bf16 at p as floats, the other lanes 0; never reads past p[n-1].
template <class A>
inline vfloat<A> load_bf16_partial(const std::uint16_t* p, index_t n) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(static_cast<__mmask16>((1u << n) - 1u), p)), 16));
#endif
  alignas(16) std::uint16_t t[kLanes<A>] = {};
  for (index_t i = 0; i < n; ++i) t[i] = p[i];
  return load_bf16<A>(t);
}
// Cache elements as floats, whatever their storage: f32 as is, bf16 (raw bits) widened.
template <class A>
inline vfloat<A> load_widened(const float* p) { return vfloat<A>::load_unaligned(p); }
template <class A>
inline vfloat<A> load_widened(const std::uint16_t* p) { return load_bf16<A>(p); }
template <class A>
inline vfloat<A> load_widened_partial(const float* p, index_t n) { return load_partial<A>(p, n, 0.0f); }
template <class A>
inline vfloat<A> load_widened_partial(const std::uint16_t* p, index_t n) { return load_bf16_partial<A>(p, n); }

// Writes a whole vector to p (aligned to the vector's size) without reading the line
// first; see attend/ops/streaming_stores.hpp.
template <class A>
inline void stream_vector(float* p, const vfloat<A>& v) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16) {
    _mm512_stream_ps(p, v);
    return;
  }
#endif
#if defined(__AVX__)
  if constexpr (kLanes<A> == 8) {
    _mm256_stream_ps(p, v);
    return;
  }
#endif
  if constexpr (kLanes<A> == 4) _mm_stream_ps(p, v);
}

// Lane indices 0, 1, …, lanes−1, offset by `first`.
template <class A>
inline vfloat<A> lane_index(float first) {
  alignas(64) float t[kLanes<A>];
  for (int i = 0; i < kLanes<A>; ++i) t[i] = first + static_cast<float>(i);
  return vfloat<A>::load_aligned(t);
}

// 2^x for x ≤ 0, with −inf (a masked score) giving exactly 0 — the only inputs the
// online softmax has after subtracting the running max. Cheaper than a general exp2:
// n = round(x), f = x − n ∈ [−½, ½], 2^f = 1 + f·q(f) with q of degree 4 (near-minimax
// relative fit, max error 1.9e-7 ≈ 3 ulp; the constant is exactly 1 so that 2^0 = 1
// and a softmax row's maximum weighs exactly 1), 2^n through the exponent bits.
// Results below 2^-126 flush to 0 rather than going subnormal.
template <class A>
ATTEND_VECTOR_MATH vfloat<A> exp2_nonpositive(const vfloat<A>& x) {
  using V = vfloat<A>;
  using VI = xsimd::batch<std::int32_t, A>;
  const V n = xsimd::nearbyint(x);
  const V f = x - n;
  // q(f) = c1 + c2·f + c3·f² + c4·f³ + c5·f⁴ in Estrin form: 3 dependent steps, not 5.
  const V f2 = f * f;
  const V q = fmadd<A>(f2, fmadd<A>(f2, V(0.0013264723f), fmadd<A>(V(0.0096715130f), f, V(0.055507336f))),
                         fmadd<A>(V(0.24022242f), f, V(0.69314700f)));
  const V p = fmadd<A>(f, q, V(1.0f));
#if defined(__AVX512F__)
  // scalef applies 2^n in one op and the mask zeroes x < −126 (and −inf, whose f is
  // NaN): 9 vector ops instead of 14. Vector ops share the FMA ports on AVX-512, so this
  // is time the attention and softmax loops give back to their FMAs.
  if constexpr (kLanes<A> == 16)
    return _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-126.0f), _CMP_GE_OQ), p, n);
#endif
  VI e = xsimd::to_int(n) + VI(127);
  e <<= 23;
  return xsimd::select(x >= V(-126.0f), p * xsimd::bitwise_cast<V>(e), V(0.0f));
}

// e^x for x ≤ 0 (−inf → 0), through exp2_nonpositive.
template <class A>
ATTEND_VECTOR_MATH vfloat<A> exp_nonpositive(const vfloat<A>& x) {
  return exp2_nonpositive<A>(x * vfloat<A>(kLog2e));
}

// σ(y) = 1/(1 + e^−y), written with e = e^−|y| ∈ (0, 1] so the exponential never
// overflows and can use exp_nonpositive: σ = 1/(1+e) for y ≥ 0, e/(1+e) below.
template <class A>
ATTEND_VECTOR_MATH vfloat<A> sigmoid(const vfloat<A>& y) {
  using V = vfloat<A>;
  const V e = exp_nonpositive<A>(-xsimd::abs(y));
  const V inv = V(1.0f) / (V(1.0f) + e);
  return xsimd::select(y >= V(0.0f), inv, e * inv);
}

// table[i[l]] in each lane l, for an 8-entry table and indices in [0, 8) (any other
// index reads one of the 8 entries, never past them). One permute on AVX2 and AVX-512;
// SSE2, which has no variable permute, looks each lane up alone. The entries chosen are
// the same on every ISA, so what is computed from them is too.
template <class A>
ATTEND_VECTOR_MATH vfloat<A> lookup8(const float (&table)[8], const xsimd::batch<std::int32_t, A>& i) {
#if defined(__AVX512F__)
  if constexpr (kLanes<A> == 16)
    return _mm512_permutexvar_ps(i, _mm512_castps256_ps512(_mm256_loadu_ps(table)));  // (index bit 3 clear)
#endif
#if defined(__AVX2__)
  if constexpr (kLanes<A> == 8) return _mm256_permutevar8x32_ps(_mm256_loadu_ps(table), i);
#endif
  alignas(64) std::int32_t at[kLanes<A>];
  alignas(64) float out[kLanes<A>];
  i.store_aligned(at);
  for (int l = 0; l < kLanes<A>; ++l) out[l] = table[at[l] & 7];
  return vfloat<A>::load_aligned(out);
}

// erf(u/√2) for u ≥ 0, piecewise: on [c − ½, c + ½] around c = 0, 1, …, 5 a degree-7
// polynomial in s = u − c (least squares on Chebyshev nodes), and 1 from 5.5 on, where
// 1 − erf is below 4e-8. Max absolute error 6.1e-8 against erf in double over every
// float u (tests/ops: the GeLU's erf test). Row j holds the coefficients of s^j of the
// six pieces, then those of the constant 1 (twice: indices 6 and 7).
inline constexpr float kErfPieces[8][8] = {
    {0.0f, 0.682689488f, 0.954499722f, 0.997300208f, 0.99993664f, 0.999999404f, 1.0f, 1.0f},
    {0.797884524f, 0.483941466f, 0.10798192f, 0.00886369869f, 0.000267660682f, 2.97335487e-06f, 0.0f, 0.0f},
    {0.0f, -0.241969794f, -0.107982822f, -0.0132952137f, -0.000535348838f, -7.44110957e-06f, 0.0f, 0.0f},
    {-0.13297914f, -1.22902566e-06f, 0.0539914817f, 0.0118181789f, 0.000669138855f, 1.18982471e-05f, 0.0f, 0.0f},
    {0.0f, 0.0403098501f, -0.00898071658f, -0.00665442599f, -0.000579366402f, -1.34786414e-05f, 0.0f, 0.0f},
    {0.019923754f, -0.00804789737f, -0.00450668857f, 0.00221714214f, 0.000363746542f, 1.17796017e-05f, 0.0f, 0.0f},
    {0.0f, -0.00391352549f, 0.00258542178f, -0.000178772607f, -0.00016874657f, -9.00265786e-06f, 0.0f, 0.0f},
    {-0.00224875938f, 0.00144040224f, -0.000195493252f, -0.000175475288f, 5.01300383e-05f, 4.68582402e-06f, 0.0f, 0.0f},
};

// Exact GeLU, 0.5·x·(1 + erf(x/√2)) = h + |h|·erf(|x|/√2) with h = x/2 (erf is odd), one
// rounding in the final fused multiply-add. erf comes from kErfPieces: the piece is
// round(min(|x|, 6)), its 8 coefficients 8 table lookups, then 7 FMAs (Horner) — ~23
// vector ops, no division and no exp (the erfc·exp form before took ~35 ops, a division
// among them, and made the int8 FFN-up GEMM run at 50% of the VNNI peak against 70% for
// the same shape without GeLU). Absolute accuracy: |error| ≤ |h|·6.1e-8 + the final
// rounding, so a negative tail below ~1e-7·|x| is not resolved relatively (it becomes 0
// past |x| = 5.5); ±inf → +inf / NaN and NaN → NaN as the formula.
//
// N vectors at once, each step taken across all N before the next: the same operations
// on each, so the same bits as one at a time, with N independent chains side by side (a
// GEMM epilogue's rows: see gemm_s8_madd16_microkernel.hpp).
template <class A, int N>
ATTEND_VECTOR_MATH void gelu_erf_n(vfloat<A> (&x)[N]) {
  using V = vfloat<A>;
  V s[N], e[N];
  xsimd::batch<std::int32_t, A> piece[N];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    const V u = xsimd::min(xsimd::abs(x[i]), V(6.0f));
    const V c = xsimd::nearbyint(u);  // exact: the piece's centre, and its index
    s[i] = u - c;                     // exact, in [−½, ½]
    piece[i] = xsimd::to_int(c);
    e[i] = lookup8<A>(kErfPieces[7], piece[i]);
  }
#pragma GCC unroll 8
  for (int j = 6; j >= 0; --j)
#pragma GCC unroll 8
    for (int i = 0; i < N; ++i) e[i] = fmadd<A>(e[i], s[i], lookup8<A>(kErfPieces[j], piece[i]));
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    const V h = x[i] * V(0.5f);
    x[i] = fmadd<A>(xsimd::abs(h), e[i], h);
  }
}

template <class A>
ATTEND_VECTOR_MATH vfloat<A> gelu_erf(const vfloat<A>& x) {
  vfloat<A> y[1] = {x};
  gelu_erf_n<A, 1>(y);
  return y[0];
}

template <class A>
ATTEND_VECTOR_MATH vfloat<A> activate(Activation a, const vfloat<A>& x) {
  using V = vfloat<A>;
  switch (a) {
    case Activation::none:
      return x;
    case Activation::relu:
      return xsimd::max(x, V(0.0f));
    case Activation::gelu:
      return gelu_erf<A>(x);
    case Activation::gelu_tanh:  // 0.5·x·(1 + tanh(u)) = x·σ(2u), no cancellation for x < 0
      return x * sigmoid<A>(V(2.0f * 0.79788456080286536f) * fmadd<A>(V(0.044715f) * x, x * x, x));
    case Activation::silu:
      return x * sigmoid<A>(x);
    case Activation::gelu_sigmoid:
      return x * sigmoid<A>(V(1.702f) * x);
  }
  return x;
}

// activate on N vectors; GeLU's steps side by side (gelu_erf_n).
template <class A, int N>
ATTEND_VECTOR_MATH void activate_n(Activation a, vfloat<A> (&x)[N]) {
  if (a == Activation::gelu) return gelu_erf_n<A, N>(x);
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) x[i] = activate<A>(a, x[i]);
}

}  // namespace attend::ops::ATTEND_ISA_NS
