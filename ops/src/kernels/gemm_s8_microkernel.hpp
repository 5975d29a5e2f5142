// The int8 GEMM micro-kernels and the activation quantizer.
//
// Weights are int8 per output row (CTranslate2's scheme), in panels of [K/4][NR][4]: one
// 32-bit lane holds 4 consecutive k of one column. Activations are quantized per row at
// run time to s8 in [−127, 127] — the same values on every ISA — and packed as
// [K/4][mr][4], so a row's 4 k are one 32-bit broadcast. Every kernel sums the products
// exactly in int32, so the sums, and everything computed from them, are identical
// whatever the ISA: a model's int8 outputs do not depend on the CPU.
//
// Dot products, per ISA (the weight panel's encoding follows the kernel, see
// detail::GemmKernels::s8_weight_offset):
//   vnni   vpdpbusd (u8 × s8, 4 products summed into an int32 lane, no saturation):
//          weights stored as u8 = q + 128; each accumulator starts at −128·Σ_k a_q
//          (row_offset), since Σ a_q·(q + 128) = Σ a_q·q + 128·Σ a_q.
//   sign   AVX-512BW without VNNI has only vpmaddubsw (u8 × s8 → pairs summed in *16*
//          bits, saturating): weights stored as s8 and the sign moved onto them,
//          |a_q| · (sign(a_q)·q), so each pair sum is within 2·127·127 = 32258 < 32767;
//          then vpmaddwd(·, 1) widens the pairs into the int32 lanes. Full 8-bit
//          activations (the 7-bit shortcut — activations within ±63 against u8 weights —
//          lost accuracy and made results ISA-dependent).
//   madd16 AVX2: both operands widened to s16 and vpmaddwd (gemm_s8_madd16_microkernel.hpp:
//          fewer ops on the multiply ports than the sign trick's vpsignb + vpmaddubsw +
//          vpmaddwd).
//   scalar plain int32 arithmetic (SSE2, the portable path), on the sign encoding.
// Weights are within ±127 (CTranslate2's scheme never writes −128; packing reads a −128
// as −127, so that negating it cannot overflow).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/gemm_microkernel.hpp"

namespace attend::ops::ATTEND_ISA_NS {

// ---- dot-product steps: acc (int32 lanes) += Σ of 4 products per lane --------------

#if defined(__AVX512VNNI__)
struct S8DotVnni512 {
  using Vec = __m512i;
  static constexpr int kWeightOffset = 128;  // u8 = q + 128
  static constexpr bool kAbsA = false;       // reads no |a|
  static Vec dot(Vec acc, Vec b_u8, Vec a_s8, Vec) {
    // Inline assembly: GCC 12 wraps the intrinsic's tied accumulator in register copies
    // once a tile holds more than ~12 accumulators (2× slower).
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(b_u8), "v"(a_s8));
    return acc;
  }
  // acc += b_u8 · (the 4 bytes at a, broadcast), the broadcast folded into the
  // instruction's memory operand (one fused uop instead of a load and a dot).
  static Vec dot_broadcast(Vec acc, Vec b_u8, const void* a) {
    __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(b_u8), "m"(*static_cast<const std::int32_t*>(a)));
    return acc;
  }
  static constexpr bool kBroadcastOperand = true;
};
#endif
#if defined(__AVX512BW__)
struct S8DotSign512 {
  using Vec = __m512i;
  static constexpr int kWeightOffset = 0;  // s8
  static constexpr bool kAbsA = true;      // |a|, quantized beside a (no vpabsb per row)
  static Vec dot(Vec acc, Vec b_s8, Vec a_s8, Vec a_abs) {
    // AVX-512 has no vpsignb: negate the weights under the mask of negative activations
    // (a zero activation's |a| = 0 zeroes its products either way). The mask is per row,
    // computed once for the row's NV vectors.
    const __m512i signed_b = _mm512_mask_sub_epi8(b_s8, _mm512_movepi8_mask(a_s8), _mm512_setzero_si512(), b_s8);
    const __m512i pairs = _mm512_maddubs_epi16(a_abs, signed_b);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
  }
};
#endif
// Integer-vector helpers for the two widths the vector kernels use.
// (The unnamed second argument picks the width.)
#if defined(__AVX2__)
inline __m256i s8_load(const void* p, __m256i) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }
inline __m256i s8_broadcast(std::int32_t x, __m256i) { return _mm256_set1_epi32(x); }
inline __m256i s8_add(__m256i x, __m256i y) { return _mm256_add_epi32(x, y); }
inline __m256 s8_to_float(__m256i x) { return _mm256_cvtepi32_ps(x); }
#endif
#if defined(__AVX512F__)
inline __m512i s8_load(const void* p, __m512i) { return _mm512_load_si512(p); }
inline __m512i s8_broadcast(std::int32_t x, __m512i) { return _mm512_set1_epi32(x); }
inline __m512i s8_add(__m512i x, __m512i y) { return _mm512_add_epi32(x, y); }
inline __m512 s8_to_float(__m512i x) { return _mm512_cvtepi32_ps(x); }
#endif

