#include "formats/memory_tensor_source.hpp"

#include "attend/error.hpp"

namespace attend::runtime {

MemoryTensorSource::Entry& MemoryTensorSource::insert(const std::string& name, std::vector<std::int64_t> shape) {
  if (!tensors_.count(name)) order_.push_back(name);
  Entry& e = tensors_[name] = Entry{};
  e.record.name = name;
  e.record.dtype = DType::f32;
  e.record.shape = std::move(shape);
  return e;
}

void MemoryTensorSource::add(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values) {
  TensorRecord want;
  want.shape = shape;
  if (static_cast<std::int64_t>(values.size()) != want.elements())
    throw error_of(origin_, ": tensor '", name, "' has ", values.size(), " values for shape ", want.shape_string());
  Entry& e = insert(name, std::move(shape));
  e.values = std::move(values);
  e.record.data = reinterpret_cast<const std::byte*>(e.values.data());
}

void MemoryTensorSource::add_on_demand(const std::string& name, std::vector<std::int64_t> shape, Fill fill) {
  insert(name, std::move(shape)).fill = std::move(fill);
}

void MemoryTensorSource::acquire(const TensorRecord& t) const {
  const auto it = tensors_.find(t.name);
  if (it == tensors_.end() || !it->second.fill || it->second.record.data != nullptr) return;
  Entry& e = it->second;
  e.values.resize(static_cast<std::size_t>(e.record.elements()));
  e.fill(e.values);
  e.record.data = reinterpret_cast<const std::byte*>(e.values.data());
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
