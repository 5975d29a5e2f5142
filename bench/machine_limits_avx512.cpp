// Peak fp32 FMA throughput with AVX-512: 24 independent accumulator chains (more than
// FMA latency × ports), so the loop is bound by the FMA units alone. Compiled with
// AVX-512 flags; called only when the CPU has AVX-512.
#include <immintrin.h>

#include <cstdint>

float fma_loop_avx512(std::int64_t iterations) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (std::int64_t it = 0; it < iterations; ++it)
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}
