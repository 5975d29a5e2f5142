// The int8 GEMM micro-kernel on AMX tiles: up to 32 rows × one 32-column panel, K in
// steps of 64.
//
// tdpbsud C += A·B takes A as int8 rows (16 rows × 64 k) and B as unsigned bytes in
// groups of 4 k per column (16 groups × 16 columns × 4) — the VNNI panel layout
// [K/4][NR][4] of u8 = q + 128, read as two 16-column halves of each 128-byte group row.
// So the weights are packed exactly as for vpdpbusd (the two tables share their packed
// panels, and a product can go to either), only the activations come as plain rows
// (S8ActivationForm::rows) instead of 4-k groups. Tiles: C[i][j] = tmm(2i + j) for row
// half i and column half j, A[i] = tmm(4 + i), B[j] = tmm(6 + j); a tile of ≤ 16 rows
// leaves the second row half unconfigured.
//
// The sums are exact int32 (Σ a·(q + 128)); 128·Σ a (row_offset) is taken off after the
// K loop, and from there the sums go through the same dequantization and epilogue as
// the vector kernels (gemm_s8_microkernel.hpp): the same bits as every other ISA.
//
// The tile operations come from a policy: AmxTiles (the instructions) or
// AmxTilesEmulated (plain C++, the same semantics: tests run the kernel's loops, edges
// and layouts with it on CPUs without AMX).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/gemm_s8_microkernel.hpp"

namespace attend::ops::ATTEND_ISA_NS {

inline constexpr int kAmxPanelWidth = 32;  // columns per panel: two 16-column tiles
inline constexpr int kAmxRows = 32;        // rows per micro-tile: two 16-row tiles
inline constexpr int kAmxKStep = 64;       // k per tile step (a tile row: 64 bytes)

// LDTILECFG's 64-byte operand, palette 1.
struct alignas(64) AmxTileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};  // bytes per row of tmm i
  std::uint8_t rows[16] = {};
};

// The kernel's tiles for a micro-tile of mr rows.
inline AmxTileConfig amx_tile_config(int mr) {
  AmxTileConfig c;
  const int low = std::min(mr, 16), high = mr - low;
  auto set = [&](int tmm, int rows) {
    c.rows[tmm] = static_cast<std::uint8_t>(rows);
    c.colsb[tmm] = static_cast<std::uint16_t>(rows > 0 ? 64 : 0);
  };
  set(0, low), set(1, low), set(2, high), set(3, high);  // C
  set(4, low), set(5, high);                             // A
  set(6, 16), set(7, 16);                                // B: 16 groups of 4 k
  return c;
}

#if defined(__AMX_TILE__) && defined(__AMX_INT8__)
// The instructions. The configuration is the thread's: loaded when a micro-tile's row
// count differs from the last one this thread loaded during this product (begin_thread
// forgets it, so another library's tiles on the thread cannot leave a stale one).
struct AmxTiles {
  static inline thread_local int configured_rows = 0;
  static void begin_thread() { configured_rows = 0; }
  static void configure(int mr) {
    if (configured_rows == mr) return;
    const AmxTileConfig c = amx_tile_config(mr);
    // (Not GCC 12's _tile_loadconfig: its asm names only a pointer's 8 bytes as read, so
    // the compiler may drop the stores of the rest of the configuration.)
    __asm__ volatile("ldtilecfg %0" : : "m"(c));
    configured_rows = mr;
  }
  // (GCC's tile intrinsics are macros that paste their register number into the
  // assembly: a template parameter has to be spelled out as a literal.)
  template <int T>
  static void zero() {
    if constexpr (T == 0) _tile_zero(0);
    if constexpr (T == 1) _tile_zero(1);
    if constexpr (T == 2) _tile_zero(2);
    if constexpr (T == 3) _tile_zero(3);
  }
  template <int T>
  static void load(const void* p, index_t stride) {
    if constexpr (T == 4) _tile_loadd(4, p, stride);
    if constexpr (T == 5) _tile_loadd(5, p, stride);
    if constexpr (T == 6) _tile_loadd(6, p, stride);
    if constexpr (T == 7) _tile_loadd(7, p, stride);
  }
  template <int C, int A, int B>
  static void dot() {
    if constexpr (C == 0) _tile_dpbsud(0, 4, 6);
    if constexpr (C == 1) _tile_dpbsud(1, 4, 7);
    if constexpr (C == 2) _tile_dpbsud(2, 5, 6);
    if constexpr (C == 3) _tile_dpbsud(3, 5, 7);
    static_assert(A == 4 + C / 2 && B == 6 + C % 2, "C[i][j] = A[i]·B[j]");
  }
  template <int T>
  static void store(void* p, index_t stride) {
    if constexpr (T == 0) _tile_stored(0, p, stride);
    if constexpr (T == 1) _tile_stored(1, p, stride);
    if constexpr (T == 2) _tile_stored(2, p, stride);
    if constexpr (T == 3) _tile_stored(3, p, stride);
  }
};
#endif

