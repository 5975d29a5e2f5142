// Reference row ops: normalisation, activations, softmax, embeddings, positions.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <limits>
#include <vector>

#include "attend/ops/bf16.hpp"
#include "attend/ops/reference.hpp"

namespace attend::ops::reference {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The residual stream x + r is an fp32 tensor (sum_out holds it, and the next layer
// reads it), so the sum is rounded to float; everything after it runs in double.
std::vector<double> summed_row(ConstMatrix x, ConstMatrix residual, index_t r) {
  std::vector<double> s(x.cols);
  for (index_t c = 0; c < x.cols; ++c) s[c] = residual.data ? double(x(r, c) + residual(r, c)) : double(x(r, c));
  return s;
}

template <class Normalise>
void norm_rows(ConstMatrix x, Matrix y, ConstMatrix residual, Matrix sum_out, Normalise normalise) {
  for (index_t r = 0; r < x.rows; ++r) {
    const std::vector<double> s = summed_row(x, residual, r);
    const std::vector<double> out = normalise(s);
    for (index_t c = 0; c < x.cols; ++c) {
      if (sum_out.data) sum_out(r, c) = static_cast<float>(s[c]);
      y(r, c) = static_cast<float>(out[c]);
    }
  }
}

}  // namespace

double activation(Activation a, double x) {
  switch (a) {
    case Activation::none: return x;
    case Activation::relu: return x > 0 ? x : 0.0;
    case Activation::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::gelu_tanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
    case Activation::silu: return x / (1.0 + std::exp(-x));
    case Activation::gelu_sigmoid: return x / (1.0 + std::exp(-1.702 * x));
  }
  return x;
}

void layer_norm(ConstMatrix x, Matrix y, const NormWeights& w, ConstMatrix residual, Matrix sum_out) {
  norm_rows(x, y, residual, sum_out, [&](const std::vector<double>& s) {
    double mean = 0.0, var = 0.0;
    for (double v : s) mean += v;
    mean /= s.size();
    for (double v : s) var += (v - mean) * (v - mean);
    var /= s.size();
    std::vector<double> out(s.size());
    for (size_t c = 0; c < s.size(); ++c)
      out[c] = (s[c] - mean) / std::sqrt(var + w.epsilon) * w.gamma[c] + (w.beta ? w.beta[c] : 0.0);
    return out;
  });
}

void rms_norm(ConstMatrix x, Matrix y, const NormWeights& w, ConstMatrix residual, Matrix sum_out) {
  norm_rows(x, y, residual, sum_out, [&](const std::vector<double>& s) {
    double ms = 0.0;
    for (double v : s) ms += v * v;
    ms /= s.size();
    std::vector<double> out(s.size());
    for (size_t c = 0; c < s.size(); ++c) out[c] = s[c] / std::sqrt(ms + w.epsilon) * w.gamma[c];
    return out;
  });
}

void multiply(ConstMatrix x, ConstMatrix gate, Matrix y) {
  for (index_t r = 0; r < x.rows; ++r)
    for (index_t c = 0; c < x.cols; ++c) y(r, c) = static_cast<float>(double(x(r, c)) * double(gate(r, c)));
}

void activation(Activation a, ConstMatrix x, Matrix y) {
  for (index_t r = 0; r < x.rows; ++r)
    for (index_t c = 0; c < x.cols; ++c) y(r, c) = static_cast<float>(activation(a, x(r, c)));
}

void softmax(ConstMatrix x, Matrix y) {
  for (index_t r = 0; r < x.rows; ++r) {
    double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (index_t c = 0; c < x.cols; ++c) mx = std::max(mx, double(x(r, c)));
    std::vector<double> e(x.cols);
    for (index_t c = 0; c < x.cols; ++c) sum += (e[c] = std::exp(x(r, c) - mx));
    for (index_t c = 0; c < x.cols; ++c) y(r, c) = static_cast<float>(e[c] / sum);
  }
}

void log_softmax(ConstMatrix x, Matrix y) {
  for (index_t r = 0; r < x.rows; ++r) {
    double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (index_t c = 0; c < x.cols; ++c) mx = std::max(mx, double(x(r, c)));
    for (index_t c = 0; c < x.cols; ++c) sum += std::exp(x(r, c) - mx);
    const double lse = mx + std::log(sum);
    for (index_t c = 0; c < x.cols; ++c) y(r, c) = static_cast<float>(x(r, c) - lse);
  }
}

void row_all_finite(ConstMatrix x, std::uint8_t* out) {
  for (index_t r = 0; r < x.rows; ++r) {
    bool finite = true;
    for (index_t c = 0; c < x.cols; ++c) finite = finite && std::isfinite(x(r, c));
    out[r] = finite ? 1 : 0;
  }
}

void row_magnitudes(ConstMatrix x, RowMagnitude* out) {
  for (index_t r = 0; r < x.rows; ++r) {
    float slot[64];
    std::fill_n(slot, 64, -0.0f);
    RowMagnitude m;
    for (index_t c = 0; c < x.cols; ++c) {
      const float v = std::fabs(x(r, c));
      m.max_abs = m.max_abs < v ? v : m.max_abs;
      slot[c % 64] += v;
    }
    for (int half = 32; half >= 1; half /= 2)
      for (int l = 0; l < half; ++l) slot[l] += slot[l + half];
    m.sum_abs = slot[0];
    out[r] = m;
  }
}

void row_argmax(ConstMatrix x, std::int32_t* out) {
  for (index_t r = 0; r < x.rows; ++r) {
    index_t best = 0;
    for (index_t c = 1; c < x.cols; ++c)
      if (x(r, c) > x(r, best)) best = c;
    out[r] = static_cast<std::int32_t>(best);
  }
}

// A stable sort of each row's indices by decreasing value: ties keep the lower index.
void row_top_k(ConstMatrix x, index_t k, std::int32_t* indices, float* values) {
  std::vector<std::int32_t> order(static_cast<size_t>(x.cols));
  for (index_t r = 0; r < x.rows; ++r) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return x(r, a) > x(r, b); });
    for (index_t i = 0; i < k; ++i) indices[r * k + i] = order[i], values[r * k + i] = x(r, order[i]);
  }
}