inline std::int32_t load_s32(const void* p) {
  std::int32_t x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

// Dequantizes row r of int32 sums (as floats) into the tile's float sums.
template <class A, int NV>
ATTEND_VECTOR_MATH void dequantize_row(vfloat<A> (&sum)[NV], const vfloat<A> (&col)[NV], const detail::GemmTile& t,
                                       int r, float* sums) {
  const vfloat<A> row(t.row_scale[r]);
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) (sum[v] * col[v] * row).store_aligned(sums + (r * NV + v) * kLanes<A>);
}

template <class A, int NV>
inline void load_col_scales(vfloat<A> (&col)[NV], const detail::GemmTile& t) {
  constexpr int W = kLanes<A>;
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) col[v] = vfloat<A>::load_unaligned(t.col_scale + v * W);  // padded to NR
}

// ---- the vector kernel: MR×NV accumulators, KU sets over k groups ------------------

template <class A, class Dot, int MR, int NV, int KU>
void s8_gemm_tile(const detail::GemmTile& t) {
  using VI = typename Dot::Vec;
  constexpr int W = kLanes<A>;
  constexpr int NR = NV * W;
  constexpr index_t kGroupBytes = NR * 4;  // one k group of the B panel
  VI acc[KU][MR][NV];
#pragma GCC unroll 64
  for (int r = 0; r < MR; ++r) {
    const VI start = s8_broadcast(Dot::kWeightOffset != 0 ? -t.row_offset[r] : 0, VI{});
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      acc[0][r][v] = start;
#pragma GCC unroll 8
      for (int u = 1; u < KU; ++u) acc[u][r][v] = s8_broadcast(0, VI{});
    }
  }
  const char* a = static_cast<const char*>(t.a);
  const char* a_abs = static_cast<const char*>(t.a_abs);
  const char* b = static_cast<const char*>(t.b);
  const index_t groups = t.kc / 4;
  auto step = [&](int u, index_t g) __attribute__((always_inline)) {
    VI bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = s8_load(b + g * kGroupBytes + v * W * 4, VI{});
    if constexpr (requires { Dot::kBroadcastOperand; }) {
#pragma GCC unroll 64
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[u][r][v] = Dot::dot_broadcast(acc[u][r][v], bv[v], a + (g * MR + r) * 4);
      return;
    }
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r) {
      const VI av = s8_broadcast(load_s32(a + (g * MR + r) * 4), VI{});
      const VI abs_av = Dot::kAbsA ? s8_broadcast(load_s32(a_abs + (g * MR + r) * 4), VI{}) : av;
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[u][r][v] = Dot::dot(acc[u][r][v], bv[v], av, abs_av);
    }
  };
  index_t g = 0;
  for (; g + KU <= groups; g += KU) {
#pragma GCC unroll 8
    for (int u = 0; u < KU; ++u) {
      // As the fp32 kernel: this panel 32 steps ahead (weights of thin products stream
      // from DRAM), and this tile's share of the next panel.
#pragma GCC unroll 8
      for (int l = 0; l < kGroupBytes / 64; ++l)
        __builtin_prefetch(b + (g + u + kPrefetchK) * kGroupBytes + l * 64, 0, 3);
      __builtin_prefetch(t.prefetch + (g + u) * t.prefetch_step, 0, 3);
      step(u, g + u);
    }
  }
  for (; g < groups; ++g) step(0, g);

  vfloat<A> col[NV];
  load_col_scales<A, NV>(col, t);
  alignas(64) float sums[MR * NR];
