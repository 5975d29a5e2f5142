// Builds one ISA's kernel table from the templates above. Included by isa_*.cpp only.
#pragma once

#include <utility>

#include "kernels/attention_decode.hpp"
#include "kernels/attention_short.hpp"
#include "kernels/attention_tile.hpp"
#include "kernels/gemm_bf16_microkernel.hpp"
#include "kernels/gemm_microkernel.hpp"
#include "kernels/gemm_s8_microkernel.hpp"
#include "kernels/rate_probes.hpp"
#include "kernels/row_kernels.hpp"

namespace attend::ops::ATTEND_ISA_NS {

// MR × NV vectors: the fp32 GEMM register tile. QV, R: attention query vectors per
// tile and keys (or head dims) per register block. The bf16 and s8 GEMM entries are
// the caller's (each ISA file sets them).
template <class A, int MR, int NV, int QV, int R>
detail::KernelTable make_table(Isa isa, const char* name, const char* gemm_kernel_name) {
  detail::KernelTable t{};
  t.isa = isa;
  t.name = name;
  t.float_lanes = kLanes<A>;
  t.f32 = f32_gemm_kernels<A, MR, NV>(gemm_kernel_name);
  t.attention_query_tile = QV * kLanes<A>;
  t.attention_tile = &attention_tile<A, QV, R>;
  t.attention_short_tile = &attention_tile<A, 1, R>;
  // Short keys: passes of 64 queries (4 vectors) and 24 accumulators in AVX-512's 32
  // registers; 16 queries and 12 in the 16 of AVX2 and SSE2.
  if constexpr (kLanes<A> == 16) {
    t.attention_short_keys = &attention_short_keys<A, 4, 24, 2, 24>;
  } else {
    t.attention_short_keys = &attention_short_keys<A, 2, 12, 2, 12>;
  }
  t.attention_decode = &attention_decode<A>;
  t.attention_tile_positions = &attention_tile<A, QV, R, true>;
  t.attention_decode_positions = &attention_decode_positions<A>;
  t.layer_norm_row = &layer_norm_row<A>;
  t.rms_norm_row = &rms_norm_row<A>;
  t.activation_row = &activation_row<A>;
  t.softmax_row = &softmax_row<A>;
  t.log_softmax_row = &log_softmax_row<A>;
  t.argmax_row = &argmax_row<A>;
  t.all_finite_row = &all_finite_row<A>;
  t.row_magnitude = &row_magnitude<A>;
  t.top_k_row = &top_k_row<A>;
  t.scale_add_row = &scale_add_row<A>;
  t.bf16_scale_add_row = &bf16_scale_add_row<A>;
  t.s8_scale_add_row = &s8_scale_add_row<A>;
  t.f32_to_bf16_row = &f32_to_bf16_row<A>;
  t.fma_probe = &fma_probe<A>;
  return t;
}

}  // namespace attend::ops::ATTEND_ISA_NS
