// Each row's largest magnitude and sum of magnitudes: what a per-row int8 quantizer's
// caller needs to judge how well a row quantizes (how many of the 127 levels its mean
// magnitude gets), taken where a row is written — layer_norm gives them for its output
// rows — or by a pass of its own.
#pragma once

#include "attend/ops/types.hpp"

namespace attend::ops {

// max_abs = max |x| (a NaN never wins); sum_abs = Σ |x| in one order on every ISA:
// element c into slot c mod 64, each slot summed from the row's start, then the 64
// slots folded by halves (slot l += slot l + 32 for l < 32, then + 16, … down to one:
// the canonical order of ops' row sums). So a decision taken from them is the same
// whatever the CPU.
struct RowMagnitude {
  float max_abs = 0.0f;
  float sum_abs = 0.0f;
};

// out[r] for every row of x.
void row_magnitudes(ConstMatrix x, RowMagnitude* out, int threads);

}  // namespace attend::ops