#pragma GCC unroll 64
  for (int r = 0; r < MR; ++r) {
    vfloat<A> sum[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      VI s = acc[0][r][v];
#pragma GCC unroll 8
      for (int u = 1; u < KU; ++u) s = s8_add(s, acc[u][r][v]);
      sum[v] = vfloat<A>(s8_to_float(s));
    }
    dequantize_row<A, NV>(sum, col, t, r, sums);
  }
  store_tile<A, NV>(sums, MR, t);
}

// ---- the scalar kernel (the portable path): same layouts, int32 arithmetic ----------

template <class A, int MR, int NV>
void s8_gemm_tile_scalar(const detail::GemmTile& t) {
  constexpr int W = kLanes<A>;
  constexpr int NR = NV * W;
  std::int32_t acc[MR][NR] = {};
  const auto* a = static_cast<const std::int8_t*>(t.a);
  const auto* b = static_cast<const std::int8_t*>(t.b);
  for (index_t g = 0; g < t.kc / 4; ++g, a += MR * 4, b += NR * 4)
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j)
        for (int i = 0; i < 4; ++i) acc[r][j] += a[r * 4 + i] * b[j * 4 + i];

  vfloat<A> col[NV];
  load_col_scales<A, NV>(col, t);
  alignas(64) float sums[MR * NR];
  for (int r = 0; r < MR; ++r) {
    alignas(64) float row[NR];
    for (int j = 0; j < NR; ++j) row[j] = static_cast<float>(acc[r][j]);
    vfloat<A> sum[NV];
    for (int v = 0; v < NV; ++v) sum[v] = vfloat<A>::load_aligned(row + v * W);
    dequantize_row<A, NV>(sum, col, t, r, sums);
  }
  store_tile<A, NV>(sums, MR, t);
}

// ---- filling a table's s8 entries ---------------------------------------------------

// Dot = void: the scalar kernel.
template <class A, class Dot, int MR, int NV>
detail::GemmKernels s8_gemm_kernels(const char* name) {
  detail::GemmKernels k = make_gemm_kernels<MR>(NV * kLanes<A>, name, []<int R>() {
    if constexpr (std::is_void_v<Dot>) {
      return &s8_gemm_tile_scalar<A, R, NV>;
    } else {
      return &s8_gemm_tile<A, Dot, R, NV, kLatencyWays<R, NV>>;
    }
  });
  k.s8_store_sums = &store_tile<A, NV>;
  if constexpr (!std::is_void_v<Dot>) {
    k.s8_weight_offset = Dot::kWeightOffset;
    k.s8_a_form = Dot::kAbsA ? detail::S8ActivationForm::s8_with_abs : detail::S8ActivationForm::s8;
  }
  return k;
}

// ---- quantizing activations (see detail::S8QuantizeA) -------------------------------

// The quantization of one row: inv = levels / max|x| (exactly as
// reference::quantize_rows: one rounded division, then per element one rounded
// product and round-to-nearest-even, so |q| ≤ levels without a clamp), and the row's
// dequantization factor. A row holding a NaN or inf quantizes to zeros with a NaN
// factor, so its outputs say so.
struct RowQuantization {
  float inv = 0.0f;
  float row_scale = 0.0f;
};
inline RowQuantization row_quantization(float amax, bool finite, int levels, float alpha) {
  if (!finite || !(amax <= std::numeric_limits<float>::max())) return {0.0f, std::numeric_limits<float>::quiet_NaN()};
  return {amax > 0.0f ? static_cast<float>(levels) / amax : 0.0f, alpha * (amax / static_cast<float>(levels))};
}

