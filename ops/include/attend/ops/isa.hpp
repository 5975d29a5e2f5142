// Instruction-set selection.
//
// Every vectorised kernel is compiled for each level below, and the best one this CPU
// and OS support is chosen at run time. The levels form a chain, each including all
// below it (as oneDNN's avx512_core → avx512_core_vnni → avx512_core_bf16):
//
//   sse2         the x86-64 baseline: the portable fallback runs on any x86-64 CPU
//   avx2         AVX2 + FMA
//   avx512       AVX-512 F/CD/DQ/BW/VL
//   avx512_vnni  + AVX512_VNNI (vpdpbusd): the int8 GEMM's dot product
//   avx512_bf16  + AVX512_BF16 (vdpbf16ps): the bf16 GEMM's dot product
//   avx512_amx   + AMX-TILE and AMX-INT8 (tdpbsud: 16×16×64 products per instruction),
//                where the OS grants the process the tile state (Linux: arch_prctl)
//
// The three top levels add only the int8 and bf16 GEMM kernels; every fp32 kernel is the
// avx512 one (f32_kernel_isa). The environment variable ATTEND_ISA (one of the names
// above, or "portable" for sse2) forces a lower one; asking for one the machine lacks
// is an error at first use, not a silent downgrade.
#pragma once

#include <string>
#include <vector>

namespace attend::ops {

enum class Isa { sse2 = 0, avx2 = 1, avx512 = 2, avx512_vnni = 3, avx512_bf16 = 4, avx512_amx = 5 };

const char* isa_name(Isa isa);
Isa parse_isa(const std::string& name);  // throws attend::Error on an unknown name

// ISAs this CPU and OS can run, best first.
std::vector<Isa> available_isas();
bool isa_available(Isa isa);

// The level whose fp32 kernels `isa` runs: avx512 for avx512_vnni, avx512_bf16 and avx512_amx,
// `isa` itself otherwise. Tests use it to run each distinct fp32 kernel once.
Isa f32_kernel_isa(Isa isa);

// The ISA used by kernels that are not bound to packed data (attention, softmax,
// LayerNorm, …): the calling thread's IsaScope if one is open, else the process's. The
// first call reads ATTEND_ISA; set_isa() overrides it (tests and benchmarks use this to
// run every path).
Isa active_isa();
void set_isa(Isa isa);  // throws attend::Error if the machine cannot run `isa`

// While it lives, the calling thread's ops — and the team threads they start — run
// `isa`'s kernels whatever the process's ISA is. A model loaded for avx2 on an AVX-512
// machine opens one around each batch, so every op runs at avx2, not only the GEMMs
// whose weights were packed for it (which made an "AVX2 proxy" run its attention,
// softmax and LayerNorm in AVX-512). Scopes nest; throws attend::Error if the machine
// cannot run `isa`.
class IsaScope {
 public:
  explicit IsaScope(Isa isa);
  ~IsaScope();
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  int previous_;
};

// Names of the kernels behind an ISA, e.g. "f32_gemm_14x32_avx512", for logs and plans.
std::string isa_kernel_summary(Isa isa);

// One core's measured rates of the GEMMs' dot-product instructions, in GFLOP/s (a
// product and its sum count 2): the fp32 FMA of the best ISA this CPU has, and the bf16
// dot product (vdpbf16ps, 0 without AVX512_BF16). Measured once per process, on first
// call (~2 ms), best of several short runs of each, alternated. Whether bf16 weights
// compute faster than fp32 depends on these, not on the ISA alone: vdpbf16ps gives the
// FMA's FLOP rate on AMD Zen 4, half of it on Intel's cores.
struct DotRates {
  double f32_fma_gflops = 0;
  double bf16_dot_gflops = 0;
};
DotRates measured_dot_rates();

}  // namespace attend::ops
