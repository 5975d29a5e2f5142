// Row-wise softmax and log-softmax (y may be x itself). Rows are max-shifted, so large
// logits do not overflow; −inf entries are allowed (they get probability 0) as long
// as a row has one finite entry.
#pragma once

#include "attend/ops/types.hpp"

namespace attend::ops {

void softmax(ConstMatrix x, Matrix y, int threads);
void log_softmax(ConstMatrix x, Matrix y, int threads);

}  // namespace attend::ops
