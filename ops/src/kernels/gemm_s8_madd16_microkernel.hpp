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

#include <cstdint>

#include "kernels/gemm_s8_microkernel.hpp"

namespace attend::ops::ATTEND_ISA_NS {

#if defined(__AVX2__)

inline constexpr int kMadd16Nr = 8;

template <class A, int MR>
void s8_gemm_tile_madd16(const detail::GemmTile& t) {
  static_assert(kLanes<A> == 8, "an AVX2 kernel: 8 int32 lanes per ymm");
  constexpr index_t kGroupBytes = kMadd16Nr * 4;  // one k group of the B panel
  __m256i acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  const auto* a = static_cast<const std::int16_t*>(t.a);
  const char* b = static_cast<const char*>(t.b);
  const index_t groups = t.kc / 4;
  for (index_t g = 0; g < groups; ++g, b += kGroupBytes, a += MR * 4) {
    // A 32-byte k group: one line of the panel every second group, 32 groups ahead
    // (weights of thin products stream from memory), and the driver's next panel.
    if (g % 2 == 0) __builtin_prefetch(b + kPrefetchK * kGroupBytes, 0, 3);
    __builtin_prefetch(t.prefetch + g * t.prefetch_step, 0, 2);
    const __m256i b_lo = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(b)));
    const __m256i b_hi = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(b + 16)));
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
          : "m"(*reinterpret_cast<const std::int64_t*>(a + r * 4)), "x"(b_lo), "x"(b_hi));
    }
  }

  const vfloat<A> col = vfloat<A>::load_unaligned(t.col_scale);  // padded to NR
  alignas(32) float sums[MR * kMadd16Nr];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    // Lanes of hadd: [c0 c1 c4 c5 | c2 c3 c6 c7]; quadwords 0, 2, 1, 3 put them in order.
    const __m256i s = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][0], acc[r][1]), 0xD8);
    vfloat<A> sum[1] = {vfloat<A>(_mm256_cvtepi32_ps(s))};
    const vfloat<A> cols[1] = {col};
    dequantize_row<A, 1>(sum, cols, t, r, sums);
  }
  store_tile<A, 1>(sums, MR, t);
}

template <class A, int MR>
detail::GemmKernels s8_gemm_kernels_madd16(const char* name) {
  detail::GemmKernels k = make_gemm_kernels<MR>(kMadd16Nr, name, []<int R>() { return &s8_gemm_tile_madd16<A, R>; });
  k.s8_weight_offset = 0;  // s8 weights
  k.s8_a_form = detail::S8ActivationForm::s16;
  return k;
}

#endif

}  // namespace attend::ops::ATTEND_ISA_NS
