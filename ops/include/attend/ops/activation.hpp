// Element-wise activations over a matrix (y may be x itself).
#pragma once

#include "attend/ops/types.hpp"

namespace attend::ops {

void activation(Activation a, ConstMatrix x, Matrix y, int threads);

// y = x ⊙ gate, element-wise (y may be x or gate): the product of a gated (GLU)
// feed-forward layer, act(x·W₀ᵀ) ⊙ (x·W₀'ᵀ). A portable loop the compiler vectorises;
// it is memory-bound.
void multiply(ConstMatrix x, ConstMatrix gate, Matrix y, int threads);

}  // namespace attend::ops
