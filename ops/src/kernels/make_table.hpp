// Builds one ISA's kernel table from the templates above. Included by isa_*.cpp only.
#pragma once

#include <utility>

#include "kernels/attention_decode.hpp"
#include "kernels/attention_tile.hpp"
#include "kernels/gemm_microkernel.hpp"
#include "kernels/row_kernels.hpp"

namespace attend::ops::ATTEND_ISA_NS {

// MR × NV vectors: the GEMM register tile. QV, R: attention query vectors per tile and
// keys (or head dims) per register block.
template <class A, int MR, int NV, int QV, int R>
detail::KernelTable make_table(Isa isa, const char* name, const char* gemm_kernel_name) {
  static_assert(MR <= 16, "gemm_kernels holds 16 row counts");
  detail::KernelTable t{};
  t.isa = isa;
  t.name = name;
  t.gemm_mr = MR;
  t.gemm_nr = NV * kLanes<A>;
  t.gemm_kernel_name = gemm_kernel_name;
  fill_gemm_kernels<A, NV>(t.gemm_kernels, std::make_integer_sequence<int, MR>{});
  t.attention_query_tile = QV * kLanes<A>;
  t.attention_tile = &attention_tile<A, QV, R>;
  t.attention_decode = &attention_decode<A>;
  t.attention_tile_positions = &attention_tile<A, QV, R, true>;
  t.attention_decode_positions = &attention_decode_scratch<A, true>;
  t.layer_norm_row = &layer_norm_row<A>;
  t.rms_norm_row = &rms_norm_row<A>;
  t.activation_row = &activation_row<A>;
  t.softmax_row = &softmax_row<A>;
  t.log_softmax_row = &log_softmax_row<A>;
  t.argmax_row = &argmax_row<A>;
  t.top_k_row = &top_k_row<A>;
  t.scale_add_row = &scale_add_row<A>;
  return t;
}

}  // namespace attend::ops::ATTEND_ISA_NS
