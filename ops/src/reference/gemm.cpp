#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attend/ops/reference.hpp"

namespace attend::ops::reference {
namespace {

// C = act(alpha·dot(i, j) + bias) + residual, dot in double; the residual is read
// before C is written (it may alias C).
template <class Dot>
void gemm_epilogue(Matrix c, float alpha, const float* bias, Activation act, ConstMatrix residual, const Dot& dot) {
  for (index_t i = 0; i < c.rows; ++i) {
    std::vector<double> row(c.cols);
    for (index_t j = 0; j < c.cols; ++j) {
      const double s = dot(i, j) * alpha + (bias ? bias[j] : 0.0);
      row[j] = activation(act, s) + (residual.data ? residual(i, j) : 0.0);
    }
    for (index_t j = 0; j < c.cols; ++j) c(i, j) = static_cast<float>(row[j]);
  }
}

}  // namespace

void gemm(ConstMatrix a, ConstMatrix w, Matrix c, float alpha, const float* bias, Activation act,
          ConstMatrix residual) {
  gemm_epilogue(c, alpha, bias, act, residual, [&](index_t i, index_t j) {
    double s = 0.0;
    for (index_t k = 0; k < a.cols; ++k) s += static_cast<double>(a(i, k)) * w(j, k);
    return s;
  });
}

float round_to_bf16(float x) {
  if (std::isnan(x)) return x;
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const std::uint32_t lsb = (u >> 16) & 1u;  // ties go to the even one
  u = (u + 0x7fffu + lsb) & 0xffff0000u;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

void quantize_rows(ConstMatrix x, int levels, std::int8_t* q, float* factor) {
  for (index_t i = 0; i < x.rows; ++i) {
    float amax = 0.0f;
    bool finite = true;
    for (index_t k = 0; k < x.cols; ++k) {
      finite = finite && std::isfinite(x(i, k));
      amax = std::max(amax, std::abs(x(i, k)));
    }
    const float inv = finite && amax > 0.0f ? static_cast<float>(levels) / amax : 0.0f;
    for (index_t k = 0; k < x.cols; ++k) {
      const float product = finite ? x(i, k) * inv : 0.0f;  // rounded to float, as the kernels do
      q[i * x.cols + k] = static_cast<std::int8_t>(std::nearbyint(product));
    }
    factor[i] = finite ? amax / static_cast<float>(levels) : std::numeric_limits<float>::quiet_NaN();
  }
}

void gemm_s8(ConstMatrix a, int a_levels, MatrixView<const std::int8_t> wq, const float* w_factor, Matrix c,
             float alpha, const float* bias, Activation act, ConstMatrix residual) {
  std::vector<std::int8_t> aq(static_cast<std::size_t>(a.rows * a.cols));
  std::vector<float> a_factor(static_cast<std::size_t>(a.rows));
  quantize_rows(a, a_levels, aq.data(), a_factor.data());
  gemm_epilogue(c, alpha, bias, act, residual, [&](index_t i, index_t j) {
    std::int64_t s = 0;  // exact
    for (index_t k = 0; k < a.cols; ++k) s += std::int64_t{aq[i * a.cols + k]} * wq(j, k);
    return static_cast<double>(s) * a_factor[i] * w_factor[j];
  });
}

void gemm_bf16(ConstMatrix a, ConstMatrix w, Matrix c, float alpha, const float* bias, Activation act,
               ConstMatrix residual) {
  gemm_epilogue(c, alpha, bias, act, residual, [&](index_t i, index_t j) {
    double s = 0.0;
    for (index_t k = 0; k < a.cols; ++k) s += static_cast<double>(round_to_bf16(a(i, k))) * round_to_bf16(w(j, k));
    return s;
  });
}

}  // namespace attend::ops::reference
