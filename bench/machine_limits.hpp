// Measured limits of this machine: fp32 FMA peak (one core) and memory bandwidth. The
// benchmarks report each kernel as a fraction of these.
#pragma once

namespace attend::bench {

struct MachineLimits {
  double fma_gflops_per_core = 0;  // fp32, widest ISA available
  double copy_gbytes_per_s = 0;    // read + write bytes of a large memcpy, one thread
  const char* isa = "";
};

MachineLimits measure_machine_limits();

}  // namespace attend::bench
