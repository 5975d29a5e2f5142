#include "machine_limits.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "machine_limits_loops.hpp"

namespace attend::bench {
namespace {

using ops::Isa;

struct Probe {
  const char* type;
  const char* kind;
  const char* label;
  Isa isa;
  const char* step;
  double ops_per_iteration;  // chains × products per instruction × 2
  double (*loop)(std::int64_t iterations);
};

// Widest first within each type: that order is the order of the printed lines, and
// older parsers take the first line of a type as its peak.
const Probe kProbes[] = {
    {"fp32", "fma", "fp32 FMA", Isa::avx512, "vfmadd231ps zmm", 2.0 * 16 * loops::kChains512, loops::fma_avx512},
    {"fp32", "fma", "fp32 FMA", Isa::avx2, "vfmadd231ps ymm", 2.0 * 8 * loops::kChainsFma256, loops::fma_avx2},
    {"fp32", "mul_add", "fp32 mul+add", Isa::sse2, "mulps+addps xmm", 2.0 * 4 * loops::kChainsMulAdd128,
     loops::mul_add_sse2},
    {"int8", "amx", "int8 AMX", Isa::avx512_amx, "tdpbsud tmm", 2.0 * 16 * 16 * 64 * 4, loops::amx_int8},
    {"int8", "vnni", "int8 VNNI", Isa::avx512_vnni, "vpdpbusd zmm", 2.0 * 64 * loops::kChains512, loops::vnni_avx512},
    {"int8", "exact", "int8 exact", Isa::avx512, "vpsubb{k}+vpmaddubsw+vpmaddwd+vpaddd zmm",
     2.0 * 64 * loops::kChains512, loops::s8_exact_avx512},
    {"int8", "exact", "int8 exact", Isa::avx2, "vpmaddwd+vpaddd ymm on s16",
     2.0 * 16 * loops::kChainsInt256, loops::s8_exact_avx2},
    {"int8", "saturating", "int8 saturating", Isa::avx512, "vpmaddubsw+vpmaddwd+vpaddd zmm",
     2.0 * 64 * loops::kChains512, loops::s8_saturating_avx512},
    {"int8", "saturating", "int8 saturating", Isa::avx2, "vpmaddubsw+vpmaddwd+vpaddd ymm",
     2.0 * 32 * loops::kChainsInt256, loops::s8_saturating_avx2},
    {"bf16", "dot", "bf16", Isa::avx512_bf16, "vdpbf16ps zmm", 2.0 * 32 * loops::kChains512, loops::bf16_avx512},
};

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

// Operations per second of one loop: iterations sized for `seconds` a run (from a short
// trial, which also warms the core up), best of `reps` runs.
double measure_rate(const Probe& p, double seconds, int reps) {
  volatile double sink = 0;
  auto run = [&](std::int64_t n) { return best_seconds(1, [&] { sink = sink + p.loop(n); }); };
  std::int64_t n = 1 << 10;
  double s = run(n);
  while (s < seconds / 10) s = run(n *= 4);
  n = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(n) * seconds / s));
  s = best_seconds(reps, [&] { sink = sink + p.loop(n); });
  return p.ops_per_iteration * static_cast<double>(n) / s;
}

}  // namespace

const StepRate* MachineLimits::find(const std::string& key) const {
  for (const StepRate& r : rates)
    if (r.key == key) return &r;
  return nullptr;
}

MachineLimits measure_machine_limits(bool quick) {
  MachineLimits m;
  for (const Probe& p : kProbes) {
    if (!ops::isa_available(p.isa)) continue;
    StepRate r;
    r.key = std::string(p.type) + "_" + p.kind + "_" + ops::isa_name(p.isa);
    r.type = p.type;
    r.label = p.label;
    r.isa = p.isa;
    r.step = p.step;
    r.gops_per_core = (quick ? measure_rate(p, 2e-3, 2) : measure_rate(p, 0.05, 5)) * 1e-9;
    m.rates.push_back(r);
  }
  // A 256 MiB copy: far beyond the caches, so it measures DRAM (read + write).
  const size_t n = (quick ? size_t{16} : size_t{256}) << 20;
  std::vector<char> src(n, 1), dst(n, 0);
  const double s = best_seconds(quick ? 1 : 3, [&] { std::memcpy(dst.data(), src.data(), n); });
  m.copy_gbytes_per_s = 2.0 * n / s * 1e-9;
  return m;
}

KernelPeaks kernel_peaks(const MachineLimits& limits, Isa isa) {
  const Isa f32 = ops::f32_kernel_isa(isa);
  KernelPeaks k;
  k.float32 = limits.find(f32 == Isa::sse2 ? "fp32_mul_add_sse2" : std::string("fp32_fma_") + ops::isa_name(f32));
  if (isa >= Isa::avx512_amx)
    k.int8 = limits.find("int8_amx_avx512_amx");
  else if (isa >= Isa::avx512_vnni)
    k.int8 = limits.find("int8_vnni_avx512_vnni");
  else if (isa >= Isa::avx2)
    k.int8 = limits.find(std::string("int8_exact_") + ops::isa_name(isa));
  k.bfloat16 = isa >= Isa::avx512_bf16 ? limits.find("bf16_dot_avx512_bf16") : k.float32;
  return k;
}

}  // namespace attend::bench
