#include "attend/ops/row_magnitude.hpp"

#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"

namespace attend::ops {

void row_magnitudes(ConstMatrix x, RowMagnitude* out, int threads) {
  constexpr const char* op = "row_magnitudes";
  detail::check_threads(op, threads);
  detail::check_matrix(op, "x", x);
  ATTEND_OP_CHECK(x.rows == 0 || out != nullptr, op, "out is null");
  const auto kernel = detail::active_kernels().row_magnitude;
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 65536);
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) out[r] = kernel(x.row(r), x.cols);
  });
}

}  // namespace attend::ops
