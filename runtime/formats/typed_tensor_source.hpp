// Another source's tensors with the GEMM weights and the token embedding tables in the
// type a compute type holds them in (model/compute_type.hpp): int8 (quantized per row,
// CTranslate2's scheme, with their scales) or bfloat16 (rounded to nearest even); every
// other tensor as it is. `attend convert --compute-type` writes this, so a quantized
// model loads without quantizing.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/tensor_source.hpp"

namespace attend::runtime {

// Whether `name` (attend's tensor names) is a weight the GEMMs multiply by: the
// attention projections, the feed-forward layers, the output projection.
bool is_gemm_weight(const std::string& name);
// Whether `name` is a token embedding table (the position tables stay fp32).
bool is_embedding_table(const std::string& name);

class TypedTensorSource final : public TensorSource {
 public:
  // `type`: DType::i8, DType::bf16 or DType::f32 (F32 dequantizes int8 weights and tables).
  TypedTensorSource(std::shared_ptr<const TensorSource> base, DType type);

  const std::string& origin() const override { return base_->origin(); }
  const TensorRecord* find(const std::string& name) const override;
  std::vector<std::string> names() const override { return base_->names(); }
  std::size_t total_bytes() const override { return base_->total_bytes(); }
  void evict_all() const override { base_->evict_all(); }

 private:
  struct Converted {
    TensorRecord record;
    std::vector<std::byte> data;
    std::vector<float> scales;
  };
  Converted convert(const TensorRecord& t) const;

  std::shared_ptr<const TensorSource> base_;
  DType type_;
  std::map<std::string, Converted> converted_;
};

}  // namespace attend::runtime
