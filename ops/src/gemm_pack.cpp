// Packing a weight into GEMM panels: N cut into NR-wide panels (the last zero-padded),
// each panel stored k-major ([K][NR]) so the micro-kernel reads one aligned vector row
// per k. Done once per weight, at model load.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "attend/ops/gemm.hpp"
#include "check.hpp"
#include "kernel_table.hpp"

namespace attend::ops {

int gemm_panel_width(Isa isa) { return detail::kernels_for(isa).gemm_nr; }

index_t packed_weight_floats(index_t n, index_t k, Isa isa) {
  const index_t nr = gemm_panel_width(isa);
  return (n + nr - 1) / nr * nr * k;
}

PackedWeightView pack_weight_into(ConstMatrix w, bool w_is_kn, Isa isa, std::span<float> dst) {
  constexpr const char* op = "pack_weight";
  detail::check_matrix(op, "weight", w);
  const index_t n = w_is_kn ? w.cols : w.rows;
  const index_t k = w_is_kn ? w.rows : w.cols;
  const int nr = gemm_panel_width(isa);
  const index_t need = packed_weight_floats(n, k, isa);
  ATTEND_OP_CHECK(static_cast<index_t>(dst.size()) >= need, op, "destination holds ", dst.size(),
                  " floats, packing [", n, ", ", k, "] needs ", need);
  ATTEND_OP_CHECK(need == 0 || reinterpret_cast<std::uintptr_t>(dst.data()) % 64 == 0, op,
                  "destination must be 64-byte aligned");

  PackedWeightView view{dst.data(), n, k, nr, isa};
  for (index_t p = 0; p < view.panels(); ++p) {
    float* out = dst.data() + p * k * nr;
    const index_t n0 = p * nr;
    const index_t cols = std::min<index_t>(nr, n - n0);
    if (w_is_kn) {
      for (index_t kk = 0; kk < k; ++kk) {
        const float* src = w.row(kk) + n0;
        float* o = out + kk * nr;
        for (index_t j = 0; j < cols; ++j) o[j] = src[j];
        for (index_t j = cols; j < nr; ++j) o[j] = 0.0f;
      }
    } else {
      for (index_t j = 0; j < nr; ++j) {
        const float* src = j < cols ? w.row(n0 + j) : nullptr;
        for (index_t kk = 0; kk < k; ++kk) out[kk * nr + j] = src ? src[kk] : 0.0f;
      }
    }
  }
  return view;
}

namespace {
AlignedBuffer packing_buffer(ConstMatrix w, bool kn, Isa isa) {
  const index_t n = kn ? w.cols : w.rows, k = kn ? w.rows : w.cols;
  return AlignedBuffer(static_cast<std::size_t>(std::max<index_t>(packed_weight_floats(n, k, isa), 1)) *
                       sizeof(float));
}
std::span<float> as_span(const AlignedBuffer& b) { return {b.floats(), b.bytes() / sizeof(float)}; }
}  // namespace

PackedWeight pack_weight(ConstMatrix w, Isa isa) {
  AlignedBuffer buffer = packing_buffer(w, false, isa);
  const PackedWeightView view = pack_weight_into(w, false, isa, as_span(buffer));
  return PackedWeight(std::move(buffer), view);
}

PackedWeight pack_weight_kn(ConstMatrix w, Isa isa) {
  AlignedBuffer buffer = packing_buffer(w, true, isa);
  const PackedWeightView view = pack_weight_into(w, true, isa, as_span(buffer));
  return PackedWeight(std::move(buffer), view);
}

}  // namespace attend::ops
