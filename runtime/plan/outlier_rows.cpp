#include "plan/outlier_rows.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "attend/ops/parallel_tasks.hpp"

namespace attend::runtime {

bool is_outlier(const ops::RowMagnitude& m, std::int64_t k) {
  // levels · mean / max < kOutlierRowMeanLevels, without dividing; false for 0 and inf.
  return m.max_abs > 0.0f && m.max_abs <= std::numeric_limits<float>::max() &&
         static_cast<double>(ops::kS8ActivationLevels) * m.sum_abs <
             static_cast<double>(kOutlierRowMeanLevels) * static_cast<double>(k) * m.max_abs;
}

bool is_outlier_row(const float* a, std::int64_t k) {
  ops::RowMagnitude m;
  ops::row_magnitudes({a, 1, k}, &m, 1);
  return is_outlier(m, k);
}

std::int64_t list_outlier_rows(std::span<const ops::RowMagnitude> magnitudes, std::int64_t k, std::int32_t* rows) {
  std::int64_t n = 0;
  for (size_t r = 0; r < magnitudes.size(); ++r)
    if (is_outlier(magnitudes[r], k)) rows[n++] = static_cast<std::int32_t>(r);
  return n;
}

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
