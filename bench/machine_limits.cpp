#include "machine_limits.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "attend/ops/isa.hpp"

float fma_loop_avx512(std::int64_t iterations);
std::int32_t vnni_loop_avx512(std::int64_t iterations);
float bf16_loop_avx512(std::int64_t iterations);

namespace attend::bench {
namespace {

template <class F>
double best_seconds(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

MachineLimits measure_machine_limits() {
  MachineLimits m;
  if (ops::isa_available(ops::Isa::avx512)) {
    constexpr std::int64_t iters = 20'000'000;
    volatile float sink = 0;
    const double s = best_seconds(5, [&] { sink = sink + fma_loop_avx512(iters); });
    m.fma_gflops_per_core = 2.0 * 16 * 24 * iters / s * 1e-9;
    m.isa = "avx512";
  }
  if (ops::isa_available(ops::Isa::avx512_vnni)) {
    constexpr std::int64_t iters = 20'000'000;
    volatile std::int32_t sink = 0;
    const double s = best_seconds(5, [&] { sink = sink + vnni_loop_avx512(iters); });
    m.vnni_gops_per_core = 2.0 * 64 * 24 * iters / s * 1e-9;
  }
  if (ops::isa_available(ops::Isa::avx512_bf16)) {
    constexpr std::int64_t iters = 20'000'000;
    volatile float sink = 0;
    const double s = best_seconds(5, [&] { sink = sink + bf16_loop_avx512(iters); });
    m.bf16_gflops_per_core = 2.0 * 32 * 24 * iters / s * 1e-9;
  }
  // A 256 MiB copy: far beyond the caches, so it measures DRAM (read + write).
  const size_t n = size_t{256} << 20;
  std::vector<char> src(n, 1), dst(n, 0);
  const double s = best_seconds(3, [&] { std::memcpy(dst.data(), src.data(), n); });
  m.copy_gbytes_per_s = 2.0 * n / s * 1e-9;
  return m;
}

}  // namespace attend::bench
