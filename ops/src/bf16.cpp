#include "attend/ops/bf16.hpp"

#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"

namespace attend::ops {

void convert_to_bf16(ConstMatrix x, MatrixView<std::uint16_t> y, int threads) {
  detail::check_elementwise("convert_to_bf16", x, y, threads);
  const auto& k = detail::active_kernels();
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 16384);
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) k.f32_to_bf16_row(x.row(r), y.row(r), x.cols);
  });
}

}  // namespace attend::ops
