// Instruction-set selection.
//
// Every vectorised kernel is compiled three times — AVX-512 (F/CD/DQ/BW/VL), AVX2+FMA
// and SSE2 (the x86-64 baseline, so the portable fallback runs on any x86-64 CPU) —
// and the best one this CPU and OS support is chosen at run time. The environment
// variable ATTEND_ISA (avx512 | avx2 | sse2) forces a lower one; asking for one the
// machine lacks is an error at first use, not a silent downgrade.
#pragma once

#include <string>
#include <vector>

namespace attend::ops {

enum class Isa { sse2 = 0, avx2 = 1, avx512 = 2 };

const char* isa_name(Isa isa);
Isa parse_isa(const std::string& name);  // throws attend::Error on an unknown name

// ISAs this CPU and OS can run, best first.
std::vector<Isa> available_isas();
bool isa_available(Isa isa);

// The ISA used by kernels that are not bound to packed data. The first call reads
// ATTEND_ISA; set_isa() overrides it (tests and benchmarks use this to run every path).
Isa active_isa();
void set_isa(Isa isa);  // throws attend::Error if the machine cannot run `isa`

// Names of the kernels behind an ISA, e.g. "f32_gemm_14x32_avx512", for logs and plans.
std::string isa_kernel_summary(Isa isa);

}  // namespace attend::ops
