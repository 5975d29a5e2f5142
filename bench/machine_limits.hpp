// Measured limits of this machine: fp32 FMA, int8 (VNNI) and bf16 dot-product peaks
// (one core), and memory bandwidth. The benchmarks report each kernel as a fraction
// of these.
#pragma once

namespace attend::bench {

struct MachineLimits {
  double fma_gflops_per_core = 0;  // fp32, widest ISA available
  double vnni_gops_per_core = 0;   // vpdpbusd: 2 operations per u8×s8 product; 0 without VNNI
  double bf16_gflops_per_core = 0; // vdpbf16ps: 2 FLOP per bf16 product; 0 without BF16
  double copy_gbytes_per_s = 0;    // read + write bytes of a large memcpy, one thread
  const char* isa = "";
};

MachineLimits measure_machine_limits();

}  // namespace attend::bench
