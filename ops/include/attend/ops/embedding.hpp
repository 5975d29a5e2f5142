// Token embeddings and sinusoidal position encodings.
#pragma once

#include <cstdint>

#include "attend/ops/types.hpp"

namespace attend::ops {

// out[i] = table[ids[i]]·scale + positions[position_ids[i]]   (i < out.rows)
// `positions` is optional (data == nullptr). Ids and position ids are range-checked:
// an id outside the table is an attend::Error naming the index and the value.
void embedding(ConstMatrix table, const std::int32_t* ids, float scale, ConstMatrix positions,
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
