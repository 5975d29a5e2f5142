// Kernels compiled for AVX-512 (F, CD, DQ, BW, VL) with FMA: 32 zmm registers, so the
// GEMM tile is 14×32 (28 accumulators) and attention tiles 32 queries wide.
#define ATTEND_ISA_NS isa_avx512
#include "kernels/make_table.hpp"

namespace attend::ops::detail {
const KernelTable& avx512_kernels() {
  static const KernelTable table =
      isa_avx512::make_table<xsimd::avx512bw, 14, 2, 2, 12>(Isa::avx512, "avx512", "f32_gemm_14x32_avx512");
  return table;
}
}  // namespace attend::ops::detail
