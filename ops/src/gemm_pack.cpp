// Packing an f32 weight into GEMM panels: N cut into NR-wide panels (the last
// zero-padded), each panel stored k-major ([K][NR]) so the micro-kernel reads one
// aligned vector row per k. Done once per weight, at model load. (bf16 and s8:
// gemm_pack_typed.cpp.)
#include <algorithm>
#include <cstdint>
#include <utility>

#include "attend/ops/gemm.hpp"
#include "check.hpp"
#include "gemm_driver.hpp"

namespace attend::ops {

int gemm_panel_width(Isa isa, WeightType type) { return detail::gemm_kernels_of(detail::kernels_for(isa), type).nr; }
const char* gemm_kernel_name(Isa isa, WeightType type) {
  return detail::gemm_kernels_of(detail::kernels_for(isa), type).name;
}

const char* weight_type_name(WeightType t) {
  switch (t) {
    case WeightType::bf16: return "bf16";
    case WeightType::s8: return "s8";
    case WeightType::f32: break;
  }
  return "f32";
}

index_t PackedWeightView::k_padded() const {
  const index_t group = type == WeightType::s8 ? 4 : type == WeightType::bf16 ? 2 : 1;
  return (k + group - 1) / group * group;
}

std::size_t PackedWeightView::panel_bytes() const {
  return static_cast<std::size_t>(k_padded() * nr) * weight_type_bytes(type);
}

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

  PackedWeightView view{dst.data(), n, k, nr, isa, WeightType::f32, nullptr};
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
                           sizeof(float),
                       AlignedBuffer::Pages::shared_huge);
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
