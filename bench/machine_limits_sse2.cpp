// The portable path's fp32 step (SSE2, no FMA): mulps + addps, as the sse2 GEMM
// micro-kernel computes acc += a·b (ops' multiply_add). Compiled for the x86-64
// baseline, so it runs on every CPU.
#include <emmintrin.h>

#include "machine_limits_chains.hpp"
#include "machine_limits_loops.hpp"

namespace attend::bench::loops {
namespace {

// One step in assembly: the product does not depend on the accumulator, so with
// intrinsics GCC would hoist it out of the loop; only the addps is on the chain, as in
// the kernel.
inline __m128 mul_add(__m128 acc, __m128 a, __m128 b) {
  __m128 t;
  __asm__("movaps %[b], %[t]\n\tmulps %[a], %[t]\n\taddps %[t], %[acc]"
          : [acc] "+x"(acc), [t] "=&x"(t)
          : [a] "x"(a), [b] "x"(b));
  return acc;
}

}  // namespace

double mul_add_sse2(std::int64_t iterations) {
  const __m128 a = _mm_set1_ps(0.999999f), b = _mm_set1_ps(1e-7f);
  const __m128 s = run_chains<kChainsMulAdd128, __m128>(
      iterations, [](int i) { return _mm_set1_ps(0.001f * static_cast<float>(i)); },
      [&](__m128 acc) { return mul_add(acc, a, b); }, [](__m128 x, __m128 y) { return _mm_add_ps(x, y); });
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, s);
  return static_cast<double>(lanes[0]) + lanes[1] + lanes[2] + lanes[3];
}

}  // namespace attend::bench::loops
