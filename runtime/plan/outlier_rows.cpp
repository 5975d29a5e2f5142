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

void gemm_keeping_outlier_rows(ops::ConstMatrix a, const ops::PackedWeightView& w, ops::Matrix c,
                               const ops::GemmEpilogue& epilogue, int threads, std::span<const std::int32_t> rows,
                               std::int64_t first) {
  ops::GemmEpilogue ep = epilogue;
  if (w.type == ops::WeightType::s8) ep.two_term_rows = rows, ep.two_term_row_base = first;
  ops::gemm(a, w, c, ep, threads);
}

}  // namespace attend::runtime
