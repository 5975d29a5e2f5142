// LayerNorm / RMSNorm drivers: check arguments, split rows over threads.
#include "attend/ops/normalization.hpp"

#include <cmath>

#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"
#include "streaming.hpp"

namespace attend::ops {
namespace {

void check_norm(const char* op, ConstMatrix x, Matrix y, const NormWeights& w, int threads, ConstMatrix residual,
                Matrix sum_out) {
  detail::check_threads(op, threads);
  detail::check_matrix(op, "x", x);
  detail::check_matrix(op, "y", y);
  detail::check_same_shape(op, "x", x, "y", y);
  ATTEND_OP_CHECK(x.rows == 0 || x.cols > 0, op, "rows have no columns");
  ATTEND_OP_CHECK(w.gamma != nullptr || x.rows == 0, op, "gamma is required");
  ATTEND_OP_CHECK(std::isfinite(w.epsilon) && w.epsilon >= 0.0f, op, "epsilon ", w.epsilon,
                  " must be finite and ≥ 0");
  if (residual.data) {
    detail::check_matrix(op, "residual", residual);
    detail::check_same_shape(op, "x", x, "residual", residual);
  }
  if (sum_out.data) {
    ATTEND_OP_CHECK(residual.data != nullptr, op, "sum_out needs a residual");
    detail::check_matrix(op, "sum_out", sum_out);
    detail::check_same_shape(op, "x", x, "sum_out", sum_out);
  }
}

// row_fn(r, stream) for every row, rows split over threads.
template <class RowFn>
void for_rows(int threads, ConstMatrix x, const RowFn& row_fn) {
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 8192);
  const bool stream = detail::use_streaming_stores(static_cast<std::size_t>(x.rows * x.cols) * sizeof(float));
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) row_fn(r, stream);
    if (stream) detail::streaming_fence();
  });
}

}  // namespace

void layer_norm(ConstMatrix x, Matrix y, const NormWeights& w, int threads, ConstMatrix residual, Matrix sum_out,
                RowMagnitude* magnitudes) {
  check_norm("layer_norm", x, y, w, threads, residual, sum_out);
  const auto& k = detail::active_kernels();
  for_rows(threads, x, [&](index_t r, bool stream) {
    k.layer_norm_row(x.row(r), residual.data ? residual.row(r) : nullptr, sum_out.data ? sum_out.row(r) : nullptr,
                     y.row(r), w.gamma, w.beta, w.epsilon, x.cols, stream);
    if (magnitudes) magnitudes[r] = k.row_magnitude(y.row(r), x.cols);  // the row just written: in L1
  });
}

void rms_norm(ConstMatrix x, Matrix y, const NormWeights& w, int threads, ConstMatrix residual, Matrix sum_out,
              RowMagnitude* magnitudes) {
  check_norm("rms_norm", x, y, w, threads, residual, sum_out);
  const auto& k = detail::active_kernels();
  for_rows(threads, x, [&](index_t r, bool stream) {
    k.rms_norm_row(x.row(r), residual.data ? residual.row(r) : nullptr, sum_out.data ? sum_out.row(r) : nullptr,
                   y.row(r), w.gamma, w.epsilon, x.cols, stream);
    if (magnitudes) magnitudes[r] = k.row_magnitude(y.row(r), x.cols);
  });
}

}  // namespace attend::ops
