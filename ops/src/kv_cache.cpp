// Writing decoding caches (attention.hpp: KvCacheTarget, store_kv) and naming their types.
#include <cstring>

#include "attend/ops/attention.hpp"
#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"

namespace attend::ops {

void store_kv(ConstMatrix x, index_t head_dim, const KvCacheTarget& y, int threads) {
  constexpr const char* op = "store_kv";
  detail::check_threads(op, threads);
  detail::check_matrix(op, "x", x);
  ATTEND_OP_CHECK(head_dim >= 1 && x.cols % head_dim == 0, op, "x has ", x.cols, " columns, not a multiple of head_dim ",
                  head_dim);
  if (x.rows == 0 || x.cols == 0) return;
  ATTEND_OP_CHECK(y.data != nullptr, op, "the cache is null");
  const index_t heads = x.cols / head_dim;
  const auto& k = detail::active_kernels();
  const int nt = detail::useful_threads(threads, x.rows * x.cols, 16384);
  detail::parallel_chunks(nt, x.rows, [&](index_t b, index_t e) {
    for (index_t r = b; r < e; ++r)
      for (index_t h = 0; h < heads; ++h) {
        const float* from = x.row(r) + h * head_dim;
        const index_t at = r * y.row_stride + h * y.head_stride;
        if (y.type == KvType::bf16) {
          k.f32_to_bf16_row(from, static_cast<std::uint16_t*>(y.data) + at, head_dim);
        } else {
          std::memcpy(static_cast<float*>(y.data) + at, from, static_cast<std::size_t>(head_dim) * sizeof(float));
        }
      }
  });
}

const char* kv_type_name(KvType t) { return t == KvType::bf16 ? "bf16" : "f32"; }

}  // namespace attend::ops
