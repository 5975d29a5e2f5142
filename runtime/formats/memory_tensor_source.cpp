#include "formats/memory_tensor_source.hpp"

#include "attend/error.hpp"

namespace attend::runtime {

void MemoryTensorSource::add(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values) {
  Entry e;
  e.record.name = name;
  e.record.dtype = DType::f32;
  e.record.shape = std::move(shape);
  if (static_cast<std::int64_t>(values.size()) != e.record.elements())
    throw error_of(origin_, ": tensor '", name, "' has ", values.size(), " values for shape ", e.record.shape_string());
  e.values = std::move(values);
  if (!tensors_.count(name)) order_.push_back(name);
  auto& slot = tensors_[name] = std::move(e);
  slot.record.data = reinterpret_cast<const std::byte*>(slot.values.data());
}

const TensorRecord* MemoryTensorSource::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second.record;
}

void MemoryTensorSource::release(const TensorRecord& t) const {
  if (!release_after_read_) return;
  const auto it = tensors_.find(t.name);
  if (it == tensors_.end()) return;
  std::vector<float>().swap(it->second.values);
  it->second.record.data = nullptr;
}

std::vector<std::string> MemoryTensorSource::names() const { return order_; }

std::size_t MemoryTensorSource::total_bytes() const {
  std::size_t n = 0;
  for (const auto& [_, e] : tensors_) n += e.record.bytes();
  return n;
}

}  // namespace attend::runtime
