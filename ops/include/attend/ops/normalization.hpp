// LayerNorm and RMSNorm over rows, with an optional fused residual add.
#pragma once

#include "attend/ops/row_magnitude.hpp"
#include "attend/ops/types.hpp"

namespace attend::ops {

struct NormWeights {
  const float* gamma = nullptr;  // [cols], required
  const float* beta = nullptr;   // [cols], optional (LayerNorm only)
  float epsilon = 1e-5f;
};

// y = (s − mean(s)) / √(var(s) + ε) · γ + β, with s = x (+ residual).
// If `sum_out` is given (and a residual), it receives s — the pre-norm residual
// stream. y may be x itself; sum_out may be x or the residual itself. Mean and
// variance are computed in two passes over the row (centred variance), so rows
// with a large mean and a tiny spread keep their precision. If `magnitudes` is given
// ([rows]), it receives each row of y's RowMagnitude, taken while the row is in cache
// (the same bits as row_magnitudes(y) after the call).
void layer_norm(ConstMatrix x, Matrix y, const NormWeights& w, int threads,
                ConstMatrix residual = {}, Matrix sum_out = {}, RowMagnitude* magnitudes = nullptr);

// y = s / √(mean(s²) + ε) · γ, with s and `magnitudes` as above.
void rms_norm(ConstMatrix x, Matrix y, const NormWeights& w, int threads,
              ConstMatrix residual = {}, Matrix sum_out = {}, RowMagnitude* magnitudes = nullptr);

}  // namespace attend::ops
