// Token embeddings and sinusoidal position encodings.
#pragma once

#include <cstdint>

#include "attend/ops/types.hpp"

namespace attend::ops {

// An embedding table someone else owns: `rows` rows of `cols` elements, `ld` elements
// between row starts, in one of the weight types. Narrow tables are widened row by row
// as they are gathered (one row per token: nothing next to the GEMMs), so a model keeps
// them at a half (bf16) or a quarter (s8) of their fp32 bytes.
//   f32   floats.
//   bf16  raw bf16 bits (bf16.hpp); widening is exact.
//   s8    int8 q with one dequantization factor per row, w[r][c] = q[r][c]·factors[r],
//         computed in fp32 as CTranslate2 dequantizes its int8 embeddings (q times
//         1 / its stored scale; its quantization: q = round(w·127 / max|w_row|)).
struct EmbeddingTable {
  WeightType type = WeightType::f32;
  const void* data = nullptr;
  index_t rows = 0, cols = 0, ld = 0;
  const float* factors = nullptr;  // s8 only: [rows]

  EmbeddingTable() = default;
  // Implicit: an fp32 matrix is an fp32 table.
  EmbeddingTable(ConstMatrix f32) : data(f32.data), rows(f32.rows), cols(f32.cols), ld(f32.ld) {}
  explicit EmbeddingTable(MatrixView<const std::uint16_t> bf16)
      : type(WeightType::bf16), data(bf16.data), rows(bf16.rows), cols(bf16.cols), ld(bf16.ld) {}
  EmbeddingTable(MatrixView<const std::int8_t> q, const float* row_factors)
      : type(WeightType::s8), data(q.data), rows(q.rows), cols(q.cols), ld(q.ld), factors(row_factors) {}
};

// out[i] = widen(table[ids[i]])·scale + positions[position_ids[i]]   (i < out.rows)
// widen: f32 as is, bf16 exactly, s8 as fl(q·factor) — the same bits an fp32 table
// holding the widened values gives. `positions` is optional (data == nullptr). Ids and
// position ids are range-checked: an id outside the table is an attend::Error naming
// the index and the value, as are a bad table (shape, null data, s8 without factors).
void embedding(const EmbeddingTable& table, const std::int32_t* ids, float scale, ConstMatrix positions,
               const std::int32_t* position_ids, Matrix out, int threads);

enum class PositionLayout {
  // sin at even, cos at odd dimensions; frequency 1/10000^(2i/d)
  // (Vaswani et al.; the PyTorch nn.Transformer translation tutorial).
  interleaved,
  // [sin | cos] halves; frequency exp(−i·ln(10000)/(d/2 − 1))
  // (tensor2tensor, fairseq, Marian, OpenNMT, CTranslate2).
  concatenated,
};

// Fills out.rows position encodings, for positions first_position, first_position+1, …
// Computed in double precision. out.cols must be even.
void sinusoidal_positions(PositionLayout layout, index_t first_position, Matrix out);

}  // namespace attend::ops
