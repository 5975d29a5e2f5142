// Kernels compiled for AVX2 + FMA: 16 ymm registers, so the fp32 GEMM tile holds 12
// accumulators: 4×24 (3 weight vectors + 1 broadcast) rather than 6×16 — 32 decoder rows
// are 8 whole tiles instead of 6,6,5,5,5,5, +2–7% at M 8–1024 on a Golden Cove core held
// to AVX2 (bench_gemm; decoder step M 32: 71.8 → 73.7 GFLOP/s). Attention tiles 16
// queries wide. bf16 widens to fp32; s8 widens both operands to s16 for vpmaddwd in a
// 6×8 tile (gemm_s8_madd16_microkernel.hpp: 172 GOP/s on a Zen 4 core held to AVX2,
// against 150 for the 5×16 tile of the sign trick it replaced — vpsignb + vpmaddubsw).
#define ATTEND_ISA_NS isa_avx2
#include "kernels/gemm_s8_madd16_microkernel.hpp"
#include "kernels/make_table.hpp"

namespace attend::ops::detail {
const KernelTable& avx2_kernels() {
  using A = xsimd::fma3<xsimd::avx2>;
  static const KernelTable table = [] {
    KernelTable t = isa_avx2::make_table<A, 4, 3, 2, 6>(Isa::avx2, "avx2", "f32_gemm_4x24_avx2");
    t.bf16 = isa_avx2::bf16_gemm_kernels<A, false, 6, 2>("bf16_f32_gemm_6x16_avx2");
    t.bf16_pack_a = &isa_avx2::bf16_pack_a<A, false>;
    t.s8 = isa_avx2::s8_gemm_kernels_madd16<A, 6>("qd8_f32_qc8w_gemm_6x8_avx2");
    t.s8_quantize_a = &isa_avx2::s8_quantize_a<A>;
    t.s8_quantize_a_s16 = &isa_avx2::s8_quantize_a_s16_avx2;
    return t;
  }();
  return table;
}
}  // namespace attend::ops::detail
