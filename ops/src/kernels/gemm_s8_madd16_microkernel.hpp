// The AVX2 int8 GEMM micro-kernel: exact int8 products through vpmaddwd on operands
// widened to 16 bits.
//
// AVX2 has no 8-bit dot product that is both exact and cheap: vpmaddubsw sums its pairs
// in saturating 16 bits, so full 8-bit activations need the sign trick (vpsignb +
// vpmaddubsw + vpmaddwd(·, 1) + vpaddd: four ops per 32 products, three of them on the
// multiply ports of Intel cores and, measured, of Zen 4's too). Widening instead —
// weights s8 → s16 with one vpmovsxbw per loaded vector, activations already s16 in
// packed A — leaves two ops per 16 products, vpmaddwd (exact: two s16 × s16 products
// summed into an int32 lane) and vpaddd, and the conversions are shared by every row of
// the tile. Measured on a Zen 4 core held to AVX2 (a standalone loop, K 512): 6×8 of
// this kernel 172 GOP/s against 150 for the sign trick's 5×16 (machine_limits' exact
// step peak there: 146). The int32 sums are the same as every other s8 kernel's, so
// results stay identical across ISAs.
//
// Layouts (the panel is the common s8 one, see kernel_table.hpp):
//   b: [kc/4][8][4] s8. One 16-byte load = 4 columns × 4 k; vpmovsxbw makes it 16 s16
//      lanes, so int32 lane 2c + h of vpmaddwd's result holds column c's k pair h.
//   a: [kc/4][mr][4] s16 (S8ActivationForm::s16): one vpbroadcastq per row and k group
//      puts (a0, a1, a2, a3) against every column's 4 k.
// After the k loop, vphaddd adds each column's two pair lanes and vpermq restores the
// column order: 8 int32 sums per row, dequantized like every s8 kernel's.
//
// 6×8: 12 accumulators + 2 widened weight vectors + the broadcast + one product = all
// 16 ymm registers. The per-row step is inline assembly: with intrinsics GCC 12 keeps
// the 2-D accumulator array of 5- and 6-row tiles on the stack (93 GOP/s measured).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/gemm_s8_microkernel.hpp"

namespace attend::ops::ATTEND_ISA_NS {

#if defined(__AVX2__)

inline constexpr int kMadd16Nr = 8;

// A row's 8 column sums, in column order, as floats: its two accumulators hold each
// column's two k pairs in adjacent lanes. Lanes of hadd: [c0 c1 c4 c5 | c2 c3 c6 c7];
// quadwords 0, 2, 1, 3 put them in order.
template <class A>
ATTEND_VECTOR_MATH vfloat<A> column_sums(const __m256i (&acc)[2]) {
  return vfloat<A>(_mm256_cvtepi32_ps(_mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[0], acc[1]), 0xD8)));
}

