// CTranslate2's model.bin variables presented as attend tensors, for every model kind
// read from one (the encoder-decoders of ct2_model.hpp, the encoders of
// ct2_encoder.hpp): float32/16 and int8 read in place (int8 with its per-row scales,
// copied out), int16 dequantized with its scale into memory of our own.
#pragma once

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attend/error.hpp"
#include "formats/ct2_model_file.hpp"
#include "formats/mapped_file.hpp"
#include "formats/tensor_source.hpp"

namespace attend::runtime {

class Ct2TensorSource final : public TensorSource {
 public:
  Ct2TensorSource(std::shared_ptr<MappedFile> file, Ct2ModelFile model) : file_(std::move(file)), model_(std::move(model)) {}

  void add(const std::string& attend, const Ct2Variable& v) {
    TensorRecord r;
    r.name = attend;
    r.shape = v.shape;
    r.offset = v.offset;
    switch (v.dtype) {
      case Ct2DType::f32: r.dtype = DType::f32, r.data = v.data; break;
      case Ct2DType::f16: r.dtype = DType::f16, r.data = v.data; break;
      case Ct2DType::bf16: r.dtype = DType::bf16, r.data = v.data; break;
      case Ct2DType::i8:
        r.dtype = DType::i8, r.data = v.data;
        owned_scales_.push_back(row_scales(v));
        r.scales = owned_scales_.back().data();
        break;
      case Ct2DType::i16: {
        owned_.push_back(dequantize(v));
        r.dtype = DType::f32;
        r.data = reinterpret_cast<const std::byte*>(owned_.back().data());
        int16_dequantized_ = true;
        break;
      }
      case Ct2DType::i32: throw error_of(origin(), ": variable '", v.name, "' is int32, not a weight type");
    }
    order_.push_back(attend);
    records_[attend] = std::move(r);
  }

  const std::string& origin() const override { return file_->path(); }
  const TensorRecord* find(const std::string& name) const override {
    const auto it = records_.find(name);
    return it == records_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const override { return order_; }
  void release(const TensorRecord& t) const override {
    if (t.offset) file_->release(t.offset, t.bytes());
  }
  void evict(const TensorRecord& t) const override { release(t); }  // mapped (owned ones have no offset)
  void evict_all() const override { file_->release(0, file_->size()); }
  std::size_t total_bytes() const override { return file_->size(); }
  bool int16_dequantized() const { return int16_dequantized_; }

 private:
  // The scale of each row (w = q / scale[row]): int8 stores one per row; int16 one for
  // all, 1000 when the file predates saved int16 scales. Each must be finite and > 0.
  std::vector<float> row_scales(const Ct2Variable& v) const {
    const Ct2Variable* scale = model_.find(v.name + "_scale");
    const std::int64_t rows = v.shape.empty() ? 1 : v.shape[0];
    std::vector<float> row_scale(static_cast<size_t>(rows), 1000.0f);
    if (scale == nullptr && v.dtype == Ct2DType::i8)
      throw error_of(origin(), ": int8 variable '", v.name, "' has no '", v.name, "_scale'");
    if (scale != nullptr) {
      if (scale->dtype != Ct2DType::f32) throw error_of(origin(), ": '", scale->name, "' must be float32");
      if (scale->is_scalar()) {
        std::fill(row_scale.begin(), row_scale.end(), static_cast<float>(scale->scalar(origin())));
      } else if (scale->elements() == rows) {
        std::memcpy(row_scale.data(), scale->data, row_scale.size() * 4);
      } else {
        throw error_of(origin(), ": '", scale->name, "' has shape ", scale->shape_string(), ", expected [", rows, "] or a scalar");
      }
    }
    for (std::int64_t r = 0; r < rows; ++r)
      if (!(std::isfinite(row_scale[r]) && row_scale[r] > 0.0f))
        throw error_of(origin(), ": scale of row ", r, " of '", v.name, "' is ", row_scale[r], ", expected a finite number > 0");
    return row_scale;
  }

  // int16 as fp32: q / scale.
  std::vector<float> dequantize(const Ct2Variable& v) const {
    const std::vector<float> row_scale = row_scales(v);
    const std::int64_t rows = v.shape.empty() ? 1 : v.shape[0], n = v.elements(), cols = rows ? n / rows : 0;
    std::vector<float> out(static_cast<size_t>(n));
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        std::int16_t q;
        std::memcpy(&q, v.data + 2 * (r * cols + c), 2);
        out[r * cols + c] = q / row_scale[r];
      }
    }
    return out;
  }

  std::shared_ptr<MappedFile> file_;
  Ct2ModelFile model_;
  std::map<std::string, TensorRecord> records_;
  std::vector<std::string> order_;
  std::vector<std::vector<float>> owned_, owned_scales_;
  bool int16_dequantized_ = false;
};

}  // namespace attend::runtime