// The same operations on arrays (tests only: slow, but any CPU runs them).
struct AmxTilesEmulated {
  struct State {
    AmxTileConfig config;
    std::uint8_t tmm[8][16][64];
  };
  static State& state() {
    static thread_local State s;
    return s;
  }
  static void begin_thread() {}
  static void configure(int mr) { state().config = amx_tile_config(mr); }
  template <int T>
  static void zero() { std::memset(state().tmm[T], 0, sizeof state().tmm[T]); }
  template <int T>
  static void load(const void* p, index_t stride) {
    State& s = state();
    for (int r = 0; r < s.config.rows[T]; ++r)
      std::memcpy(s.tmm[T][r], static_cast<const char*>(p) + r * stride, s.config.colsb[T]);
  }
  // C[m][n] += Σ_k A[m][k] (int8) · B[k/4][4n + k%4] (uint8), in int32.
  template <int C, int A, int B>
  static void dot() {
    State& s = state();
    for (int m = 0; m < s.config.rows[A]; ++m)
      for (int n = 0; n < s.config.colsb[B] / 4; ++n) {
        std::int32_t sum;
        std::memcpy(&sum, &s.tmm[C][m][4 * n], 4);
        for (int k = 0; k < s.config.colsb[A]; ++k)
          sum += static_cast<std::int8_t>(s.tmm[A][m][k]) * static_cast<std::int32_t>(s.tmm[B][k / 4][4 * n + k % 4]);
        std::memcpy(&s.tmm[C][m][4 * n], &sum, 4);
      }
  }
  template <int T>
  static void store(void* p, index_t stride) {
    State& s = state();
    for (int r = 0; r < s.config.rows[T]; ++r)
      std::memcpy(static_cast<char*>(p) + r * stride, s.tmm[T][r], s.config.colsb[T]);
  }
};

// One micro-tile's k loop: C (tiles 0–3) = A's mr rows (t.kc bytes apart) · the panel at
// b, K in steps of 64; after each step, `between(step)` — the vector work the caller
// overlaps with the tile unit's (tiles are not renamed: a load waits for the dot
// products that read its register, so the vector units would idle through the loop).
template <class Tiles, class Between>
inline void amx_dot_panel(const char* a, const char* b, index_t kc, bool high, const Between& between) {
  constexpr index_t kGroupRowBytes = kAmxPanelWidth * 4;  // one k group of the panel
  Tiles::template zero<0>();
  Tiles::template zero<1>();
  if (high) Tiles::template zero<2>(), Tiles::template zero<3>();
  int step = 0;
  for (index_t k = 0; k < kc; k += kAmxKStep, ++step) {
    const char* bk = b + k / 4 * kGroupRowBytes;
    Tiles::template load<4>(a + k, kc);
    Tiles::template load<6>(bk, kGroupRowBytes);
    Tiles::template load<7>(bk + 64, kGroupRowBytes);
    Tiles::template dot<0, 4, 6>();
    Tiles::template dot<1, 4, 7>();
    if (high) {
      Tiles::template load<5>(a + 16 * kc + k, kc);
      Tiles::template dot<2, 5, 6>();
      Tiles::template dot<3, 5, 7>();
    }
    between(step);
  }
}

// The int32 sums of one panel, stored from the C tiles: [row][column].
struct alignas(64) AmxSums {
  std::int32_t s[kAmxRows][kAmxPanelWidth];
};

