#include <cstdio>

#include "machine_limits.hpp"

int main() {
  const auto m = attend::bench::measure_machine_limits();
  std::printf("fp32 FMA peak (%s, 1 core): %.1f GFLOP/s\n", m.isa, m.fma_gflops_per_core);
  if (m.vnni_gops_per_core > 0) std::printf("int8 VNNI peak (vpdpbusd, 1 core): %.1f GOP/s\n", m.vnni_gops_per_core);
  if (m.bf16_gflops_per_core > 0) std::printf("bf16 peak (vdpbf16ps, 1 core): %.1f GFLOP/s\n", m.bf16_gflops_per_core);
  std::printf("memory copy (1 thread, read+write): %.1f GB/s\n", m.copy_gbytes_per_s);
}
