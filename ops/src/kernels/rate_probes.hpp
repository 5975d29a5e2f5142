// Throughput probes: loops that keep one instruction's units busy (24 independent
// accumulator chains, more than latency × ports), so their time is the instruction's
// rate on this core. The compute-type chooser (ops::measured_dot_rates) compares them:
// whether a bf16 dot product really outruns the fp32 FMA is a property of the core, not
// of the ISA (AVX512_BF16 runs at the FMA's FLOP rate on AMD Zen 4, at half of it on
// Intel's cores).
#pragma once

#include "kernels/simd.hpp"

namespace attend::ops::ATTEND_ISA_NS {

inline constexpr int kProbeChains = 24;

// `iterations` × 24 vector FMAs (fmadd: on SSE2 the exact emulation, which is what its
// kernels pay); returns a value depending on all of them.
template <class A>
float fma_probe(std::int64_t iterations) {
  using V = vfloat<A>;
  V acc[kProbeChains];
  for (int i = 0; i < kProbeChains; ++i) acc[i] = V(0.001f * static_cast<float>(i));
  const V a(0.999999f), b(1e-7f);
  for (std::int64_t it = 0; it < iterations; ++it)
#pragma GCC unroll 24
    for (int i = 0; i < kProbeChains; ++i) acc[i] = fmadd<A>(acc[i], a, b);
  V s = acc[0];
  for (int i = 1; i < kProbeChains; ++i) s += acc[i];
  return sum_by_halves<A>(s);
}

#if defined(__AVX512BF16__)
// `iterations` × 24 vdpbf16ps (32 bf16 products, 64 FLOP each).
inline float bf16_dot_probe(std::int64_t iterations) {
  __m512 acc[kProbeChains];
  for (int i = 0; i < kProbeChains; ++i) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3380);  // 1.0, ~6e-8
  for (std::int64_t it = 0; it < iterations; ++it)
#pragma GCC unroll 24
    for (int i = 0; i < kProbeChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < kProbeChains; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}
#endif

}  // namespace attend::ops::ATTEND_ISA_NS
