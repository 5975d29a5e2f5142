#include "attend/ops/finite.hpp"

#include "kernel_table.hpp"
#include "row_values.hpp"

namespace attend::ops {

void row_all_finite(ConstMatrix x, std::uint8_t* out, int threads) {
  const auto finite = detail::active_kernels().all_finite_row;
  detail::row_values("row_all_finite", x, out, threads,
                     [finite](const float* row, index_t n) -> std::uint8_t { return finite(row, n) ? 1 : 0; });
}

}  // namespace attend::ops
