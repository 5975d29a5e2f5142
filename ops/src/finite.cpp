#include "attend/ops/finite.hpp"

#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"

namespace attend::ops {

void row_all_finite(ConstMatrix x, std::uint8_t* out, int threads) {
  constexpr const char* op = "row_all_finite";
  detail::check_threads(op, threads);
  detail::check_matrix(op, "x", x);
  ATTEND_OP_CHECK(x.rows == 0 || out != nullptr, op, "out is null");
  const auto kernel = detail::active_kernels().all_finite_row;
  // A vocabulary-wide logits matrix is megabytes read once: worth a second thread
  // (one pass per element, so the grain is larger than the other row ops').
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 65536);
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) out[r] = kernel(x.row(r), x.cols) ? 1 : 0;
  });
}

}  // namespace attend::ops
