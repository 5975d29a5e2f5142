// Whether each row of a matrix holds only finite values (no NaN, no ±∞): what decoding
// checks the logits with before it trusts them.
#pragma once

#include <cstdint>

#include "attend/ops/types.hpp"

namespace attend::ops {

// out[r] = 1 if every x(r, c) is finite, else 0.
void row_all_finite(ConstMatrix x, std::uint8_t* out, int threads);

}  // namespace attend::ops
