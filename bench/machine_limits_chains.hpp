// The shape every machine_limits loop shares, for the per-ISA files (each instantiates it
// with its own vectors and flags): N accumulators start from init(i), then `iterations`
// rounds of step() on each — N independent chains — and the result is their sum by
// add(), so that nothing is optimised away.
#pragma once

#include <cstdint>

namespace attend::bench::loops {

template <int N, class V, class Init, class Step, class Add>
inline __attribute__((always_inline)) V run_chains(std::int64_t iterations, Init init, Step step, Add add) {
  V acc[N];
#pragma GCC unroll 24
  for (int i = 0; i < N; ++i) acc[i] = init(i);
  for (std::int64_t it = 0; it < iterations; ++it)
#pragma GCC unroll 24
    for (int i = 0; i < N; ++i) acc[i] = step(acc[i]);
  V s = acc[0];
#pragma GCC unroll 24
  for (int i = 1; i < N; ++i) s = add(s, acc[i]);
  return s;
}

}  // namespace attend::bench::loops
