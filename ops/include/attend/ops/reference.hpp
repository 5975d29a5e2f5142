// Plain reference implementations of every op: scalar loops, double-precision
// accumulation, no blocking, no threads. They define what the fast kernels must
// compute; the tests compare against them and the benchmarks use them as the naive
// yardstick. Arguments are as in the fast ops.
#pragma once

#include <cstdint>

#include "attend/ops/attention.hpp"
#include "attend/ops/embedding.hpp"
#include "attend/ops/normalization.hpp"
#include "attend/ops/row_magnitude.hpp"
#include "attend/ops/types.hpp"

namespace attend::ops::reference {

double activation(Activation a, double x);

// w is the unpacked weight [N, K].
void gemm(ConstMatrix a, ConstMatrix w, Matrix c, float alpha, const float* bias,
          Activation act, ConstMatrix residual);

// What the typed GEMMs promise (gemm.hpp):
// x rounded to bf16, nearest even (a NaN stays NaN).
float round_to_bf16(float x);
// Symmetric per-row quantization, CTranslate2's: q = nearest-even(fl(x·fl(levels/amax)))
// with amax = max|x_row|, and factor = fl(amax/levels), so x ≈ q·factor. q is [rows, cols]
// packed; a row holding a NaN or inf gets q = 0 and factor NaN.
void quantize_rows(ConstMatrix x, int levels, std::int8_t* q, float* factor);
// The s8 GEMM: A quantized per row to a_levels, W = wq[j][k]·w_factor[j]; the integer
// dot products exact, the dequantization and epilogue in double.
void gemm_s8(ConstMatrix a, int a_levels, MatrixView<const std::int8_t> wq, const float* w_factor, Matrix c,
             float alpha, const float* bias, Activation act, ConstMatrix residual);
// The bf16 GEMM: A and W rounded to bf16, products summed in double.
void gemm_bf16(ConstMatrix a, ConstMatrix w, Matrix c, float alpha, const float* bias,
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
void row_all_finite(ConstMatrix x, std::uint8_t* out);
// RowMagnitude's order, element by element.
void row_magnitudes(ConstMatrix x, RowMagnitude* out);
void row_top_k(ConstMatrix x, index_t k, std::int32_t* indices, float* values);
// Table elements widened in double: bf16 exactly, s8 as q·factor.
void embedding(const EmbeddingTable& table, const std::int32_t* ids, float scale, ConstMatrix positions,
               const std::int32_t* position_ids, Matrix out);
void sinusoidal_positions(PositionLayout layout, index_t first_position, Matrix out);

}  // namespace attend::ops::reference