namespace {

double table_element(const EmbeddingTable& t, index_t r, index_t c) {
  const index_t at = r * t.ld + c;
  switch (t.type) {
    case WeightType::bf16: return float_from_bf16(static_cast<const std::uint16_t*>(t.data)[at]);
    case WeightType::s8: return double(static_cast<const std::int8_t*>(t.data)[at]) * t.factors[r];
    case WeightType::f32: break;
  }
  return static_cast<const float*>(t.data)[at];
}

}  // namespace

void embedding(const EmbeddingTable& table, const std::int32_t* ids, float scale, ConstMatrix positions,
               const std::int32_t* position_ids, Matrix out) {
  for (index_t i = 0; i < out.rows; ++i)
    for (index_t c = 0; c < out.cols; ++c)
      out(i, c) = static_cast<float>(table_element(table, ids[i], c) * scale +
                                     (positions.data ? positions(position_ids[i], c) : 0.0));
}

// Written from the papers' formulas (powers rather than the fast path's exp/log).
void sinusoidal_positions(PositionLayout layout, index_t first_position, Matrix out) {
  const index_t d = out.cols, half = d / 2;
  for (index_t r = 0; r < out.rows; ++r) {
    const double p = double(first_position + r);
    for (index_t c = 0; c < d; ++c) {
      double value;
      if (layout == PositionLayout::interleaved) {
        const double angle = p / std::pow(10000.0, double(c - c % 2) / d);
        value = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
      } else {
        const index_t i = c % half;
        const double angle = p / std::pow(10000.0, double(i) / (half - 1));
        value = c < half ? std::sin(angle) : std::cos(angle);
      }
      out(r, c) = static_cast<float>(value);
    }
  }
}

}  // namespace attend::ops::reference
