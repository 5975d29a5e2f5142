#include "attend/ops/activation.hpp"

#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"
#include "streaming.hpp"

namespace attend::ops {

void activation(Activation a, ConstMatrix x, Matrix y, int threads) {
  detail::check_elementwise("activation", x, y, threads);
  const auto& k = detail::active_kernels();
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 16384);
  const bool stream = detail::use_streaming_stores(static_cast<std::size_t>(x.rows * x.cols) * sizeof(float));
  if (x.rows == 1 || (x.ld == x.cols && y.ld == y.cols)) {  // contiguous: split the flat array
    const index_t n = x.rows * x.cols;
    constexpr index_t kChunk = 4096;
    detail::parallel_chunks(nt, (n + kChunk - 1) / kChunk, [&](index_t b, index_t e) {
      const index_t lo = b * kChunk, hi = std::min(n, e * kChunk);
      k.activation_row(a, x.data + lo, y.data + lo, hi - lo, stream);
      if (stream) detail::streaming_fence();
    });
    return;
  }
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) k.activation_row(a, x.row(r), y.row(r), x.cols, stream);
    if (stream) detail::streaming_fence();
  });
}

void multiply(ConstMatrix x, ConstMatrix gate, Matrix y, int threads) {
  constexpr const char* op = "multiply";
  detail::check_threads(op, threads);
  detail::check_matrix(op, "x", x);
  detail::check_matrix(op, "gate", gate);
  detail::check_matrix(op, "y", y);
  detail::check_same_shape(op, "x", x, "y", y);
  detail::check_same_shape(op, "gate", gate, "y", y);
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 16384);
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r) {
      const float *a = x.row(r), *g = gate.row(r);
      float* out = y.row(r);
      for (index_t c = 0; c < x.cols; ++c) out[c] = a[c] * g[c];
    }
  });
}

}  // namespace attend::ops
