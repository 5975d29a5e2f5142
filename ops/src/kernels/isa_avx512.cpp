// Kernels compiled for AVX-512 (F, CD, DQ, BW, VL) with FMA: 32 zmm registers, so the
// fp32 GEMM tile is 14×32 (28 accumulators) and attention tiles 32 queries wide. The
// bf16 GEMM widens bf16 to fp32 (two FMAs per pair) and the s8 GEMM uses vpmaddubsw on
// |a| and sign-moved weights; the avx512_vnni and avx512_bf16 tables replace those two.
#define ATTEND_ISA_NS isa_avx512
#include "kernels/make_table.hpp"

namespace attend::ops::detail {
const KernelTable& avx512_kernels() {
  using A = xsimd::avx512bw;
  static const KernelTable table = [] {
    KernelTable t = isa_avx512::make_table<A, 14, 2, 2, 12>(Isa::avx512, "avx512", "f32_gemm_14x32_avx512");
    t.bf16 = isa_avx512::bf16_gemm_kernels<A, false, 14, 2>("bf16_f32_gemm_14x32_avx512");
    t.bf16_pack_a = &isa_avx512::bf16_pack_a<A, false>;
    // 12 rows, not 14: the step also holds |a|, a 16-bit product and the constant 1.
    t.s8 = isa_avx512::s8_gemm_kernels<A, isa_avx512::S8DotSign512, 12, 2>("qd8_f32_qc8w_gemm_12x32_avx512");
    t.s8_quantize_a = &isa_avx512::s8_quantize_a<A>;
    return t;
  }();
  return table;
}
}  // namespace attend::ops::detail