// MR rows × a run of t.panels panels (t.panel_stride bytes apart, t.nr columns in all):
// per panel, the k loop and then the epilogue with the activation resolved once per run.
// A run, rather than a call per panel, leaves out what the driver did for each panel
// (filling a GemmTile, an indirect call, the activation's dispatch): ~4% of an int8
// embedding's samples on a Zen 3 were the driver's loop. The panel's own look-ahead runs
// into the next panel of the run. t.prefetch (the driver's next-panel hint) goes unused,
// in runs and in a call per panel alike: measured, its lines cost more than they saved
// (see the k loop).
template <class A, int MR, Activation Act, bool Runtime>
void s8_madd16_run(const detail::GemmTile& t) {
  static_assert(kLanes<A> == 8, "an AVX2 kernel: 8 int32 lanes per ymm");
  constexpr index_t kGroupBytes = kMadd16Nr * 4;  // one k group of the B panel
  const index_t groups = t.kc / 4;
  detail::GemmTile panel = t;  // panel q's columns of C, bias, residual and scales
  const bool direct = !Runtime && t.last && !t.accumulate && t.raw_rows == 0 && t.alpha == 1.0f;
  for (int q = 0; q < t.panels; ++q) {
    __m256i acc[MR][2];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    const auto* a = static_cast<const std::int16_t*>(t.a);
    const char* b = static_cast<const char*>(t.b) + q * t.panel_stride;
    // One k group: its 8 columns' 4 k widened to s16 once, against each row's broadcast.
    auto group = [&](const char* bg, const std::int16_t* ag) __attribute__((always_inline)) {
      const __m256i b_lo = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(bg)));
      const __m256i b_hi = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(bg + 16)));
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        __m256i a_row, product;
        __asm__(
            "vpbroadcastq %4, %2\n\t"
            "vpmaddwd %5, %2, %3\n\t"
            "vpaddd %3, %0, %0\n\t"
            "vpmaddwd %6, %2, %3\n\t"
            "vpaddd %3, %1, %1"
            : "+x"(acc[r][0]), "+x"(acc[r][1]), "=&x"(a_row), "=&x"(product)
            : "m"(*reinterpret_cast<const std::int64_t*>(ag + r * 4)), "x"(b_lo), "x"(b_hi));
      }
    };
    // Two groups — one 64-byte line of the panel — per iteration, and one prefetch: that
    // line's look-ahead, 32 groups on (weights of thin products stream from memory). No
    // prefetch of the next panel (t.prefetch goes unused): runs of panels are contiguous,
    // which the hardware's streamer follows. Zen 3, one thread, alternating in one process
    // against the loop of one group per iteration with a look-ahead every second group
    // (behind a branch) and a next-panel line every group (median of 15–25 rounds):
    // MiniLM FFN up + GeLU 1.14, FFN down 1.16, QKV 1.16, attention output 1.14; decoder
    // shapes with weights from memory 1.10–1.14. Keeping the next-panel line, unrolled,
    // gained only 1.06–1.08; four groups per iteration, 1.01–1.15.
    // The look-ahead's distance, measured the same way: 16–64 groups within ±2% of 32 on the
    // MiniLM shapes, but a 4-row decoder product lost 5–12% below 32.
    index_t g = 0;
    for (; g + 2 <= groups; g += 2, b += 2 * kGroupBytes, a += 2 * MR * 4) {
      __builtin_prefetch(b + kPrefetchK * kGroupBytes, 0, 3);
      group(b, a);
      group(b + kGroupBytes, a + MR * 4);
    }
    if (g < groups) group(b, a);  // an odd last group

    const index_t n0 = q * kMadd16Nr;
    panel.c = t.c + n0;
    panel.nr = static_cast<int>(std::min<index_t>(kMadd16Nr, t.nr - n0));
    panel.bias = t.bias ? t.bias + n0 : nullptr;
    panel.residual = t.residual ? t.residual + n0 : nullptr;
    panel.col_scale = t.col_scale + n0;
    const vfloat<A> col = vfloat<A>::load_unaligned(panel.col_scale);  // padded to NR
    // The common epilogue — a full panel, the last K block, nothing to accumulate, no raw
    // rows, alpha 1 — straight from the accumulators: dequantize_row's and store_row's
    // operations in their order (so the same bits as every ISA's), without the trip
    // through `sums` and store_row's per-row branches; rows three at a time, so that
    // GeLU's three chains run side by side (activate_n). Zen 3, one thread, alternating in
    // one process (15–25 rounds, median): against the `sums` path for every panel, MiniLM
    // FFN up + GeLU and QKV +4–7%, attention output and FFN down (+ residual, K 1536)
    // +1–5% (A/A within 2%); three rows at a time against one, FFN up + GeLU +6–7% at
    // M 64 and 128 (two or six at a time: none). Calling store_row per row, inlined,
    // gained nothing.
    if (direct && panel.nr == kMadd16Nr) {
      auto rows = [&]<int R0, int N>() __attribute__((always_inline)) {
        vfloat<A> x[N];
#pragma GCC unroll 4
        for (int i = 0; i < N; ++i) {
          x[i] = column_sums<A>(acc[R0 + i]) * col * vfloat<A>(t.row_scale[R0 + i]);
          if (panel.bias) x[i] += vfloat<A>::load_unaligned(panel.bias);
        }
        activate_n<A, N>(Act, x);
#pragma GCC unroll 4
        for (int i = 0; i < N; ++i) {
          if (panel.residual) x[i] += vfloat<A>::load_unaligned(panel.residual + (R0 + i) * t.ldr);
          x[i].store_unaligned(panel.c + (R0 + i) * t.ldc);
        }
      };
      static_assert(MR <= 6, "rows three at a time, twice at most");
      if constexpr (MR >= 3) rows.template operator()<0, 3>();
      if constexpr (MR == 6) rows.template operator()<3, 3>();
      if constexpr (MR % 3 != 0) rows.template operator()<MR / 3 * 3, MR % 3>();
      continue;
    }
    alignas(32) float sums[MR * kMadd16Nr];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      vfloat<A> sum[1] = {column_sums<A>(acc[r])};
      const vfloat<A> cols[1] = {col};
      dequantize_row<A, 1>(sum, cols, panel, r, sums);
    }
    store_tile_as<A, 1, Act, Runtime>(sums, MR, panel);
  }
}

