// Kernels compiled for SSE2, the x86-64 baseline: the portable fallback every x86-64
// CPU runs. 16 xmm registers, no FMA (xsimd emulates it with a multiply and an add).
#define ATTEND_ISA_NS isa_sse2
#include "kernels/make_table.hpp"

namespace attend::ops::detail {
const KernelTable& sse2_kernels() {
  static const KernelTable table =
      isa_sse2::make_table<xsimd::sse2, 6, 2, 2, 6>(Isa::sse2, "sse2", "f32_gemm_6x8_sse2");
  return table;
}
}  // namespace attend::ops::detail
