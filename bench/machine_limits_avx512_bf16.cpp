// Peak bf16 dot-product throughput with AVX512_BF16: 24 independent vdpbf16ps chains
// (each 32 bf16 products per instruction, counted as 64 FLOP). Compiled with BF16
// flags; called only when the CPU has it.
#include <immintrin.h>

#include <cstdint>

namespace {
// Inline assembly by value, as vnni_loop_avx512 (GCC 12 wraps the intrinsic's tied
// accumulator in register copies).
inline __m512 dot(__m512 acc, __m512i a, __m512i b) {
  __asm__("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}
}  // namespace

float bf16_loop_avx512(std::int64_t iterations) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512i a = _mm512_set1_epi32(0x3f803f80), b = _mm512_set1_epi32(0x33d633d6);  // 1.0, 1e-7 in bf16
  for (std::int64_t it = 0; it < iterations; ++it)
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) acc[i] = dot(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}
