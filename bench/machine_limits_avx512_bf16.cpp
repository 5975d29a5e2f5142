// Peak bf16 dot-product throughput with AVX512_BF16: 24 independent vdpbf16ps chains
// (each 32 bf16 products per instruction, counted as 64 FLOP). Compiled with BF16
// flags; called only when the CPU has it.
#include <immintrin.h>

#include "machine_limits_chains.hpp"
#include "machine_limits_loops.hpp"

namespace attend::bench::loops {
namespace {

// Inline assembly by value, as vnni_avx512 (GCC 12 wraps the intrinsic's tied
// accumulator in register copies).
inline __m512 dot(__m512 acc, __m512i a, __m512i b) {
  __asm__("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}

}  // namespace

double bf16_avx512(std::int64_t iterations) {
  const __m512i a = _mm512_set1_epi32(0x3f803f80), b = _mm512_set1_epi32(0x33d633d6);  // 1.0, 1e-7 in bf16
  return _mm512_reduce_add_ps(run_chains<kChains512, __m512>(
      iterations, [](int i) { return _mm512_set1_ps(0.001f * static_cast<float>(i)); },
      [&](__m512 acc) { return dot(acc, a, b); }, [](__m512 x, __m512 y) { return _mm512_add_ps(x, y); }));
}

}  // namespace attend::bench::loops
