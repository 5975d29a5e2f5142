// The bf16 GEMM micro-kernels: bf16 inputs, fp32 accumulation, the fp32 epilogue.
//
// A B panel holds, per pair of k, NR 32-bit lanes: the bf16 of k (even) in the low half
// and of k + 1 (odd) in the high half — the operand layout of vdpbf16ps. Two kernels
// read it:
//   native  (AVX512_BF16): vdpbf16ps multiplies a lane's two pairs and adds both to the
//           fp32 accumulator; A is packed as bf16 pairs, one 32-bit broadcast per row.
//   widening (AVX-512, AVX2, SSE2): a bf16 is the top half of a float, so `lane << 16`
//           is the even k as fp32 and `lane & 0xffff0000` the odd one; two FMAs. A is
//           packed as floats already rounded to bf16, so both paths multiply the same
//           numbers.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/gemm_microkernel.hpp"

namespace attend::ops::ATTEND_ISA_NS {

// Packs mr rows of A (k0 … k0+kc) for the bf16 kernels, rows kGemmAStride floats apart:
// as bf16 (Native) or as floats rounded to bf16. An odd kc gets one zero after it, so
// the kernels can read whole pairs.
template <class A, bool Native>
void bf16_pack_a(const float* a, index_t lda, int mr, index_t k0, index_t kc, void* dst) {
  using V = vfloat<A>;
  using VU = xsimd::batch<std::uint32_t, A>;
  constexpr int W = kLanes<A>;
  const index_t padded = kc + (kc & 1);
#if defined(__AVX512BF16__)
  // vcvtneps2bf16: 16 roundings in one instruction (packing is per tile and K block:
  // a scalar narrowing here was 15% of a bf16 GEMM). Like vdpbf16ps, it treats
  // denormals as zero; normal numbers round exactly as bf16_round_bits.
  if constexpr (Native) {
    for (int r = 0; r < mr; ++r) {
      const float* x = a + r * lda + k0;
      auto* out = reinterpret_cast<std::uint16_t*>(static_cast<char*>(dst) + r * detail::kGemmAStride * sizeof(float));
      for (index_t i = 0; i < padded; i += 16) {
        const auto have = static_cast<__mmask16>(kc - i >= 16 ? 0xffff : (1u << (kc - i)) - 1u);
        const auto write = static_cast<__mmask16>(padded - i >= 16 ? 0xffff : (1u << (padded - i)) - 1u);
        const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(have, x + i));
        _mm256_mask_storeu_epi16(out + i, write, reinterpret_cast<const __m256i&>(h));
      }
    }
    return;
  }
#endif
  for (int r = 0; r < mr; ++r) {
    const float* x = a + r * lda + k0;
    char* row = static_cast<char*>(dst) + r * detail::kGemmAStride * sizeof(float);
    for (index_t i = 0; i < padded; i += W) {
      const index_t n = std::min<index_t>(W, padded - i);      // lanes to write
      const index_t have = std::max<index_t>(0, std::min<index_t>(W, kc - i));  // lanes of A
      const VU bits = bf16_round_bits<A>(have == W ? V::load_unaligned(x + i) : load_partial<A>(x + i, have, 0.f));
      alignas(64) std::uint32_t lanes[W];
      bits.store_aligned(lanes);
      if constexpr (Native) {
        auto* out = reinterpret_cast<std::uint16_t*>(row) + i;
        for (index_t j = 0; j < n; ++j) out[j] = static_cast<std::uint16_t>(lanes[j] >> 16);
      } else {
        float* out = reinterpret_cast<float*>(row) + i;
        if (n == W) {
          xsimd::bitwise_cast<V>(bits).store_unaligned(out);
        } else {
          std::memcpy(out, lanes, n * sizeof(float));
        }
      }
    }
  }
}

#if defined(__AVX512BF16__)
// acc += Σ pairs of b·a, one vdpbf16ps. Inline assembly because GCC 12 wraps the
// intrinsic's tied accumulator in register copies once a tile holds more than ~12.
inline __m512 dot_bf16(__m512 acc, __m512i b, __m512i a) {
  __asm__("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(b), "v"(a));
  return acc;
}
#endif

// An MR × (P·NR) tile of P adjacent panels, as gemm_tile: each output vector one
// accumulator over the k pairs in order.
template <class A, bool Native, int MR, int NV, int P>
void bf16_gemm_tile(const detail::GemmTile& t) {
  using V = vfloat<A>;
  using VU = xsimd::batch<std::uint32_t, A>;
  constexpr int W = kLanes<A>;
  constexpr int NR = NV * W;
  constexpr index_t S = detail::kGemmAStride * sizeof(float);  // A row stride, bytes
  V acc[P][MR][NV];
  zero_tile<A>(acc);

  const char* a = static_cast<const char*>(t.a);
  const char* b[P];
#pragma GCC unroll 4
  for (int q = 0; q < P; ++q) b[q] = static_cast<const char*>(t.b) + q * t.panel_stride;
  const index_t pairs = (t.kc + 1) / 2;
  const char* const next_panel = t.prefetch;  // (read once: GCC reloads t's fields in the loop)
  const index_t next_step = t.prefetch_step;
  for (index_t p = 0; p < pairs; ++p) {
    // Prefetch as the fp32 kernel: each panel 32 k-steps ahead, the next panel's share.
#pragma GCC unroll 4
    for (int q = 0; q < P; ++q)
#pragma GCC unroll 8
      for (int l = 0; l < NR * 4 / 64; ++l) __builtin_prefetch(b[q] + (p + kPrefetchK) * NR * 4 + l * 64, 0, 3);
    __builtin_prefetch(next_panel + p * next_step, 0, 2);
    if constexpr (Native) {
#if defined(__AVX512BF16__)
      // One 32-bit broadcast of row r's pair p, one vdpbf16ps per output vector.
      tile_step<P, MR, NV>(
          acc,
          [&](int r) __attribute__((always_inline)) {
            std::int32_t pair;
            std::memcpy(&pair, a + r * S + p * 4, sizeof pair);
            return _mm512_set1_epi32(pair);
          },
          [&](int q, int v) __attribute__((always_inline)) { return _mm512_load_si512(b[q] + p * NR * 4 + v * 64); },
          [](__m512 c, __m512i x, __m512i y) __attribute__((always_inline)) { return dot_bf16(c, x, y); });
#endif
    } else {
      // Even k, then odd k: B is loaded twice (from L1) rather than holding both halves,
      // which would leave no register for the accumulators of a full tile.
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half)
        tile_step<P, MR, NV>(
            acc,
            // A's pair as floats: k = 2p + half of row r.
            [&](int r) __attribute__((always_inline)) { return V(reinterpret_cast<const float*>(a + r * S)[2 * p + half]); },
            [&](int q, int v) __attribute__((always_inline)) {
              const VU lanes = VU::load_aligned(reinterpret_cast<const std::uint32_t*>(b[q] + p * NR * 4) + v * W);
              return xsimd::bitwise_cast<V>(half == 0 ? lanes << 16 : lanes & VU(0xffff0000u));
            },
            [](const V& c, const V& x, const V& y) __attribute__((always_inline)) { return multiply_add<A>(y, x, c); });
    }
  }
  store_panels<A>(acc, t);
}

template <class A, bool Native, int MR, int NV>
detail::GemmKernels bf16_gemm_kernels(const char* name) {
  return make_panel_gemm_kernels<MR, NV>(name, NV * kLanes<A>,
                                         []<int R, int P>() { return &bf16_gemm_tile<A, Native, R, NV, P>; });
}

}  // namespace attend::ops::ATTEND_ISA_NS
