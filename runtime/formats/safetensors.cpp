#include "formats/safetensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "attend/error.hpp"
#include "formats/json_errors.hpp"

namespace attend::runtime {
namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;  // as the reference implementation

DType parse_dtype(const std::string& s, const std::string& origin, const std::string& name) {
  if (s == "F32") return DType::f32;
  if (s == "F16") return DType::f16;
  if (s == "BF16") return DType::bf16;
  if (s == "I8") return DType::i8;
  throw error_of(origin, ": tensor '", name, "' has dtype '", s, "'; attend reads F32, F16, BF16 and I8");
}

std::uint64_t as_count(const nlohmann::json& v, const std::string& origin, const std::string& name,
                       const char* what) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw error_of(origin, ": tensor '", name, "': ", what, " must be a non-negative integer, got ", v.dump());
  return v.get<std::uint64_t>();
}

// Each I8 tensor 'N' comes with 'N_scale': F32 [rows], w[r] ≈ q[r] / scale[r]
// (CTranslate2's convention). The scales are copied out (the data may be unaligned),
// checked finite and > 0, attached to N, and the '_scale' entries leave the list.
void attach_int8_scales(SafetensorsHeader& h, const std::string& origin) {
  for (auto& [name, t] : h.tensors) {
    if (t.dtype != DType::i8) continue;
    const std::string scale_name = name + "_scale";
    const auto it = h.tensors.find(scale_name);
    if (it == h.tensors.end()) throw error_of(origin, ": I8 tensor '", name, "' has no '", scale_name, "' (F32, one per row)");
    const TensorRecord& s = it->second;
    const std::int64_t rows = t.shape.empty() ? 1 : t.shape[0];
    if (s.dtype != DType::f32 || s.shape != std::vector<std::int64_t>{rows})
      throw error_of(origin, ": '", scale_name, "' is ", dtype_name(s.dtype), " ", s.shape_string(), ", expected F32 [", rows, "]");
    std::vector<float>& scales = h.scales[name];
    scales.resize(static_cast<std::size_t>(rows));
    std::memcpy(scales.data(), s.data, scales.size() * sizeof(float));
    for (std::int64_t r = 0; r < rows; ++r)
      if (!(std::isfinite(scales[r]) && scales[r] > 0.0f))
        throw error_of(origin, ": '", scale_name, "'[", r, "] is ", scales[r], ", expected a finite number > 0");
    t.scales = scales.data();
  }
  for (const auto& [name, _] : h.scales) h.tensors.erase(name + "_scale");
}

// Bytes per element of the integer dtypes a Hugging Face file may hold beside its
// weights (buffers such as BERT's position_ids), or 0 for any other dtype.
std::uint64_t integer_dtype_size(const std::string& s) {
  if (s == "I64" || s == "U64") return 8;
  if (s == "I32" || s == "U32") return 4;
  if (s == "I16" || s == "U16") return 2;
  if (s == "U8" || s == "BOOL") return 1;
  return 0;
}

}  // namespace

SafetensorsHeader parse_safetensors(std::span<const std::byte> file, const std::string& origin, bool integer_buffers) {
  if (file.size() < 8) throw error_of(origin, ": too short for a safetensors file (", file.size(), " bytes)");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(file[i]);
  if (n > kMaxHeaderBytes) throw error_of(origin, ": header length ", n, " is implausible (limit ", kMaxHeaderBytes, ")");
  if (n > file.size() - 8)
    throw error_of(origin, ": header length ", n, " runs past the end of the file (", file.size(), " bytes): truncated?");

  const char* text = reinterpret_cast<const char*>(file.data() + 8);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + n);
  } catch (const nlohmann::json::exception& e) {
    throw error_of(origin, ": header is not valid JSON (", json_reason(e), ")");
  }
  if (!header.is_object()) throw error_of(origin, ": header must be a JSON object");

  SafetensorsHeader out;
  out.data_offset = 8 + n;
  const std::size_t data_size = file.size() - out.data_offset;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw error_of(origin, ": __metadata__ must be an object");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw error_of(origin, ": __metadata__ value '", k, "' must be a string");
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
      throw error_of(origin, ": tensor '", name, "' needs dtype, shape and data_offsets");
    if (!entry["dtype"].is_string()) throw error_of(origin, ": tensor '", name, "': dtype must be a string");
    const auto& shape = entry["shape"];
    const auto& offsets = entry["data_offsets"];
    if (!shape.is_array()) throw error_of(origin, ": tensor '", name, "': shape must be an array");
    if (!offsets.is_array() || offsets.size() != 2)
      throw error_of(origin, ": tensor '", name, "': data_offsets must be [begin, end]");

    TensorRecord t;
    t.name = name;
    const std::string dtype = entry["dtype"].get<std::string>();
    const std::uint64_t integer_size = integer_buffers ? integer_dtype_size(dtype) : 0;
    if (integer_size == 0) t.dtype = parse_dtype(dtype, origin, name);
    std::uint64_t elements = 1;
    for (const auto& d : shape) {
      const std::uint64_t dim = as_count(d, origin, name, "a dimension");
      if (dim != 0 && elements > std::numeric_limits<std::int64_t>::max() / 8 / dim)
        throw error_of(origin, ": tensor '", name, "' is impossibly large");
      elements *= dim;
      t.shape.push_back(static_cast<std::int64_t>(dim));
    }
    const std::uint64_t begin = as_count(offsets[0], origin, name, "data_offsets[0]");
    const std::uint64_t end = as_count(offsets[1], origin, name, "data_offsets[1]");
    if (begin > end) throw error_of(origin, ": tensor '", name, "': data_offsets [", begin, ", ", end, "] are reversed");
    if (end > data_size)
      throw error_of(origin, ": tensor '", name, "' ends at byte ", end, " of a ", data_size,
                     "-byte data section: the file is truncated or corrupt");
    const std::uint64_t element_size = integer_size ? integer_size : dtype_size(t.dtype);
    if (end - begin != elements * element_size)
      throw error_of(origin, ": tensor '", name, "' has ", end - begin, " bytes but shape ", t.shape_string(), " of ",
                     integer_size ? dtype : dtype_name(t.dtype), " needs ", elements * element_size);
    if (integer_size) {  // not a weight: named, checked, never read
      out.integer_tensors[name] = dtype;
      ranges.emplace_back(begin, end);
      continue;
    }
    t.offset = out.data_offset + begin;
    t.data = file.data() + t.offset;
    ranges.emplace_back(begin, end);
    out.tensors.emplace(name, std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second && ranges[i].first != ranges[i].second)
      throw error_of(origin, ": tensor data ranges overlap at byte ", ranges[i].first);
  attach_int8_scales(out, origin);
  return out;
}

SafetensorsFile::SafetensorsFile(const std::string& path, bool integer_buffers)
    : SafetensorsFile(std::make_shared<const MappedFile>(path), integer_buffers) {}

SafetensorsFile::SafetensorsFile(std::shared_ptr<const MappedFile> file, bool integer_buffers)
    : file_(std::move(file)), header_(parse_safetensors({file_->data(), file_->size()}, file_->path(), integer_buffers)) {}

const TensorRecord* SafetensorsFile::find(const std::string& name) const {
  const auto it = header_.tensors.find(name);
  return it == header_.tensors.end() ? nullptr : &it->second;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : header_.tensors) out.push_back(name);
  return out;
}

}  // namespace attend::runtime
