// LayerNorm and RMSNorm over rows, with an optional fused residual add.
#pragma once

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
// with a large mean and a tiny spread keep their precision.
void layer_norm(ConstMatrix x, Matrix y, const NormWeights& w, int threads,
                ConstMatrix residual = {}, Matrix sum_out = {});

// y = s / √(mean(s²) + ε) · γ, with s as above.
void rms_norm(ConstMatrix x, Matrix y, const NormWeights& w, int threads,
              ConstMatrix residual = {}, Matrix sum_out = {});

}  // namespace attend::ops
