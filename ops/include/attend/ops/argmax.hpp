// Row-wise selection of the largest values: argmax (what greedy decoding picks) and
// the top k (what beam search expands). Ties go to the lowest column. −inf entries are
// allowed; NaN entries are not (where they stand, the choice is unspecified).
#pragma once

#include <cstdint>

#include "attend/ops/types.hpp"

namespace attend::ops {

// out[r] = argmax_c x(r, c), for x.rows rows of x.cols ≥ 1 columns.
void row_argmax(ConstMatrix x, std::int32_t* out, int threads);

// The k largest of each row, largest first: indices[r·k + i], values[r·k + i], for
// 1 ≤ k ≤ x.cols.
void row_top_k(ConstMatrix x, index_t k, std::int32_t* indices, float* values, int threads);

}  // namespace attend::ops
