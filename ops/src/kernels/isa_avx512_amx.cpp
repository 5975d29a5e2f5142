// The s8 GEMM on AMX tiles (tdpbsud: 16 × 16 × 64 int8 products per instruction, ~11×
// a core's vpdpbusd rate measured on an Emerald Rapids core). Everything else is the
// avx512_bf16 table's; only this unit is compiled with -mamx-tile -mamx-int8, and only
// called when the CPU has AMX and Linux grants the process its tile state (isa.cpp).
//
// Products AMX does not suit go to the avx512_bf16 table's VNNI kernels, which read the
// same packed panels and give the same bits: a padded K that is not a multiple of 64,
// and products of fewer than kAmxMinRows rows (decoding), where a tile would be mostly
// empty and the weights' bandwidth, not the dot products, bounds the time.
#define ATTEND_ISA_NS isa_avx512_amx
#include "kernels/extension_arch.hpp"
#include "kernels/gemm_s8_amx_microkernel.hpp"

namespace attend::ops::detail {
namespace {
constexpr index_t kAmxMinRows = 16;
}  // namespace

const KernelTable& avx512_amx_kernels() {
  using A = isa_avx512_amx::avx512_extension;
  static const KernelTable table = [] {
    KernelTable t = avx512_bf16_kernels();
    t.isa = Isa::avx512_amx;
    t.name = "avx512_amx";
    t.s8 = isa_avx512_amx::s8_amx_kernels<A, isa_avx512_amx::AmxTiles>("qd8_f32_qc8w_gemm_32x32_amx");
    t.s8_quantize_a = &isa_avx512_amx::s8_quantize_rows_avx512;
    t.s8_fallback = &avx512_bf16_kernels();
    t.s8_min_rows = kAmxMinRows;
    t.s8_k_multiple = isa_avx512_amx::kAmxKStep;
    t.s8_begin_thread = &isa_avx512_amx::AmxTiles::begin_thread;
    return t;
  }();
  return table;
}
}  // namespace attend::ops::detail
