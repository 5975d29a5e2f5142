#include "formats/typed_tensor_source.hpp"

#include <cstring>

#include "attend/error.hpp"
#include "attend/ops/gemm.hpp"

namespace attend::runtime {

bool is_gemm_weight(const std::string& name) {
  for (const char* suffix : {"_proj.weight", ".fc1.weight", ".fc1_noact.weight", ".fc2.weight"})
    if (name.ends_with(suffix)) return true;
  return name == "output_projection.weight";
}

bool is_embedding_table(const std::string& name) {
  return name == "encoder.embed_tokens.weight" || name == "decoder.embed_tokens.weight";
}

TypedTensorSource::TypedTensorSource(std::shared_ptr<const TensorSource> base, DType type)
    : base_(std::move(base)), type_(type) {
  if (type != DType::i8 && type != DType::bf16 && type != DType::f32)
    throw error_of("internal: GEMM weights and tables cannot be converted to ", dtype_name(type));
  // Converted once, up front: find() hands out records that must stay valid.
  for (const std::string& name : base_->names()) {
    const TensorRecord* t = base_->find(name);
    const bool typed = is_gemm_weight(name) || is_embedding_table(name);
    if (typed && t->shape.size() == 2 && t->dtype != type_) converted_.emplace(name, convert(*t));
  }
}

const TensorRecord* TypedTensorSource::find(const std::string& name) const {
  if (const auto it = converted_.find(name); it != converted_.end()) return &it->second.record;
  return base_->find(name);
}

TypedTensorSource::Converted TypedTensorSource::convert(const TensorRecord& t) const {
  Converted c;
  c.record = t;
  c.record.dtype = type_;
  c.record.offset = 0;
  c.record.scales = nullptr;
  const std::vector<float> w = to_f32(t);
  const ops::ConstMatrix m(w.data(), t.shape[0], t.shape[1]);
  switch (type_) {
    case DType::i8:
      c.data.resize(w.size());
      c.scales.resize(static_cast<std::size_t>(t.shape[0]));
      try {
        ops::quantize_weight_s8(m, reinterpret_cast<std::int8_t*>(c.data.data()), c.scales.data());
      } catch (const Error& e) {
        throw error_of(origin(), ": tensor '", t.name, "': ", e.what());
      }
      break;
    case DType::bf16:
      c.data.resize(w.size() * 2);
      ops::round_weight_bf16(m, reinterpret_cast<std::uint16_t*>(c.data.data()));
      break;
    default:
      c.data.resize(w.size() * 4);
      std::memcpy(c.data.data(), w.data(), c.data.size());
      break;
  }
  // Vectors keep their buffers when the map moves them, so these stay valid.
  c.record.data = c.data.data();
  if (!c.scales.empty()) c.record.scales = c.scales.data();
  return c;
}

}  // namespace attend::runtime
