// Peak int8 dot-product throughput with AVX512_VNNI: 24 independent vpdpbusd chains
// (each 64 u8×s8 products per instruction, counted as 128 operations). Compiled with
// VNNI flags; called only when the CPU has it. Inline assembly because GCC 12 wraps the
// intrinsic's tied accumulator in register copies at this many chains.
#include <immintrin.h>

#include <cstdint>

namespace {
// By value, so each chain stays in a register (asm on an array element kept the array
// in memory: half the rate).
inline __m512i dot(__m512i acc, __m512i a, __m512i b) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}
}  // namespace

std::int32_t vnni_loop_avx512(std::int64_t iterations) {
  __m512i acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x01ff01ff);
  for (std::int64_t it = 0; it < iterations; ++it)
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) acc[i] = dot(acc[i], a, b);
  __m512i s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_epi32(s, acc[i]);
  return _mm512_reduce_add_epi32(s);
}
