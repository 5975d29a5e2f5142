#include "formats/hf/tensor_map.hpp"

#include <algorithm>
#include <cstring>

#include "attend/error.hpp"

namespace attend::runtime {

const TensorRecord& TensorMap::stored(const std::string& name) const {
  const TensorRecord* t = stored_->find(name);
  if (t == nullptr) throw error_of(stored_->origin(), ": missing tensor '", name, "'");
  return *t;
}

TensorMap::Entry& TensorMap::insert(const std::string& name) {
  if (entries_.count(name)) throw error_of("internal: tensor '", name, "' mapped twice");
  order_.push_back(name);
  return entries_[name];
}

void TensorMap::alias(const std::string& name, const std::string& stored_name, std::vector<std::int64_t> shape) {
  const TensorRecord& t = stored(stored_name);
  Entry& e = insert(name);
  e.record = t;
  e.record.name = name;
  if (!shape.empty()) {
    TensorRecord reshaped;
    reshaped.shape = shape;
    if (reshaped.elements() != t.elements())
      throw error_of(stored_->origin(), ": tensor '", stored_name, "' has shape ", t.shape_string(), ", expected ",
                     reshaped.shape_string(), " (or the same elements)");
    e.record.shape = std::move(shape);
  }
  e.parts = {stored_name};
  used_.insert(stored_name);
}

void TensorMap::fused(const std::string& name, const std::vector<std::string>& stored_names) {
  const TensorRecord& first = stored(stored_names.at(0));
  std::string list;
  for (const std::string& n : stored_names) list += (list.empty() ? "'" : ", '") + n + "'";
  for (const std::string& n : stored_names) {
    const TensorRecord& p = stored(n);
    if (p.dtype != first.dtype || p.shape.empty() || p.shape.size() != first.shape.size() ||
        !std::equal(p.shape.begin() + 1, p.shape.end(), first.shape.begin() + 1))
      throw error_of(stored_->origin(), ": tensors ", list, " differ in dtype or shape (", dtype_name(p.dtype), " ", p.shape_string(),
                     " vs ", dtype_name(first.dtype), " ", first.shape_string(), "); attend fuses them into one projection");
  }
  Entry& e = insert(name);
  e.record = first;
  e.record.name = name;
  e.record.shape[0] = 0;
  for (const std::string& n : stored_names) e.record.shape[0] += stored(n).shape[0];
  e.record.data = nullptr, e.record.offset = 0, e.record.scales = nullptr;
  e.parts = stored_names;
  used_.insert(stored_names.begin(), stored_names.end());
}

void TensorMap::computed(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values) {
  Entry& e = insert(name);
  e.record.name = name;
  e.record.dtype = DType::f32;
  e.record.shape = std::move(shape);
  if (static_cast<std::size_t>(e.record.elements()) != values.size()) throw error_of("internal: computed tensor '", name, "' mis-sized");
  e.owned.resize(values.size() * sizeof(float));
  std::memcpy(e.owned.data(), values.data(), e.owned.size());
  e.record.data = e.owned.data();
}

std::vector<std::string> TensorMap::unused(bool (*ignorable)(const std::string&)) const {
  std::vector<std::string> out;
  for (const std::string& n : stored_->names())
    if (!used_.count(n) && !(ignorable && ignorable(n))) out.push_back(n);
  return out;
}

const TensorRecord* TensorMap::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second.record;
}

void TensorMap::acquire(const TensorRecord& t) const {
  Entry& e = entries_.at(t.name);
  if (e.parts.size() < 2 || e.record.data != nullptr) return;
  e.owned.resize(e.record.bytes());
  std::size_t at = 0;
  for (const std::string& n : e.parts) {
    const TensorRecord& p = stored(n);
    std::copy_n(p.data, p.bytes(), e.owned.data() + at);
    at += p.bytes();
  }
  e.record.data = e.owned.data();
}

void TensorMap::release(const TensorRecord& t) const {
  Entry& e = entries_.at(t.name);
  for (const std::string& n : e.parts) stored_->file_of(n).release(stored(n));
  if (e.parts.size() > 1) {
    std::vector<std::byte>().swap(e.owned);
    e.record.data = nullptr;
  }
}

void TensorMap::evict(const TensorRecord& t) const {
  const Entry& e = entries_.at(t.name);
  if (e.parts.size() == 1) stored_->file_of(e.parts[0]).evict(stored(e.parts[0]));  // fused and computed: memory of ours
}

}  // namespace attend::runtime
