// Attention probabilities, for the callers that show them. The fused attention kernels
// never store softmax(scale·Q·Kᵀ + mask); these ops recompute it — only when a caller
// asks, so normal inference pays nothing — from the very arguments the fused kernels
// take, so the weights are the ones those kernels applied to the values:
//   attention_probabilities   one decoding step, the first `heads` heads averaged (the
//                             alignment: return_attention, coverage, replace_unknowns);
//   attention_weights         every head of an ops::attention call (a layer's Q/K over
//                             whole sequences: an encoder's self-attention, any model's);
//   attention_decode_weights  every head of an ops::attention_decode call (one query per
//                             row against a cache: a decoder's self- or cross-attention).
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

// Where per-head weights go: the weights of query row i of (batch entry or decoder row
// b, head h) are the `columns` floats at data + b·batch_stride + h·head_stride + i·row_stride.
struct WeightsView {
  float* data = nullptr;
  index_t batch_stride = 0, head_stride = 0, row_stride = 0;

  float* at(index_t b, index_t h, index_t i) const { return data + b * batch_stride + h * head_stride + i * row_stride; }
};

// softmax(scale·q·kᵀ + relative terms) of every (batch, head, query), as ops::attention
// computes it from the same args (v and out are not read): each query row gets kv_len
// entries, the probabilities of the keys it sees and 0 at the ones it does not (past
// kv_lengths[b], after it under `causal`). A row that sees no key is all zeros.
void attention_weights(const AttentionArgs& args, const WeightsView& out, int threads);

// The same for one decoding step, from attention_decode's args (v and out are not read):
// row i, head h gets `columns` entries at out.at(i, h, 0) — its kv_lengths[i] keys'
// probabilities, then zeros (columns ≥ every kv length).
void attention_decode_weights(const DecodeAttentionArgs& args, const WeightsView& out, index_t columns, int threads);

}  // namespace attend::ops