#if defined(__AVX512BW__) && defined(__AVX512VL__)
// AVX-512: rows quantized 4 at a time. Two in-lane packs (32 → 16 → 8 bits) of the 4
// rows' int32 vectors leave, in 128-bit lane l, k group l of rows 0…3 — exactly 16
// contiguous bytes of the [groups][mr][4] tile — so 64 quantized values take 3
// shuffles and 4 stores (a per-row narrowing and 16 single-group stores made
// quantization 13% of a 32×512×512 GEMM). A NaN converts to INT_MIN, which the packs
// saturate to −128, which no |q| ≤ 127 is: that is how NaN rows are caught.
inline void s8_quantize_a_avx512(const float* a, index_t lda, int mr, index_t k, index_t kp, int levels, float alpha,
                                 std::int8_t* dst, float* row_scale, std::int32_t* row_offset) {
  float inv[16];
  // Each row's largest magnitude, 4 rows at a time just before they are quantized: the
  // 4 rows (≤ 24 KiB at K = 1536) are then still in L1 for the second pass, where a
  // whole tile's rows (86 KiB) came back from L2.
  auto row_maxima = [&](int r0, int rows) {
    for (int r = r0; r < r0 + rows; ++r) {
      const float* x = a + r * lda;
      __m512 m[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
      index_t i = 0;
      // vrangeps 0x0B: the larger magnitude, sign cleared — |x| and the max in one op
      // (AVX-512DQ). Four chains: its latency, not its throughput, bounds one.
      for (; i + 64 <= k; i += 64)
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) m[u] = _mm512_range_ps(m[u], _mm512_loadu_ps(x + i + 16 * u), 0x0B);
      for (; i < k; i += 16) {
        const auto mask = static_cast<__mmask16>(k - i >= 16 ? 0xffff : (1u << (k - i)) - 1u);
        m[0] = _mm512_range_ps(m[0], _mm512_maskz_loadu_ps(mask, x + i), 0x0B);
      }
      const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3])));
      const RowQuantization rq = row_quantization(amax, true, levels, alpha);
      inv[r] = rq.inv;
      row_scale[r] = rq.row_scale;
    }
  };
  const __m512i minus_128 = _mm512_set1_epi8(-128);
  for (int r0 = 0; r0 < mr; r0 += 4) {
    const int rows = std::min(4, mr - r0);
    row_maxima(r0, rows);
    const auto row_bytes = static_cast<__mmask16>((1u << (4 * rows)) - 1u);
    __m512 scale[4];
    const float* x[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {  // rows past mr repeat the last one, their results unused
      scale[j] = _mm512_set1_ps(inv[r0 + std::min(j, rows - 1)]);
      x[j] = a + (r0 + std::min(j, rows - 1)) * lda;
    }
    // Σ q per row, from the packed bytes: each 32-bit lane of `bytes` is 4 values of one
    // row (row j in lane j of every 128 bits), so vpmaddubsw by ones sums its pairs into
    // 16 bits (|pair| ≤ 256) — 2 ops per 64 values where 4 int32 additions were; the
    // 16-bit sums are widened every kPairSteps steps, before they can overflow.
    constexpr int kPairSteps = 127;  // 127 · 256 < 2¹⁵
    const __m512i ones_u8 = _mm512_set1_epi8(1), ones_s16 = _mm512_set1_epi16(1);
    __m512i pairs = _mm512_setzero_si512(), sums = _mm512_setzero_si512();
    int pair_steps = 0;
    __mmask64 nan_bytes = 0;
    for (index_t i = 0; i < kp; i += 16) {
      const auto mask = static_cast<__mmask16>(k - i >= 16 ? 0xffff : k > i ? (1u << (k - i)) - 1u : 0u);
      __m512i q[4];
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        q[j] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x[j] + i), scale[j]));  // nearest even
      const __m512i bytes = _mm512_packs_epi16(_mm512_packs_epi32(q[0], q[1]), _mm512_packs_epi32(q[2], q[3]));
      nan_bytes |= _mm512_cmpeq_epi8_mask(bytes, minus_128);
      pairs = _mm512_add_epi16(pairs, _mm512_maddubs_epi16(ones_u8, bytes));
      if (++pair_steps == kPairSteps) {
        sums = _mm512_add_epi32(sums, _mm512_madd_epi16(pairs, ones_s16));
        pairs = _mm512_setzero_si512(), pair_steps = 0;
      }
      std::int8_t* out = dst + (i / 4 * mr + r0) * 4;  // group i/4 of row r0
      const int groups = static_cast<int>(std::min<index_t>(16, kp - i)) / 4;
      if (rows == 4 && groups == 4) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_castsi512_si128(bytes));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + mr * 4), _mm512_extracti32x4_epi32(bytes, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * mr * 4), _mm512_extracti32x4_epi32(bytes, 2));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3 * mr * 4), _mm512_extracti32x4_epi32(bytes, 3));
        continue;
      }
      alignas(64) std::int8_t lanes[64];
      _mm512_store_si512(lanes, bytes);
      for (int g = 0; g < groups; ++g)
        _mm_mask_storeu_epi8(out + g * mr * 4, row_bytes, _mm_load_si128(reinterpret_cast<const __m128i*>(lanes + 16 * g)));
    }
    sums = _mm512_add_epi32(sums, _mm512_madd_epi16(pairs, ones_s16));
    const __m128i row_sums =
        _mm_add_epi32(_mm_add_epi32(_mm512_castsi512_si128(sums), _mm512_extracti32x4_epi32(sums, 1)),
                      _mm_add_epi32(_mm512_extracti32x4_epi32(sums, 2), _mm512_extracti32x4_epi32(sums, 3)));
    alignas(16) std::int32_t row_sum[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(row_sum), row_sums);
    for (int j = 0; j < rows; ++j) {
      // Bytes 4j … 4j+3 of each 16 are row j's.
      if (nan_bytes & (0x000f000f000f000full << (4 * j))) {  // a NaN: the row becomes zeros
        row_offset[r0 + j] = 0;
        row_scale[r0 + j] = std::numeric_limits<float>::quiet_NaN();
        for (index_t g = 0; g < kp / 4; ++g) std::memset(dst + (g * mr + r0 + j) * 4, 0, 4);
        continue;
      }
      row_offset[r0 + j] = 128 * row_sum[j];  // |Σ q| ≤ 127·kMaxS8K
    }
  }
}
#endif