// The run with its activation resolved once (as store_tile).
template <class A, int MR>
void s8_gemm_tile_madd16(const detail::GemmTile& t) {
  switch (t.last ? t.activation : Activation::none) {
    case Activation::none: return s8_madd16_run<A, MR, Activation::none, false>(t);
    case Activation::relu: return s8_madd16_run<A, MR, Activation::relu, false>(t);
    case Activation::gelu: return s8_madd16_run<A, MR, Activation::gelu, false>(t);
    case Activation::gelu_tanh: return s8_madd16_run<A, MR, Activation::gelu_tanh, false>(t);
    case Activation::silu: return s8_madd16_run<A, MR, Activation::silu, false>(t);
    case Activation::gelu_sigmoid: return s8_madd16_run<A, MR, Activation::gelu_sigmoid, false>(t);
  }
  s8_madd16_run<A, MR, Activation::none, true>(t);  // an activation added without a case above
}

// The activation quantizer for this kernel (detail::S8QuantizeAWide): q as
// s8_quantize_a computes it, written straight to the s16 form the kernel reads, rows two
// at a time. One vpackssdw of the two rows' int32 vectors leaves, in 128-bit lane l,
// k group i/4 + l of rows r, r + 1 — 16 contiguous bytes of the [groups][mr][4] int16
// tile — so 16 values take a pack and two stores, where the generic quantizer stored
// each value alone and the driver then widened the int8 tile in a pass of its own
// (together 5.5% of an AVX2 int8 embedding). A NaN converts to INT_MIN, which the pack
// saturates to −32768, which no |q| ≤ 127 is: that is how NaN rows (and inf rows,
// whose scale is 0, so inf·0) are caught, as the AVX-512 quantizer catches them.
inline void s8_quantize_a_s16_avx2(const float* a, index_t lda, int mr, index_t k, index_t kp, int levels, float alpha,
                                   std::int16_t* dst, float* row_scale, std::int32_t* row_offset) {
  const __m256 no_sign = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  auto first_lanes = [&](index_t n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane); };
  auto row_inverse = [&](const float* x, int r) {
    __m256 m[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    index_t i = 0;
    for (; i + 32 <= k; i += 32)  // four chains: vmaxps latency, not throughput, bounds one
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) m[u] = _mm256_max_ps(m[u], _mm256_and_ps(_mm256_loadu_ps(x + i + 8 * u), no_sign));
    for (; i < k; i += 8)
      m[0] = _mm256_max_ps(m[0], _mm256_and_ps(_mm256_maskload_ps(x + i, first_lanes(k - i)), no_sign));
    const __m256 m8 = _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3]));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
    const RowQuantization rq = row_quantization(_mm_cvtss_f32(m4), true, levels, alpha);
    row_scale[r] = rq.row_scale;
    return rq.inv;
  };
  const __m256i ones = _mm256_set1_epi16(1), nan_code = _mm256_set1_epi16(-32768);
  for (int r0 = 0; r0 < mr; r0 += 2) {
    const bool pair = r0 + 1 < mr;  // else row r0 alone (its partner repeats it, unstored)
    const float* x0 = a + r0 * lda;
    const float* x1 = pair ? x0 + lda : x0;
    const __m256 s0 = _mm256_set1_ps(row_inverse(x0, r0));
    const __m256 s1 = pair ? _mm256_set1_ps(row_inverse(x1, r0 + 1)) : s0;
    __m256i sums = _mm256_setzero_si256(), nan = _mm256_setzero_si256();
    for (index_t i = 0; i < kp; i += 8) {
      __m256 v0, v1;
      if (i + 8 <= k) {
        v0 = _mm256_loadu_ps(x0 + i), v1 = _mm256_loadu_ps(x1 + i);
      } else {  // the tail of k, then k's padding: zeros
        const __m256i live = first_lanes(std::max<index_t>(0, k - i));
        v0 = _mm256_maskload_ps(x0 + i, live), v1 = _mm256_maskload_ps(x1 + i, live);
      }
      const __m256i q = _mm256_packs_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(v0, s0)),   // nearest even
                                           _mm256_cvtps_epi32(_mm256_mul_ps(v1, s1)));
      nan = _mm256_or_si256(nan, _mm256_cmpeq_epi16(q, nan_code));
      sums = _mm256_add_epi32(sums, _mm256_madd_epi16(q, ones));
      std::int16_t* out = dst + ((i / 4) * mr + r0) * 4;  // group i/4 of row r0
      const bool two_groups = i + 8 <= kp;
      const __m128i low = _mm256_castsi256_si128(q), high = _mm256_extracti128_si256(q, 1);
      if (pair) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), low);
        if (two_groups) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + mr * 4), high);
      } else {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out), low);
        if (two_groups) _mm_storel_epi64(reinterpret_cast<__m128i*>(out + mr * 4), high);
      }
    }
    // 32-bit lanes of sums: 0, 1, 4, 5 are row r0's pair sums, 2, 3, 6, 7 row r0 + 1's;
    // bytes of the NaN mask likewise (16-bit lanes 0–3 and 8–11 are row r0's).
    alignas(32) std::int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sums);
    const auto nan_bytes = static_cast<std::uint32_t>(_mm256_movemask_epi8(nan));
    for (int j = 0; j < (pair ? 2 : 1); ++j) {
      const int r = r0 + j;
      if (nan_bytes & (0x00ff00ffu << (8 * j))) {  // a NaN or inf: the row becomes zeros
        row_offset[r] = 0;
        row_scale[r] = std::numeric_limits<float>::quiet_NaN();
        for (index_t g = 0; g < kp / 4; ++g) std::memset(dst + (g * mr + r) * 4, 0, 4 * sizeof(std::int16_t));
        continue;
      }
      row_offset[r] = 128 * (lanes[2 * j] + lanes[2 * j + 1] + lanes[2 * j + 4] + lanes[2 * j + 5]);
    }
  }
}

