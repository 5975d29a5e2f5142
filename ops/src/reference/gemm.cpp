#include <vector>

#include "attend/ops/reference.hpp"

namespace attend::ops::reference {

void gemm(ConstMatrix a, ConstMatrix w, Matrix c, float alpha, const float* bias, Activation act,
          ConstMatrix residual) {
  // Read the residual first: it may alias C.
  for (index_t i = 0; i < c.rows; ++i) {
    std::vector<double> row(c.cols);
    for (index_t j = 0; j < c.cols; ++j) {
      double s = 0.0;
      for (index_t k = 0; k < a.cols; ++k) s += static_cast<double>(a(i, k)) * w(j, k);
      s = s * alpha + (bias ? bias[j] : 0.0);
      row[j] = activation(act, s) + (residual.data ? residual(i, j) : 0.0);
    }
    for (index_t j = 0; j < c.cols; ++j) c(i, j) = static_cast<float>(row[j]);
  }
}

}  // namespace attend::ops::reference
