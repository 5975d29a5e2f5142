// Kernels compiled for AVX2 + FMA: 16 ymm registers, so the GEMM tile is 6×16
// (12 accumulators) and attention tiles 16 queries wide.
#define ATTEND_ISA_NS isa_avx2
#include "kernels/make_table.hpp"

namespace attend::ops::detail {
const KernelTable& avx2_kernels() {
  static const KernelTable table =
      isa_avx2::make_table<xsimd::fma3<xsimd::avx2>, 6, 2, 2, 6>(Isa::avx2, "avx2", "f32_gemm_6x16_avx2");
  return table;
}
}  // namespace attend::ops::detail
