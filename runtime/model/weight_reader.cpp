#include "model/weight_reader.hpp"

#include <cmath>
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "attend/error.hpp"
#include "attend/ops/bf16.hpp"

namespace attend::runtime {

WeightReader::WeightReader(const TensorSource& source, const TensorShapes& expected) : source_(source) {
  for (const auto& [name, shape] : expected) expected_[name] = shape;
}

const TensorRecord& WeightReader::record(const std::string& name) {
  const TensorRecord& t = described(name);
  used_.insert(name);
  source_.acquire(t);
  return t;
}

void WeightReader::check_all() const {
  for (const auto& [name, shape] : expected_) checked(name, shape);
}

std::vector<float> WeightReader::floats(const std::string& name, bool keep_source) {
  const TensorRecord& t = record(name);
  std::vector<float> v = to_f32(t);
  check_finite(name, v.data(), v.size());
  if (!keep_source) source_.release(t);
  return v;
}

Linear WeightReader::linear(const std::string& name, bool bias, const Packing& p) {
  Linear l;
  l.weight = weight(name + ".weight", p);
  if (bias) l.bias = floats(name + ".bias");
  return l;
}

ops::PackedWeight WeightReader::weight(const std::string& name, const Packing& p, bool keep_source) {
  const TensorRecord& t = record(name);
  if (t.dtype == DType::i8 && p.type == ops::WeightType::s8) {
    ops::PackedWeight w = ops::pack_weight_s8(int8_view(t), t.scales, p.isa);
    if (!keep_source) source_.release(t);
    return w;
  }
  std::vector<float> converted;
  ops::PackedWeight w = ops::pack_weight(fp32_matrix(name, t, converted), p.type, p.isa);
  if (!keep_source) source_.release(t);
  return w;
}

ops::ConstMatrix WeightReader::fp32_matrix(const std::string& name, const TensorRecord& t,
                                           std::vector<float>& converted) const {
  const float* data = reinterpret_cast<const float*>(t.data);
  if (t.dtype != DType::f32 || reinterpret_cast<std::uintptr_t>(t.data) % alignof(float) != 0) {
    converted = to_f32(t);
    data = converted.data();
  }
  check_finite(name, data, static_cast<size_t>(t.elements()));
  return {data, t.shape[0], t.shape[1]};
}

LayerNormWeights WeightReader::norm(const std::string& name, NormType type) {
  if (type == NormType::rms_norm) return {floats(name + ".weight"), {}};
  return {floats(name + ".weight"), floats(name + ".bias")};
}

Table WeightReader::table(const std::string& name, ops::WeightType type) {
  const TensorRecord& t = record(name);
  const std::int64_t rows = t.shape[0], cols = t.shape[1];
  const auto n = static_cast<size_t>(t.elements());
  if (t.dtype == DType::f32 && type == ops::WeightType::f32 && reinterpret_cast<std::uintptr_t>(t.data) % alignof(float) == 0) {
    const float* data = reinterpret_cast<const float*>(t.data);
    check_finite(name, data, n);
    source_.evict(t);  // read in place: rows come back into memory as texts use them
    return Table(data, rows, cols);
  }
  try {
    if (t.dtype == DType::i8 && type == ops::WeightType::s8) {
      const auto* q = reinterpret_cast<const std::int8_t*>(t.data);
      Table kept(std::vector<std::int8_t>(q, q + n), t.scales, rows, cols);
      source_.release(t);
      return kept;
    }
    if (t.dtype == DType::bf16 && type == ops::WeightType::bf16) {
      std::vector<std::uint16_t> bits(n);
      std::memcpy(bits.data(), t.data, n * sizeof(std::uint16_t));  // any alignment
      for (size_t i = 0; i < n; ++i) check_finite(name, ops::float_from_bf16(bits[i]), i);
      source_.release(t);
      return Table(std::move(bits), rows, cols);
    }
    if (type == ops::WeightType::f32) return Table(floats(name), rows, cols);  // not F32, or unaligned
    std::vector<float> converted;
    Table narrowed = Table::narrowed(fp32_matrix(name, t, converted), type);
    source_.release(t);
    return narrowed;
  } catch (const Error& e) {
    throw error_of(source_.where(name), ": ", e.what());
  }
}

void WeightReader::check_finite(const std::string& name, const float* v, size_t n) const {
  for (size_t i = 0; i < n; ++i) check_finite(name, v[i], i);
}

void WeightReader::check_finite(const std::string& name, float v, size_t at) const {
  if (!std::isfinite(v)) throw error_of(source_.where(name), " has a non-finite value (", v, ") at index ", at);
}

std::vector<std::string> WeightReader::unexpected() const {
  std::vector<std::string> out;
  for (const std::string& n : source_.names())
    if (!used_.count(n)) out.push_back(n);
  return out;
}

void WeightReader::reject_unexpected() const {
  const auto extra = unexpected();
  if (extra.empty()) return;
  std::string list;
  for (size_t i = 0; i < extra.size() && i < 5; ++i) list += (i ? ", '" : "'") + extra[i] + "'";
  throw error_of(source_.origin(), ": ", extra.size(), " unexpected tensor(s) the configuration does not use: ", list,
                 extra.size() > 5 ? ", …" : "");
}

std::int64_t WeightReader::parameters() const {
  std::int64_t n = 0;
  for (const std::string& name : used_) n += source_.find(name)->elements();
  return n;
}

const TensorRecord& WeightReader::described(const std::string& name) const {
  const auto want = expected_.find(name);
  if (want == expected_.end()) throw error_of("internal: tensor '", name, "' is not implied by the configuration");
  return checked(name, want->second);
}

const TensorRecord& WeightReader::checked(const std::string& name, const std::vector<std::int64_t>& shape) const {
  const TensorRecord* t = source_.find(name);
  if (t == nullptr) throw error_of(source_.origin(), ": missing tensor '", name, "' (expected shape ", shape_string(shape), ")");
  if (t->shape != shape)
    throw error_of(source_.where(name), " has shape ", t->shape_string(), ", the configuration implies ",
                   shape_string(shape));
  return *t;
}

std::string WeightReader::shape_string(const std::vector<std::int64_t>& s) {
  TensorRecord t;
  t.shape = s;
  return t.shape_string();
}

void return_freed_memory(const TensorSource& source) {
  source.evict_all();
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace attend::runtime
