#include "model/table.hpp"

#include <algorithm>

#include "attend/error.hpp"
#include "attend/ops/gemm.hpp"

namespace attend::runtime {

Table::Table(std::vector<float> owned, std::int64_t rows, std::int64_t cols)
    : floats_(std::move(owned)), view_(ops::ConstMatrix(floats_.data(), rows, cols)) {}

Table::Table(const float* in_place, std::int64_t rows, std::int64_t cols)
    : view_(ops::ConstMatrix(in_place, rows, cols)) {}

Table::Table(std::vector<std::uint16_t> bf16, std::int64_t rows, std::int64_t cols)
    : bf16_(std::move(bf16)), view_(ops::MatrixView<const std::uint16_t>(bf16_.data(), rows, cols)) {}

Table::Table(std::vector<std::int8_t> q, const float* ct2_scales, std::int64_t rows, std::int64_t cols)
    : floats_(static_cast<std::size_t>(rows)), s8_(std::move(q)) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float s = ct2_scales[r];
    if (!(s > 0.0f)) throw error_of("int8 table: scale of row ", r, " is ", s, ", expected a number > 0 (w = q / scale)");
    floats_[static_cast<std::size_t>(r)] = 1.0f / s;  // CTranslate2's dequantization factor
  }
  view_ = ops::EmbeddingTable(ops::MatrixView<const std::int8_t>(s8_.data(), rows, cols), floats_.data());
}

Table Table::narrowed(ops::ConstMatrix w, ops::WeightType type) {
  const auto n = static_cast<std::size_t>(w.rows * w.cols);
  switch (type) {
    case ops::WeightType::bf16: {
      std::vector<std::uint16_t> bits(n);
      ops::round_weight_bf16(w, bits.data());
      return Table(std::move(bits), w.rows, w.cols);
    }
    case ops::WeightType::s8: {
      std::vector<std::int8_t> q(n);
      std::vector<float> ct2_scales(static_cast<std::size_t>(w.rows));
      ops::quantize_weight_s8(w, q.data(), ct2_scales.data());
      return Table(std::move(q), ct2_scales.data(), w.rows, w.cols);
    }
    case ops::WeightType::f32: break;
  }
  std::vector<float> copy(n);
  for (std::int64_t r = 0; r < w.rows; ++r) std::copy(w.row(r), w.row(r) + w.cols, copy.begin() + r * w.cols);
  return Table(std::move(copy), w.rows, w.cols);
}

ops::ConstMatrix Table::f32() const {
  if (view_.type != ops::WeightType::f32)
    throw error_of("internal: a ", ops::weight_type_name(view_.type), " table read as fp32");
  return {static_cast<const float*>(view_.data), view_.rows, view_.cols, view_.ld};
}

std::size_t Table::owned_bytes() const {
  return floats_.size() * sizeof(float) + bf16_.size() * sizeof(std::uint16_t) + s8_.size();
}

}  // namespace attend::runtime
