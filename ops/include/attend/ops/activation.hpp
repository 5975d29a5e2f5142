// Element-wise activations over a matrix (y may be x itself).
#pragma once

#include "attend/ops/types.hpp"

namespace attend::ops {

void activation(Activation a, ConstMatrix x, Matrix y, int threads);

}  // namespace attend::ops