template <class A, int MR>
detail::GemmKernels s8_gemm_kernels_madd16(const char* name) {
  detail::GemmKernels k = make_gemm_kernels<MR>(kMadd16Nr, name, []<int R>() { return &s8_gemm_tile_madd16<A, R>; });
  k.s8_store_sums = &store_tile<A, 1>;
  k.s8_weight_offset = 0;  // s8 weights
  k.s8_a_form = detail::S8ActivationForm::s16;
  // The block order at every M. On a Zen 3 (512 KiB L2), alternating both orders in one
  // process over a 1792-row batch of 128- and 256-row GEMMs (the encoder's chunks), the
  // block order's median per-round ratio was 1.03–1.12 for the MiniLM shapes (FFN up
  // + GeLU 1.08, QKV 1.03–1.05) and 1.01–1.10 for decoder-like M 4–64 with the weights
  // streamed from memory (64 copies of a 1 MiB B): here A's s16 tiles (6 rows × K × 2
  // bytes) are the larger stream, better kept in L1 than re-read per panel. End to end,
  // the standard embedding workload at 2 threads: ×1.066 (median of 12 alternating
  // rounds). Measured again without the next-panel prefetch (8 rounds): block / few-row
  // 1.03–1.11 for the MiniLM shapes, 0.94 (inside its A/A floor), 1.06–1.17 for the
  // decoder's.
  k.s8_few_row_order = false;
  // A run of panels per call (so the block order: a run per row tile and block of B).
  // Zen 3, bench/s8_loop_orders (24 rounds, runs over a call per panel, median of the
  // per-round ratios; A/A 0.99–1.09): MiniLM FFN up + GeLU 1.045, FFN down 1.026, QKV
  // 1.063, attention output 1.051, decoder shapes 1.02–1.05. End to end, the standard
  // embedding workload ×1.024 (10 alternating rounds), translation greedy ×1.056 (6).
  k.s8_panel_runs = true;
  return k;
}

#endif

}  // namespace attend::ops::ATTEND_ISA_NS
