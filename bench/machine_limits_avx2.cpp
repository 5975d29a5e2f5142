// AVX2 + FMA steps on ymm: the fp32 FMA, attend's exact int8 step and the saturating
// int8 step of 7-bit kernels. Compiled with AVX2/FMA flags; called only when the CPU
// has them. AVX2 has 16 vector registers: the chain counts (machine_limits_loops.hpp)
// leave room for the operands, so nothing spills.
#include <immintrin.h>

#include "machine_limits_chains.hpp"
#include "machine_limits_loops.hpp"

namespace attend::bench::loops {
namespace {

// The int8 steps in assembly: their products do not depend on the accumulator, so GCC
// would hoist them out of the loop; only the vpaddd is on the chain, as in the kernels.

// attend's exact step (ops/src/kernels/gemm_s8_madd16_microkernel.hpp): s8 activations
// and weights widened to s16, so vpmaddwd sums two exact products into each int32 lane.
// (The kernel widens each weight vector once for its 6 rows and broadcasts each row's
// activations once for 2 vectors; those shared ops are not in this step.)
inline __m256i s8_exact(__m256i acc, __m256i a_s16, __m256i b_s16) {
  __m256i t;
  __asm__("vpmaddwd %[b], %[a], %[t]\n\t"
          "vpaddd %[t], %[acc], %[acc]"
          : [acc] "+x"(acc), [t] "=&x"(t)
          : [a] "x"(a_s16), [b] "x"(b_s16));
  return acc;
}

// The saturating step: u8 activations straight against s8 weights (pair sums saturate
// at ±32767 unless activations stay within 7 bits).
inline __m256i s8_saturating(__m256i acc, __m256i a_u8, __m256i b, __m256i ones) {
  __m256i t;
  __asm__("vpmaddubsw %[b], %[a], %[t]\n\t"
          "vpmaddwd %[ones], %[t], %[t]\n\t"
          "vpaddd %[t], %[acc], %[acc]"
          : [acc] "+x"(acc), [t] "=&x"(t)
          : [a] "x"(a_u8), [b] "x"(b), [ones] "x"(ones));
  return acc;
}

double sum_lanes(__m256i v) {
  alignas(32) std::int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  double s = 0;
  for (std::int32_t x : lanes) s += x;
  return s;
}

double sum_lanes(__m256 v) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  double s = 0;
  for (float x : lanes) s += x;
  return s;
}

__m256i add_i32(__m256i x, __m256i y) { return _mm256_add_epi32(x, y); }
__m256i start_i32(int i) { return _mm256_set1_epi32(i); }

}  // namespace

double fma_avx2(std::int64_t iterations) {
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  return sum_lanes(run_chains<kChainsFma256, __m256>(
      iterations, [](int i) { return _mm256_set1_ps(0.001f * static_cast<float>(i)); },
      [&](__m256 acc) { return _mm256_fmadd_ps(a, b, acc); }, [](__m256 x, __m256 y) { return _mm256_add_ps(x, y); }));
}

double s8_exact_avx2(std::int64_t iterations) {
  const __m256i a = _mm256_set1_epi64x(0x007ffffdff810003);  // activations 3, −127, −3, 127 (s16)
  const __m256i b = _mm256_set1_epi64x(0xff81007f00010002);  // weights 2, 1, 127, −127
  return sum_lanes(run_chains<kChainsInt256, __m256i>(
      iterations, start_i32, [&](__m256i acc) { return s8_exact(acc, a, b); }, add_i32));
}

double s8_saturating_avx2(std::int64_t iterations) {
  const __m256i a = _mm256_set1_epi32(0x01020304), b = _mm256_set1_epi32(0x01ff7f81), ones = _mm256_set1_epi16(1);
  return sum_lanes(run_chains<kChainsInt256, __m256i>(
      iterations, start_i32, [&](__m256i acc) { return s8_saturating(acc, a, b, ones); }, add_i32));
}

}  // namespace attend::bench::loops