template <class Tiles>
inline void amx_store_sums(AmxSums& out, bool high) {
  constexpr index_t kRowBytes = kAmxPanelWidth * 4;
  Tiles::template store<0>(&out.s[0][0], kRowBytes);
  Tiles::template store<1>(&out.s[0][16], kRowBytes);
  if (high) Tiles::template store<2>(&out.s[16][0], kRowBytes), Tiles::template store<3>(&out.s[16][16], kRowBytes);
}

// Row r of a panel's sums through the vector kernels' dequantization
// ((Σ − row_offset)·col_scale·row_scale, as dequantize_row) and epilogue (store_row):
// the same operations, so the same bits.
template <class A, Activation Act, bool Runtime>
ATTEND_VECTOR_MATH void amx_store_row(const AmxSums& sums, const detail::GemmTile& t, int r) {
  constexpr int W = kLanes<A>, NV = kAmxPanelWidth / W;
  using VI = xsimd::batch<std::int32_t, A>;
  const VI offset(t.row_offset[r]);
  const vfloat<A> row(t.row_scale[r]);
  vfloat<A> x[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v)
    x[v] = xsimd::to_float(VI::load_aligned(&sums.s[r][v * W]) - offset) *
           vfloat<A>::load_unaligned(t.col_scale + v * W) * row;
  store_row<A, NV, Act, Runtime>(x, t, r);
}

// Panel q's columns of a run's tile (the C, bias, residual and scales it stores with).
inline detail::GemmTile amx_panel_tile(const detail::GemmTile& t, int q) {
  detail::GemmTile p = t;
  const int n0 = q * kAmxPanelWidth;
  p.c += n0;
  p.nr = std::min(kAmxPanelWidth, t.nr - n0);
  if (p.bias) p.bias += n0;
  if (p.residual) p.residual += n0;
  p.col_scale += n0;
  return p;
}

// mr ≤ 32 rows of A (plain rows, t.kc bytes apart; t.kc a multiple of 64) × a run of
// t.panels panels (t.panel_stride bytes apart; t.nr columns in all), software-pipelined:
// panel q's dot products run on the tile unit while the vector units store panel q − 1
// a few rows after each k step.
template <class A, class Tiles, Activation Act, bool Runtime = false>
void s8_amx_run(const detail::GemmTile& t, int mr) {
  const bool high = mr > 16;
  Tiles::configure(mr);
  AmxSums sums[2];
  const auto* a = static_cast<const char*>(t.a);
  const auto* b = static_cast<const char*>(t.b);
  const int steps = static_cast<int>(t.kc / kAmxKStep);
  for (int q = 0; q < t.panels; ++q) {
    const detail::GemmTile previous = amx_panel_tile(t, q - 1 < 0 ? 0 : q - 1);
    const int pending = q > 0 ? mr : 0;  // rows of panel q − 1 to store
    int stored = 0;
    // The run's next panel (the first row tile's run reads the block from L3 or memory:
    // a model's weights do not stay in L2), a k step's share after each k step.
    const char* next = q + 1 < t.panels ? b + (q + 1) * t.panel_stride : nullptr;
    amx_dot_panel<Tiles>(a, b + q * t.panel_stride, t.kc, high, [&](int step) {
      if (next != nullptr) {
        const char* share = next + step * kAmxKStep * kAmxPanelWidth;
#pragma GCC unroll 32
        for (int l = 0; l < kAmxKStep * kAmxPanelWidth / 64; ++l) _mm_prefetch(share + l * 64, _MM_HINT_T0);
      }
      const int until = pending * (step + 1) / steps;
      for (; stored < until; ++stored) amx_store_row<A, Act, Runtime>(sums[(q - 1) & 1], previous, stored);
    });
    amx_store_sums<Tiles>(sums[q & 1], high);
  }
  const detail::GemmTile last = amx_panel_tile(t, t.panels - 1);
  for (int r = 0; r < mr; ++r) amx_store_row<A, Act, Runtime>(sums[(t.panels - 1) & 1], last, r);
}

