#include "attend/ops/argmax.hpp"

#include <limits>

#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"

namespace attend::ops {

namespace {

void check_rows(const char* op, ConstMatrix x, int threads) {
  detail::check_threads(op, threads);
  detail::check_matrix(op, "x", x);
  ATTEND_OP_CHECK(x.rows == 0 || x.cols > 0, op, "rows have no columns");
  ATTEND_OP_CHECK(x.cols <= std::numeric_limits<std::int32_t>::max(), op, x.cols, " columns do not fit an int32 index");
}

}  // namespace

void row_argmax(ConstMatrix x, std::int32_t* out, int threads) {
  constexpr const char* op = "row_argmax";
  check_rows(op, x, threads);
  ATTEND_OP_CHECK(x.rows == 0 || out != nullptr, op, "out is null");
  const auto kernel = detail::active_kernels().argmax_row;
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 32768);
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) out[r] = static_cast<std::int32_t>(kernel(x.row(r), x.cols));
  });
}

void row_top_k(ConstMatrix x, index_t k, std::int32_t* indices, float* values, int threads) {
  constexpr const char* op = "row_top_k";
  check_rows(op, x, threads);
  ATTEND_OP_CHECK(x.rows == 0 || (indices != nullptr && values != nullptr), op, "indices or values is null");
  ATTEND_OP_CHECK(x.rows == 0 || (k >= 1 && k <= x.cols), op, "k = ", k, " is outside [1, ", x.cols, "]");
  const auto kernel = detail::active_kernels().top_k_row;
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 32768);
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) kernel(x.row(r), x.cols, k, indices + r * k, values + r * k);
  });
}

}  // namespace attend::ops
