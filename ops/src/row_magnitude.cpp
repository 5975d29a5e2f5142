#include "attend/ops/row_magnitude.hpp"

#include "kernel_table.hpp"
#include "row_values.hpp"

namespace attend::ops {

void row_magnitudes(ConstMatrix x, RowMagnitude* out, int threads) {
  detail::row_values("row_magnitudes", x, out, threads, detail::active_kernels().row_magnitude);
}

}  // namespace attend::ops
