// ops::measured_dot_rates: the kernel tables' throughput probes, timed.
#include <algorithm>
#include <chrono>

#include "attend/ops/isa.hpp"
#include "kernel_table.hpp"

namespace attend::ops {
namespace {

// Seconds of the fastest of `runs` calls of probe(iterations).
double best_seconds(float (*probe)(std::int64_t), std::int64_t iterations, int runs) {
  double best = 1e30;
  volatile float sink = 0;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    sink = sink + probe(iterations);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

DotRates measure() {
  const Isa best = available_isas().front();
  const detail::KernelTable& fma = detail::kernels_for(f32_kernel_isa(best));
  const detail::KernelTable& top = detail::kernels_for(best);
  constexpr std::int64_t kIterations = 4000;  // ~0.1 ms a run at a few GHz
  DotRates r;
  // Alternated, so a clock change mid-way hits both alike; a warm-up run first.
  double fma_s = 1e30, bf16_s = 1e30;
  for (int round = 0; round < 4; ++round) {
    fma_s = std::min(fma_s, best_seconds(fma.fma_probe, kIterations, 3));
    if (top.bf16_dot_probe) bf16_s = std::min(bf16_s, best_seconds(top.bf16_dot_probe, kIterations, 3));
  }
  r.f32_fma_gflops = 2.0 * fma.float_lanes * 24 * kIterations / fma_s * 1e-9;
  if (top.bf16_dot_probe) r.bf16_dot_gflops = 2.0 * 32 * 24 * kIterations / bf16_s * 1e-9;
  return r;
}

}  // namespace

DotRates measured_dot_rates() {
  static const DotRates rates = measure();
  return rates;
}

}  // namespace attend::ops
