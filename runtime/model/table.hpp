// A model's lookup tables: token embeddings in the compute type's narrow type, position
// tables in fp32.
//
// The token embeddings are the largest weights outside the GEMMs (a 32000 × 512 table is
// 62.5 MiB in fp32), yet each token reads one row of them: kept as bf16 or int8 they
// cost a half or a quarter of that, and widening the row while gathering it costs
// nothing next to the GEMMs (ops/embedding.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "attend/ops/embedding.hpp"

namespace attend::runtime {

class Table {
 public:
  Table() = default;
  // fp32, owned by the model.
  Table(std::vector<float> owned, std::int64_t rows, std::int64_t cols);
  // fp32 read in place from the model file (F32 data, 4-byte aligned): a 32000 × 512
  // embedding is then never copied, and only the rows actually looked up become
  // resident. The caller keeps the file mapped.
  Table(const float* in_place, std::int64_t rows, std::int64_t cols);
  // bf16 bits, [rows, cols] packed.
  Table(std::vector<std::uint16_t> bf16, std::int64_t rows, std::int64_t cols);
  // CTranslate2's int8: q [rows, cols] packed, w ≈ q / ct2_scales[r] (each > 0). Kept
  // as stored, with factor = 1 / scale per row: the fp32 CTranslate2 multiplies q by.
  Table(std::vector<std::int8_t> q, const float* ct2_scales, std::int64_t rows, std::int64_t cols);

  // An fp32 [rows, cols] matrix as a table of `type`: copied (f32), rounded to nearest
  // even (bf16), or quantized per row as CTranslate2 quantizes (s8: scale = 127 / max|w_row|,
  // q = round(w·scale)), so a table quantized here and one CTranslate2 (or `attend
  // convert`) saved quantized hold the same bits. Throws attend::Error on a non-finite
  // value (s8).
  static Table narrowed(ops::ConstMatrix w, ops::WeightType type);

  ops::EmbeddingTable view() const { return view_; }
  // The fp32 table (position tables). Throws attend::Error if the table is narrow.
  ops::ConstMatrix f32() const;
  ops::WeightType type() const { return view_.type; }
  std::int64_t rows() const { return view_.rows; }
  bool empty() const { return view_.data == nullptr; }
  // What the model holds: elements and factors (0 for a table read in place).
  std::size_t owned_bytes() const;

 private:
  std::vector<float> floats_;  // f32 elements, or the s8 factors
  std::vector<std::uint16_t> bf16_;
  std::vector<std::int8_t> s8_;
  ops::EmbeddingTable view_;
};

}  // namespace attend::runtime
