#include "plan/outlier_rows.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attend/error.hpp"
#include "attend/ops/activation.hpp"
#include "attend/ops/parallel_tasks.hpp"

namespace attend::runtime {
namespace {

struct RowMagnitude {
  float max = 0.0f;  // max |a|
  float sum = 0.0f;  // Σ |a|
};

// In 4-lane vectors (GCC/Clang vector extensions: SSE2 on any x86-64), four of them
// side by side: a scalar max/sum chain made this scan a quarter of the time of the
// GEMMs it guards. The sum's order is fixed by the code, so it is the same everywhere.
RowMagnitude magnitude(const float* a, std::int64_t k) {
  using F4 = float __attribute__((vector_size(16)));
  using I4 = std::int32_t __attribute__((vector_size(16)));
  constexpr int kChains = 4;
  const I4 no_sign = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
  F4 m[kChains] = {}, s[kChains] = {};
  std::int64_t i = 0;
  for (; i + 4 * kChains <= k; i += 4 * kChains)
    for (int j = 0; j < kChains; ++j) {
      F4 x;
      std::memcpy(&x, a + i + 4 * j, sizeof x);
      x = reinterpret_cast<F4>(reinterpret_cast<I4>(x) & no_sign);
      m[j] = m[j] < x ? x : m[j];  // (a NaN never wins: the GEMM reports it)
      s[j] += x;
    }
  RowMagnitude r;
  for (int j = 0; j < kChains; ++j)
    for (int l = 0; l < 4; ++l) r.max = std::max(r.max, m[j][l]), r.sum += s[j][l];
  for (; i < k; ++i) {
    const float x = std::fabs(a[i]);
    r.max = r.max < x ? x : r.max;
    r.sum += x;
  }
  return r;
}

bool is_outlier(const RowMagnitude& r, std::int64_t k) {
  // levels · mean / max < kOutlierRowMeanLevels, without dividing; false for 0 and inf.
  return r.max > 0.0f && r.max <= std::numeric_limits<float>::max() &&
         static_cast<double>(ops::kS8ActivationLevels) * r.sum <
             static_cast<double>(kOutlierRowMeanLevels) * static_cast<double>(k) * r.max;
}

// r = a − q(a)·level, q as ops' quantizer rounds: nearest-even(a · (levels / max)).
// |a · inv| ≤ 127, so adding and taking away 1.5·2²³ rounds it to the nearest integer,
// ties to even, in the default rounding mode — SSE2 additions, where std::nearbyint is
// a libm call per value on x86-64 without SSE4.1 (it tripled this correction's cost).
void quantization_residual(const float* a, std::int64_t k, float max, float* r) {
  constexpr float kRound = 12582912.0f;  // 1.5·2²³
  const float inv = static_cast<float>(ops::kS8ActivationLevels) / max;
  const float level = max / static_cast<float>(ops::kS8ActivationLevels);
  for (std::int64_t i = 0; i < k; ++i) {
    const float q = (a[i] * inv + kRound) - kRound;
    r[i] = a[i] - q * level;
  }
}

}  // namespace

bool is_outlier_row(const float* a, std::int64_t k) { return is_outlier(magnitude(a, k), k); }

std::int64_t find_outlier_rows(ops::ConstMatrix a, std::int32_t* rows, int threads) {
  // Thread t scans rows [r_t, r_t+1) — the same split as the LayerNorm before it, so the
  // rows are in its own core's cache — and lists its finds from rows + r_t (room enough:
  // no more than it scanned); the lists are then joined in order.
  const int nt = static_cast<int>(std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(a.rows, 1)));
  std::vector<std::int64_t> found(static_cast<size_t>(nt), 0);
  auto begin_of = [&](int t) { return a.rows * t / nt; };
  ops::parallel_tasks(nt, [&](int t) {
    std::int64_t n = 0;
    for (std::int64_t r = begin_of(t); r < begin_of(t + 1); ++r)
      if (is_outlier_row(a.row(r), a.cols)) rows[begin_of(t) + n++] = static_cast<std::int32_t>(r);
    found[static_cast<size_t>(t)] = n;
  });
  std::int64_t n = found[0];
  for (int t = 1; t < nt; ++t) {
    std::copy_n(rows + begin_of(t), found[static_cast<size_t>(t)], rows + n);
    n += found[static_cast<size_t>(t)];
  }
  return n;
}

std::size_t outlier_rows_scratch_floats(std::int64_t k, std::int64_t n) {
  // Up to two rows per outlier row (the row and its residual), in and out.
  return static_cast<std::size_t>(2 * kOutlierRowsPerPass * (k + n));
}

void gemm_keeping_outlier_rows(ops::ConstMatrix a, const ops::PackedWeightView& w, ops::Matrix c,
                               const ops::GemmEpilogue& epilogue, int threads, std::span<const std::int32_t> rows,
                               std::int64_t first, std::span<float> scratch) {
  ops::gemm(a, w, c, epilogue, threads);
  if (w.type != ops::WeightType::s8 || rows.empty()) return;
  const std::int64_t K = a.cols, N = c.cols;
  if (scratch.size() < outlier_rows_scratch_floats(K, N))
    throw error_of("internal: outlier-row scratch of ", scratch.size(), " floats for a ", K, "→", N, " GEMM");
  // Without an activation the epilogue is linear in A·Wᵀ: the residual's product is
  // added to C as it stands. With one, the pre-activation sum is needed: the row's
  // product is recomputed beside its residual's, and the epilogue applied here. (ops
  // allows no residual in C with an activation, so epilogue.residual is intact.)
  const bool recompute = epilogue.activation != ops::Activation::none;
  float* in = scratch.data();
  float* out = in + 2 * kOutlierRowsPerPass * K;
  ops::GemmEpilogue product;
  product.alpha = epilogue.alpha;
  for (size_t done = 0; done < rows.size(); done += kOutlierRowsPerPass) {
    const auto pass = rows.subspan(done, std::min<size_t>(kOutlierRowsPerPass, rows.size() - done));
    const auto n = static_cast<std::int64_t>(pass.size());
    // in: the residuals (rows 0…n−1); to recompute, the rows first, then their residuals.
    float* residuals = recompute ? in + n * K : in;
    for (std::int64_t i = 0; i < n; ++i) {
      const float* row = a.row(pass[i] - first);
      quantization_residual(row, K, magnitude(row, K).max, residuals + i * K);
      if (recompute) std::copy_n(row, K, in + i * K);
    }
    const std::int64_t m = recompute ? 2 * n : n;
    const ops::Matrix y{out, m, N};
    ops::gemm(ops::ConstMatrix{in, m, K}, w, y, product, threads);
    if (!recompute) {
      for (std::int64_t i = 0; i < n; ++i) {
        float* dst = c.row(pass[i] - first);
        const float* add = y.row(i);
        for (std::int64_t j = 0; j < N; ++j) dst[j] += add[j];
      }
      continue;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      float* z = y.row(i);
      const float* low = y.row(n + i);
      for (std::int64_t j = 0; j < N; ++j) z[j] += low[j] + (epilogue.bias ? epilogue.bias[j] : 0.0f);
    }
    const ops::Matrix z{out, n, N};
    ops::activation(epilogue.activation, z, z, threads);
    for (std::int64_t i = 0; i < n; ++i) {
      float* dst = c.row(pass[i] - first);
      const float* res = epilogue.residual.data ? epilogue.residual.row(pass[i] - first) : nullptr;
      for (std::int64_t j = 0; j < N; ++j) dst[j] = z(i, j) + (res ? res[j] : 0.0f);
    }
  }
}

}  // namespace attend::runtime