// Writes lanes [0, n) of q (n a multiple of 4) as n/4 groups of row r, starting at
// group g0 of a [groups][mr][4] tile.
template <class A>
inline void store_groups(const xsimd::batch<std::int32_t, A>& q, std::int8_t* dst, int r, int mr, index_t g0, int n) {
  alignas(64) std::int32_t lanes[kLanes<A>];
  q.store_aligned(lanes);
  for (int j = 0; j < n; ++j) dst[((g0 + j / 4) * mr + r) * 4 + j % 4] = static_cast<std::int8_t>(lanes[j]);
}

template <class A>
void s8_quantize_a(const float* a, index_t lda, int mr, index_t k, index_t kp, int levels, float alpha,
                   std::int8_t* dst, float* row_scale, std::int32_t* row_offset) {
  using V = vfloat<A>;
  using VI = xsimd::batch<std::int32_t, A>;
  constexpr int W = kLanes<A>;
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  if constexpr (W == 16) {
    s8_quantize_a_avx512(a, lda, mr, k, kp, levels, alpha, dst, row_scale, row_offset);
    return;
  }
#endif
  for (int r = 0; r < mr; ++r) {
    const float* x = a + r * lda;
    V m(0.0f);
    auto finite = xsimd::batch_bool<float, A>(true);
    for (index_t i = 0; i < k; i += W) {
      const V v = i + W <= k ? V::load_unaligned(x + i) : load_partial<A>(x + i, k - i, 0.0f);
      m = xsimd::max(m, xsimd::abs(v));
      finite = finite && (v - v == V(0.0f));  // false for NaN and ±inf
    }
    const bool usable = xsimd::all(finite);
    const RowQuantization rq = row_quantization(hmax<A>(m), usable, levels, alpha);
    row_scale[r] = rq.row_scale;
    VI sum(0);
    for (index_t i = 0; i < kp; i += W) {
      const int n = static_cast<int>(std::min<index_t>(W, kp - i));
      const index_t have = std::max<index_t>(0, std::min<index_t>(W, k - i));
      // (A row that is not finite is all zeros: inf·0 would be NaN.)
      const V v = !usable ? V(0.0f) : have == W ? V::load_unaligned(x + i) : load_partial<A>(x + i, have, 0.0f);
      const VI q = xsimd::to_int(xsimd::nearbyint(v * V(rq.inv)));
      sum += q;
      store_groups<A>(q, dst, r, mr, i / 4, n);
    }
    row_offset[r] = 128 * xsimd::hadd(sum);
  }
}

}  // namespace attend::ops::ATTEND_ISA_NS
