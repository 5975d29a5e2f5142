#include "attend/ops/softmax.hpp"

#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"

namespace attend::ops {
namespace {

template <class RowKernel>
void row_op(const char* op, ConstMatrix x, Matrix y, int threads, RowKernel kernel) {
  detail::check_elementwise(op, x, y, threads);
  ATTEND_OP_CHECK(x.rows == 0 || x.cols > 0, op, "rows have no columns");
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 32768);
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) kernel(x.row(r), y.row(r), x.cols);
  });
}

}  // namespace

void softmax(ConstMatrix x, Matrix y, int threads) {
  row_op("softmax", x, y, threads, detail::active_kernels().softmax_row);
}

void log_softmax(ConstMatrix x, Matrix y, int threads) {
  row_op("log_softmax", x, y, threads, detail::active_kernels().log_softmax_row);
}

}  // namespace attend::ops
