// Attention probabilities of one decoding step, for the callers that show them
// (return_attention, coverage penalty, replace_unknowns): softmax(scale · q_h · K_hᵀ)
// over each row's keys, averaged over the first `heads` heads. The fused attention
// kernels never store these probabilities; this op recomputes them for the one layer
// asked for, and only when asked, so normal decoding pays nothing.
#pragma once

#include <cstdint>

#include "attend/ops/attention.hpp"

namespace attend::ops {

struct AttentionProbsArgs {
  index_t rows = 0, heads = 0, head_dim = 0;  // heads: how many, from head 0, are averaged
  const float* q = nullptr;                   // head h of row i at q + i·q_row_stride + h·head_dim
  index_t q_row_stride = 0;
  KvCacheView k;                              // the keys the attention step read
  const std::int32_t* kv_lengths = nullptr;   // [rows] keys each row attends (required)
  float scale = 0.0f;                         // 0 → 1/√head_dim, as attention_decode
  float* out = nullptr;                       // [rows, columns]: probabilities, then zeros
  index_t out_row_stride = 0;
  index_t columns = 0;                        // entries written per row (≥ every kv length)
};

void attention_probabilities(const AttentionProbsArgs& args, int threads);

}  // namespace attend::ops
