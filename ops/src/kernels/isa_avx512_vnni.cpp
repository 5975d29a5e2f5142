// The s8 GEMM with AVX512_VNNI (vpdpbusd: 64 u8×s8 products per instruction, 4× the
// fp32 FMA rate). Everything else is the avx512 table's; only this unit is compiled
// with -mavx512vnni, and only called when the CPU has it (isa.cpp).
#define ATTEND_ISA_NS isa_avx512_vnni
#include "kernels/extension_arch.hpp"
#include "kernels/gemm_s8_microkernel.hpp"

namespace attend::ops::detail {
const KernelTable& avx512_vnni_kernels() {
  static const KernelTable table = [] {
    KernelTable t = avx512_kernels();
    t.isa = Isa::avx512_vnni;
    t.name = "avx512_vnni";
    t.s8 = isa_avx512_vnni::s8_gemm_kernels<isa_avx512_vnni::avx512_extension, isa_avx512_vnni::S8DotVnni512, 15, 2>(
        "qd8_f32_qc8w_gemm_15x32_avx512vnni");
    return t;
  }();
  return table;
}
}  // namespace attend::ops::detail
