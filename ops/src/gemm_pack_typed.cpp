// Packing bf16 and s8 weights (f32: gemm_pack.cpp), and reading any packing back.
//
//   bf16  panels of [K/2][NR][2]: one 32-bit lane per (k pair, column), the even k in
//         the low half (vdpbf16ps's operand layout).
//   s8    panels of [K/4][NR][4] q + the kernel's weight offset (u8 = q + 128 for
//         vpdpbusd, s8 q for the others: gemm_s8_microkernel.hpp says why), then the
//         per-column dequantization factors: panels·NR floats, zero past N, 64-byte
//         aligned.
// K is zero-padded to the group (pair, quad); padding holds zeros (q = 0).
// Done once per weight, at model load.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attend/ops/bf16.hpp"
#include "attend/ops/gemm.hpp"
#include "check.hpp"
#include "gemm_driver.hpp"

namespace attend::ops {
namespace {

// The view of an [n, k] packing of `type` for `isa` at `data` (scales placed after the
// panels), and the bytes it spans.
PackedWeightView layout(index_t n, index_t k, WeightType type, Isa isa, const void* data, std::size_t* bytes) {
  PackedWeightView v{data, n, k, gemm_panel_width(isa, type), isa, type, nullptr};
  const std::size_t panels_bytes = v.panel_bytes() * static_cast<std::size_t>(v.panels());
  std::size_t total = panels_bytes;
  if (type == WeightType::s8) {
    const std::size_t scales_at = (panels_bytes + 63) / 64 * 64;
    total = scales_at + static_cast<std::size_t>(v.panels() * v.nr) * sizeof(float);
    if (data) v.scales = reinterpret_cast<const float*>(static_cast<const std::byte*>(data) + scales_at);
  }
  if (bytes) *bytes = total;
  return v;
}

PackedWeightView allocate(index_t n, index_t k, WeightType type, Isa isa, AlignedBuffer& buffer) {
  std::size_t bytes = 0;
  layout(n, k, type, isa, nullptr, &bytes);
  buffer = AlignedBuffer(std::max<std::size_t>(bytes, 1), AlignedBuffer::Pages::shared_huge);
  return layout(n, k, type, isa, buffer.data(), nullptr);
}

// Fills v's panels in memory order, [panels][k groups][nr][group], with
// element(column, k) inside the weight and `padding` outside.
template <class T, class Element>
void write_panels(const PackedWeightView& v, index_t group, T padding, const Element& element) {
  T* out = static_cast<T*>(const_cast<void*>(v.data));
  const index_t nr = v.nr, kp = v.k_padded();
  for (index_t p = 0; p < v.panels(); ++p)
    for (index_t g = 0; g < kp / group; ++g)
      for (index_t j = 0; j < nr; ++j)
        for (index_t i = 0; i < group; ++i) {
          const index_t col = p * nr + j, kk = group * g + i;
          *out++ = col < v.n && kk < v.k ? element(col, kk) : padding;
        }
}

// Writes the s8 panels of q(j, kk) ∈ int8, −128 read as −127 (as q + the kernels' weight
// offset), and the factors.
template <class Q>
void write_s8(const PackedWeightView& v, const Q& q, const std::vector<float>& factors) {
  const int offset = detail::kernels_for(v.isa).s8.s8_weight_offset;
  write_panels<std::uint8_t>(v, 4, static_cast<std::uint8_t>(offset), [&](index_t j, index_t kk) {
    return static_cast<std::uint8_t>(std::max<int>(q(j, kk), -127) + offset);
  });
  auto* scales = const_cast<float*>(v.scales);
  std::fill_n(scales, v.panels() * v.nr, 0.0f);
  std::copy(factors.begin(), factors.end(), scales);
}

void check_s8_shape(const char* op, index_t k) {
  ATTEND_OP_CHECK(k <= kMaxS8K, op, "K = ", k, " exceeds ", kMaxS8K,
                  ", the most an s8 GEMM sums exactly in int32");
}

void write_bf16(const PackedWeightView& v, ConstMatrix w) {
  write_panels<std::uint16_t>(v, 2, 0, [&](index_t j, index_t kk) { return bf16_from_float(w(j, kk)); });
}

// CTranslate2's quantization of each row: q = round(w·127/amax), amax = max|w_row| (an
// all-zero row: q = 0, amax = 0). Throws on a non-finite weight.
void quantize_rows(const char* op, ConstMatrix w, std::int8_t* q, float* amax) {
  for (index_t j = 0; j < w.rows; ++j) {
    float m = 0.0f;
    for (index_t kk = 0; kk < w.cols; ++kk) {
      ATTEND_OP_CHECK(std::isfinite(w(j, kk)), op, "weight[", j, ", ", kk, "] = ", w(j, kk),
                      " cannot be quantized to s8");
      m = std::max(m, std::abs(w(j, kk)));
    }
    const float scale = m > 0.0f ? 127.0f / m : 0.0f;
    for (index_t kk = 0; kk < w.cols; ++kk) q[j * w.cols + kk] = static_cast<std::int8_t>(std::nearbyint(w(j, kk) * scale));
    amax[j] = m;
  }
}

}  // namespace

std::size_t packed_weight_bytes(index_t n, index_t k, WeightType type, Isa isa) {
  std::size_t bytes = 0;
  layout(n, k, type, isa, nullptr, &bytes);
  return bytes;
}

PackedWeight pack_weight(ConstMatrix w, WeightType type, Isa isa) {
  constexpr const char* op = "pack_weight";
  if (type == WeightType::f32) return pack_weight(w, isa);
  detail::check_matrix(op, "weight", w);
  AlignedBuffer buffer;
  if (type == WeightType::bf16) {
    const PackedWeightView v = allocate(w.rows, w.cols, WeightType::bf16, isa, buffer);
    write_bf16(v, w);
    return PackedWeight(std::move(buffer), v);
  }
  check_s8_shape(op, w.cols);
  // Through CTranslate2's stored form (q, scale = 127/amax), so a model quantized at load
  // and the same model saved quantized (attend convert) pack the same bits.
  std::vector<std::int8_t> q(static_cast<std::size_t>(w.rows * w.cols));
  std::vector<float> scales(static_cast<std::size_t>(w.rows));
  quantize_weight_s8(w, q.data(), scales.data());
  return pack_weight_s8(MatrixView<const std::int8_t>(q.data(), w.rows, w.cols), scales.data(), isa);
}

void quantize_weight_s8(ConstMatrix w, std::int8_t* q, float* ct2_scales) {
  constexpr const char* op = "quantize_weight_s8";
  detail::check_matrix(op, "weight", w);
  quantize_rows(op, w, q, ct2_scales);
  for (index_t j = 0; j < w.rows; ++j) ct2_scales[j] = ct2_scales[j] > 0.0f ? 127.0f / ct2_scales[j] : 1.0f;
}

void round_weight_bf16(ConstMatrix w, std::uint16_t* bits) {
  detail::check_matrix("round_weight_bf16", "weight", w);
  for (index_t j = 0; j < w.rows; ++j)
    for (index_t kk = 0; kk < w.cols; ++kk) bits[j * w.cols + kk] = bf16_from_float(w(j, kk));
}

PackedWeight pack_weight_s8(MatrixView<const std::int8_t> q, const float* ct2_scales, Isa isa) {
  constexpr const char* op = "pack_weight_s8";
  detail::check_matrix(op, "q", q);
  check_s8_shape(op, q.cols);
  ATTEND_OP_CHECK(ct2_scales != nullptr || q.rows == 0, op, "scales are null");
  std::vector<float> factors(static_cast<std::size_t>(q.rows));
  for (index_t j = 0; j < q.rows; ++j) {
    const float s = ct2_scales[j];
    ATTEND_OP_CHECK(s > 0.0f, op, "scale[", j, "] = ", s, " is not positive (w = q / scale)");
    factors[j] = 1.0f / s;  // +inf (an all-zero row) gives 0
  }
  AlignedBuffer buffer;
  const PackedWeightView v = allocate(q.rows, q.cols, WeightType::s8, isa, buffer);
  write_s8(v, [&](index_t j, index_t kk) { return q(j, kk); }, factors);
  return PackedWeight(std::move(buffer), v);
}

void unpack_weight(const PackedWeightView& b, Matrix w) {
  constexpr const char* op = "unpack_weight";
  detail::check_matrix(op, "w", w);
  ATTEND_OP_CHECK(w.rows == b.n && w.cols == b.k, op, "w is [", w.rows, ", ", w.cols, "], the weight is [", b.n,
                  ", ", b.k, "]");
  const index_t nr = b.nr;
  const int s8_offset = b.type == WeightType::s8 ? detail::kernels_for(b.isa).s8.s8_weight_offset : 0;
  for (index_t j = 0; j < b.n; ++j) {
    const std::byte* panel = b.panel(j / nr);
    const index_t col = j % nr;
    for (index_t kk = 0; kk < b.k; ++kk) {
      switch (b.type) {
        case WeightType::f32:
          w(j, kk) = reinterpret_cast<const float*>(panel)[kk * nr + col];
          break;
        case WeightType::bf16:
          w(j, kk) = float_from_bf16(reinterpret_cast<const std::uint16_t*>(panel)[(kk / 2 * nr + col) * 2 + kk % 2]);
          break;
        case WeightType::s8: {
          const int u = std::to_integer<int>(panel[(kk / 4 * nr + col) * 4 + kk % 4]);
          w(j, kk) = static_cast<float>(static_cast<std::int8_t>(u - s8_offset)) * b.scales[j];
          break;
        }
      }
    }
  }
}

}  // namespace attend::ops