// The run with its activation resolved once (as store_tile).
template <class A, class Tiles>
void s8_amx_tile(const detail::GemmTile& t, int mr) {
  switch (t.last ? t.activation : Activation::none) {
    case Activation::none: return s8_amx_run<A, Tiles, Activation::none>(t, mr);
    case Activation::relu: return s8_amx_run<A, Tiles, Activation::relu>(t, mr);
    case Activation::gelu: return s8_amx_run<A, Tiles, Activation::gelu>(t, mr);
    case Activation::gelu_tanh: return s8_amx_run<A, Tiles, Activation::gelu_tanh>(t, mr);
    case Activation::silu: return s8_amx_run<A, Tiles, Activation::silu>(t, mr);
    case Activation::gelu_sigmoid: return s8_amx_run<A, Tiles, Activation::gelu_sigmoid>(t, mr);
  }
  s8_amx_run<A, Tiles, Activation::none, true>(t, mr);  // an activation added without a case above
}

#if defined(__AVX512BW__) && defined(__AVX512VL__)
// Rows [0, mr) of A quantized as the other quantizers do (detail::S8QuantizeA: the same
// q, scales and offsets), written as plain rows of kp bytes: 16 values per vpmovsdb. A
// NaN converts to INT_MIN, which saturates to −128, which no |q| ≤ 127 is: such a row
// (or one holding ±inf, whose factor 0 makes NaN of it) becomes zeros with a NaN scale.
inline void s8_quantize_rows_avx512(const float* a, index_t lda, int mr, index_t k, index_t kp, int levels,
                                    float alpha, std::int8_t* dst, float* row_scale, std::int32_t* row_offset) {
  const __m128i minus_128 = _mm_set1_epi8(-128);
  for (int r = 0; r < mr; ++r) {
    const float* x = a + r * lda;
    std::int8_t* out = dst + r * kp;
    __m512 m[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    index_t i = 0;
    // vrangeps 0x0B: the larger magnitude, sign cleared (as s8_quantize_a_avx512).
    for (; i + 64 <= k; i += 64)
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) m[u] = _mm512_range_ps(m[u], _mm512_loadu_ps(x + i + 16 * u), 0x0B);
    for (; i < k; i += 16) {
      const auto mask = static_cast<__mmask16>(k - i >= 16 ? 0xffff : (1u << (k - i)) - 1u);
      m[0] = _mm512_range_ps(m[0], _mm512_maskz_loadu_ps(mask, x + i), 0x0B);
    }
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3])));
    const RowQuantization rq = row_quantization(amax, true, levels, alpha);
    row_scale[r] = rq.row_scale;
    const __m512 scale = _mm512_set1_ps(rq.inv);
    __m512i sum = _mm512_setzero_si512();
    __mmask16 nan = 0;
    for (i = 0; i < kp; i += 16) {
      const auto mask = static_cast<__mmask16>(k - i >= 16 ? 0xffff : k > i ? (1u << (k - i)) - 1u : 0u);
      const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), scale));  // nearest even
      const __m128i bytes = _mm512_cvtsepi32_epi8(q);
      nan |= _mm_cmpeq_epi8_mask(bytes, minus_128);
      sum = _mm512_add_epi32(sum, q);
      const auto stored = static_cast<__mmask16>(kp - i >= 16 ? 0xffff : (1u << (kp - i)) - 1u);
      _mm_mask_storeu_epi8(out + i, stored, bytes);
    }
    if (nan != 0) {
      row_offset[r] = 0;
      row_scale[r] = std::numeric_limits<float>::quiet_NaN();
      std::memset(out, 0, static_cast<size_t>(kp));
      continue;
    }
    row_offset[r] = 128 * _mm512_reduce_add_epi32(sum);  // |Σ q| ≤ 127·kMaxS8K
  }
}
#endif

// The table entry: every row count 1 … 32 is the same kernel.
template <class A, class Tiles>
detail::GemmKernels s8_amx_kernels(const char* name) {
  constexpr int NV = kAmxPanelWidth / kLanes<A>;
  detail::GemmKernels k = make_gemm_kernels<kAmxRows>(kAmxPanelWidth, name, []<int R>() {
    return static_cast<detail::GemmMicroKernel>([](const detail::GemmTile& t) { s8_amx_tile<A, Tiles>(t, R); });
  });
  k.s8_store_sums = &store_tile<A, NV>;
  k.s8_weight_offset = 128;  // u8 = q + 128: tdpbsud's unsigned operand, vpdpbusd's panels
  k.s8_a_form = detail::S8ActivationForm::rows;
  k.s8_panel_runs = true;
  return k;
}

}  // namespace attend::ops::ATTEND_ISA_NS
