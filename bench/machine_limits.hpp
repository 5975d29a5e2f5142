// Measured limits of this machine: one core's rate of every dot-product step attend's
// GEMM kernels (and their yardsticks) use, on every ISA this CPU runs — fp32 FMA
// (zmm, ymm) and SSE2's mul+add, int8 (vpdpbusd, attend's exact sign step, the
// saturating 7-bit step), bf16 (vdpbf16ps) — and one thread's memory copy bandwidth.
// The benchmarks report each kernel as a fraction of the step its ISA runs
// (kernel_peaks). The loops themselves: machine_limits_loops.hpp.
#pragma once

#include <string>
#include <vector>

#include "attend/ops/isa.hpp"

namespace attend::bench {

// One step measured on one core. Operations count 2 per multiply-add (FLOP for fp32
// and bf16, integer operations for int8).
struct StepRate {
  std::string key;    // stable name for scripts: type_kind_isa, e.g. "int8_exact_avx2"
  std::string type;   // "fp32", "int8" or "bf16"
  std::string label;  // for people, e.g. "int8 exact"
  ops::Isa isa;       // the level it needs
  std::string step;   // the instructions, e.g. "vpmaddubsw+vpmaddwd+vpaddd ymm"
  double gops_per_core = 0;
  const char* unit() const { return type == "int8" ? "GOP/s" : "GFLOP/s"; }
};

struct MachineLimits {
  std::vector<StepRate> rates;    // the steps this CPU has, widest first within each type
  double copy_gbytes_per_s = 0;   // read + write bytes of a 256 MiB memcpy, one thread
  const StepRate* find(const std::string& key) const;  // nullptr if not measured
};

// ~3 s; quick: ~0.1 s of shorter runs (rough rates: for tests of the tool, not for figures).
MachineLimits measure_machine_limits(bool quick = false);

// The step that bounds attend's GEMM of each compute type when its kernels run at `isa`
// (fp32: the FMA of f32_kernel_isa, SSE2's mul+add; int8: tdpbsud with AMX (though
// products AMX does not suit run on VNNI: kernel_table.hpp's s8_fallback), vpdpbusd with VNNI, the exact
// sign step on AVX-512BW and AVX2, nothing measured for SSE2's scalar kernel; bf16:
// vdpbf16ps with AVX512_BF16, else the fp32 step its widening kernel runs). nullptr where
// none was measured.
struct KernelPeaks {
  const StepRate* float32 = nullptr;
  const StepRate* int8 = nullptr;
  const StepRate* bfloat16 = nullptr;
};
KernelPeaks kernel_peaks(const MachineLimits& limits, ops::Isa isa);

}  // namespace attend::bench
