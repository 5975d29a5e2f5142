// Plain reference implementations of every op: scalar loops, double-precision
// accumulation, no blocking, no threads. They define what the fast kernels must
// compute; the tests compare against them and the benchmarks use them as the naive
// yardstick. Arguments are as in the fast ops.
#pragma once

#include "attend/ops/attention.hpp"
#include "attend/ops/embedding.hpp"
#include "attend/ops/normalization.hpp"
#include "attend/ops/types.hpp"

namespace attend::ops::reference {

double activation(Activation a, double x);

// w is the unpacked weight [N, K].
void gemm(ConstMatrix a, ConstMatrix w, Matrix c, float alpha, const float* bias,
          Activation act, ConstMatrix residual);

void attention(const AttentionArgs& args);
void attention_decode(const DecodeAttentionArgs& args);

void layer_norm(ConstMatrix x, Matrix y, const NormWeights& w, ConstMatrix residual = {},
                Matrix sum_out = {});
void rms_norm(ConstMatrix x, Matrix y, const NormWeights& w, ConstMatrix residual = {},
              Matrix sum_out = {});
void activation(Activation a, ConstMatrix x, Matrix y);
void multiply(ConstMatrix x, ConstMatrix gate, Matrix y);
void softmax(ConstMatrix x, Matrix y);
void log_softmax(ConstMatrix x, Matrix y);
void row_argmax(ConstMatrix x, std::int32_t* out);
void row_top_k(ConstMatrix x, index_t k, std::int32_t* indices, float* values);
void embedding(ConstMatrix table, const std::int32_t* ids, float scale, ConstMatrix positions,
               const std::int32_t* position_ids, Matrix out);
void sinusoidal_positions(PositionLayout layout, index_t first_position, Matrix out);

}  // namespace attend::ops::reference
