// The bf16 GEMM with AVX512_BF16 (vdpbf16ps: 32 bf16 products per instruction, 2× the
// fp32 FMA rate). Everything else is the avx512_vnni table's; only this unit is
// compiled with -mavx512bf16, and only called when the CPU has it (isa.cpp).
#define ATTEND_ISA_NS isa_avx512_bf16
#include "kernels/extension_arch.hpp"
#include "kernels/gemm_bf16_microkernel.hpp"
#include "kernels/rate_probes.hpp"

namespace attend::ops::detail {
const KernelTable& avx512_bf16_kernels() {
  using A = isa_avx512_bf16::avx512_extension;
  static const KernelTable table = [] {
    KernelTable t = avx512_vnni_kernels();
    t.isa = Isa::avx512_bf16;
    t.name = "avx512_bf16";
    t.bf16 = isa_avx512_bf16::bf16_gemm_kernels<A, true, 14, 2>("bf16_f32_gemm_14x32_avx512bf16");
    t.bf16_pack_a = &isa_avx512_bf16::bf16_pack_a<A, true>;
    t.bf16_dot_probe = &isa_avx512_bf16::bf16_dot_probe;
    return t;
  }();
  return table;
}
}  // namespace attend::ops::detail
