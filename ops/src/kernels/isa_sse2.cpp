// Kernels compiled for SSE2, the x86-64 baseline: the portable fallback every x86-64
// CPU runs. 16 xmm registers, no FMA (xsimd emulates it with a multiply and an add).
// bf16 widens to fp32; s8 is plain int32 arithmetic (SSE2 has no 8-bit multiply-add),
// exact for full 8-bit activations.
#define ATTEND_ISA_NS isa_sse2
#include "kernels/make_table.hpp"

namespace attend::ops::detail {
const KernelTable& sse2_kernels() {
  using A = xsimd::sse2;
  static const KernelTable table = [] {
    KernelTable t = isa_sse2::make_table<A, 6, 2, 2, 6>(Isa::sse2, "sse2", "f32_gemm_6x8_sse2");
    t.bf16 = isa_sse2::bf16_gemm_kernels<A, false, 6, 2>("bf16_f32_gemm_6x8_sse2");
    t.bf16_pack_a = &isa_sse2::bf16_pack_a<A, false>;
    t.s8 = isa_sse2::s8_gemm_kernels<A, void, 4, 2>("qd8_f32_qc8w_gemm_4x8_scalar");
    t.s8_quantize_a = &isa_sse2::s8_quantize_a<A>;
    return t;
  }();
  return table;
}
}  // namespace attend::ops::detail
