#include <cstdio>

#include "machine_limits.hpp"

int main() {
  const auto m = attend::bench::measure_machine_limits();
  std::printf("fp32 FMA peak (%s, 1 core): %.1f GFLOP/s\nmemory copy (1 thread, read+write): %.1f GB/s\n", m.isa,
              m.fma_gflops_per_core, m.copy_gbytes_per_s);
}
