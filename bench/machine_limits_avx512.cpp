// AVX-512 (F, BW) steps on zmm: the fp32 FMA, attend's exact int8 step and the
// saturating int8 step. Compiled with AVX-512 flags; called only when the CPU has
// AVX-512 (ops::Isa::avx512 includes BW).
#include <immintrin.h>

#include "machine_limits_chains.hpp"
#include "machine_limits_loops.hpp"

namespace attend::bench::loops {
namespace {

// The int8 steps in assembly, as in machine_limits_avx2.cpp (the products would be
// hoisted out of the loop otherwise).

// attend's exact step (S8DotSign512): AVX-512 has no vpsignb, so the weights are
// negated under the mask of negative activations; the kernel loads each weight vector
// from its panel into the register it negates in place, so this step does too (an L1
// load). The mask and |a| are per row in the kernel, operands here.
inline __m512i s8_exact(__m512i acc, const __m512i* b, __mmask64 negative, __m512i abs_a, __m512i zero, __m512i ones) {
  __m512i t;
  __asm__("vmovdqa64 %[b], %[t]\n\t"
          "vpsubb %[t], %[zero], %[t]%{%[negative]%}\n\t"
          "vpmaddubsw %[t], %[abs_a], %[t]\n\t"
          "vpmaddwd %[ones], %[t], %[t]\n\t"
          "vpaddd %[t], %[acc], %[acc]"
          : [acc] "+v"(acc), [t] "=&v"(t)
          : [b] "m"(*b), [negative] "Yk"(negative), [abs_a] "v"(abs_a), [zero] "v"(zero), [ones] "v"(ones));
  return acc;
}

inline __m512i s8_saturating(__m512i acc, __m512i a_u8, __m512i b, __m512i ones) {
  __m512i t;
  __asm__("vpmaddubsw %[b], %[a], %[t]\n\t"
          "vpmaddwd %[ones], %[t], %[t]\n\t"
          "vpaddd %[t], %[acc], %[acc]"
          : [acc] "+v"(acc), [t] "=&v"(t)
          : [a] "v"(a_u8), [b] "v"(b), [ones] "v"(ones));
  return acc;
}

// Weights 1, −1, 127, −127 in every 4 bytes, in memory as the kernel's weight panel.
alignas(64) const std::int32_t kWeightBytes[16] = {0x01ff7f81, 0x01ff7f81, 0x01ff7f81, 0x01ff7f81, 0x01ff7f81, 0x01ff7f81,
                                                   0x01ff7f81, 0x01ff7f81, 0x01ff7f81, 0x01ff7f81, 0x01ff7f81, 0x01ff7f81,
                                                   0x01ff7f81, 0x01ff7f81, 0x01ff7f81, 0x01ff7f81};
const __m512i& kWeights = *reinterpret_cast<const __m512i*>(kWeightBytes);

__m512i add_i32(__m512i x, __m512i y) { return _mm512_add_epi32(x, y); }
__m512i start_i32(int i) { return _mm512_set1_epi32(i); }

}  // namespace

double fma_avx512(std::int64_t iterations) {
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  return _mm512_reduce_add_ps(run_chains<kChains512, __m512>(
      iterations, [](int i) { return _mm512_set1_ps(0.001f * static_cast<float>(i)); },
      [&](__m512 acc) { return _mm512_fmadd_ps(a, b, acc); }, [](__m512 x, __m512 y) { return _mm512_add_ps(x, y); }));
}

double s8_exact_avx512(std::int64_t iterations) {
  const __m512i a = _mm512_set1_epi32(0x7f81fd03);  // activations 3, −3, −127, 127
  const __mmask64 negative = _mm512_movepi8_mask(a);
  const __m512i abs_a = _mm512_abs_epi8(a), zero = _mm512_setzero_si512(), ones = _mm512_set1_epi16(1);
  return _mm512_reduce_add_epi32(run_chains<kChains512, __m512i>(
      iterations, start_i32, [&](__m512i acc) { return s8_exact(acc, &kWeights, negative, abs_a, zero, ones); },
      add_i32));
}

double s8_saturating_avx512(std::int64_t iterations) {
  const __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x01ff7f81), ones = _mm512_set1_epi16(1);
  return _mm512_reduce_add_epi32(run_chains<kChains512, __m512i>(
      iterations, start_i32, [&](__m512i acc) { return s8_saturating(acc, a, b, ones); }, add_i32));
}

}  // namespace attend::bench::loops
