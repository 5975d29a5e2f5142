// Peak int8 dot-product throughput with AVX512_VNNI: 24 independent vpdpbusd chains
// (each 64 u8×s8 products per instruction, counted as 128 operations). Compiled with
// VNNI flags; called only when the CPU has it. Inline assembly because GCC 12 wraps the
// intrinsic's tied accumulator in register copies at this many chains.
#include <immintrin.h>

#include "machine_limits_chains.hpp"
#include "machine_limits_loops.hpp"

namespace attend::bench::loops {
namespace {

// By value, so each chain stays in a register (asm on an array element kept the array
// in memory: half the rate).
inline __m512i dot(__m512i acc, __m512i a, __m512i b) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}

}  // namespace

double vnni_avx512(std::int64_t iterations) {
  const __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x01ff01ff);
  return _mm512_reduce_add_epi32(run_chains<kChains512, __m512i>(
      iterations, [](int i) { return _mm512_set1_epi32(i); }, [&](__m512i acc) { return dot(acc, a, b); },
      [](__m512i x, __m512i y) { return _mm512_add_epi32(x, y); }));
}

}  // namespace attend::bench::loops
