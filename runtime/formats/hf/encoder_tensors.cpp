#include "formats/hf/encoder_tensors.hpp"

#include <algorithm>

#include "attend/error.hpp"

namespace attend::runtime {

const SafetensorsFile& EncoderTensors::open(const std::string& path) {
  files_.push_back(std::make_unique<SafetensorsFile>(path, /*integer_buffers=*/true));
  return *files_.back();
}

void EncoderTensors::alias(const std::string& name, const SafetensorsFile& file, const TensorRecord& stored) {
  Entry& e = entries_[name];
  e.record = stored;
  e.record.name = name;
  e.stored = stored.name;
  e.file = &file;
  order_.push_back(name);
}

void EncoderTensors::fused(const std::string& name, const SafetensorsFile& file, std::vector<const TensorRecord*> parts) {
  Entry& e = entries_[name];
  e.record = *parts[0];
  e.record.name = name;
  e.record.shape[0] = 0;
  for (const TensorRecord* p : parts) e.record.shape[0] += p->shape[0];
  e.record.data = nullptr, e.record.offset = 0;
  e.file = &file;
  for (const TensorRecord* p : parts) e.stored += (e.stored.empty() ? "" : " + ") + p->name;
  e.parts = std::move(parts);
  order_.push_back(name);
}

const TensorRecord* EncoderTensors::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second.record;
}

std::string EncoderTensors::where(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) return TensorSource::where(name);
  return it->second.file->origin() + ": " + it->second.stored;
}

std::size_t EncoderTensors::total_bytes() const {
  std::size_t n = 0;
  for (const auto& f : files_) n += f->total_bytes();
  return n;
}

void EncoderTensors::acquire(const TensorRecord& t) const {
  Entry& e = entries_.at(t.name);
  if (e.parts.empty() || e.record.data != nullptr) return;
  e.owned.resize(e.record.bytes());
  std::size_t at = 0;
  for (const TensorRecord* p : e.parts) {
    std::copy_n(p->data, p->bytes(), e.owned.data() + at);
    at += p->bytes();
  }
  e.record.data = e.owned.data();
}

void EncoderTensors::release(const TensorRecord& t) const {
  Entry& e = entries_.at(t.name);
  if (e.parts.empty()) {
    e.file->release(e.record);
    return;
  }
  for (const TensorRecord* p : e.parts) e.file->release(*p);
  std::vector<std::byte>().swap(e.owned);
  e.record.data = nullptr;
}

void EncoderTensors::evict_all() const {
  for (const auto& f : files_) f->evict_all();
}

void EncoderTensors::evict(const TensorRecord& t) const {
  const Entry& e = entries_.at(t.name);
  if (e.parts.empty()) e.file->evict(e.record);  // (a fused tensor is memory of ours, read once)
}

const TensorRecord& EncoderNames::stored(const std::string& name) const {
  const TensorRecord* t = file_.find(name);
  if (t == nullptr) throw error_of(file_.origin(), ": missing tensor '", name, "'");
  return *t;
}

void EncoderNames::map(const std::string& attend, const std::string& stored_name) {
  out_.alias(attend, file_, stored(stored_name));
  used_.insert(stored_name);
}

void EncoderNames::linear(const std::string& attend, const std::string& stored_name, bool bias) {
  map(attend + ".weight", stored_name + ".weight");
  if (bias) map(attend + ".bias", stored_name + ".bias");
}

void EncoderNames::norm(const std::string& attend, const std::string& stored_name) {
  const bool legacy = !has(stored_name + ".weight") && has(stored_name + ".gamma");
  map(attend + ".weight", stored_name + (legacy ? ".gamma" : ".weight"));
  map(attend + ".bias", stored_name + (legacy ? ".beta" : ".bias"));
}

void EncoderNames::fused_qkv(const std::string& attend, const std::string& q, const std::string& k, const std::string& v) {
  for (const char* part : {".weight", ".bias"}) {
    std::vector<const TensorRecord*> parts;
    for (const std::string& name : {q, k, v}) {
      parts.push_back(&stored(name + part));
      used_.insert(name + part);
    }
    for (const TensorRecord* p : parts)
      if (p->dtype != parts[0]->dtype || p->shape.size() != parts[0]->shape.size() || p->shape.empty() ||
          (p->shape.size() == 2 && p->shape[1] != parts[0]->shape[1]))
        throw error_of(file_.origin(), ": tensors '", q, part, "', '", k, part, "' and '", v, part,
                       "' differ in dtype or shape; attend fuses them into one projection");
    out_.fused(attend + part, file_, std::move(parts));
  }
}

void EncoderNames::reject_unused(const std::function<bool(const std::string&)>& ignorable, const std::string& what) const {
  std::vector<std::string> extra;
  for (const std::string& n : file_.names())
    if (!used_.count(n) && !ignorable(n)) extra.push_back(n);
  if (extra.empty()) return;
  std::string list;
  for (size_t i = 0; i < extra.size() && i < 5; ++i) list += (i ? ", '" : "'") + extra[i] + "'";
  throw error_of(file_.origin(), ": ", extra.size(), " tensor(s) that are not part of ", what, ": ", list,
                 extra.size() > 5 ? ", …" : "");
}

std::vector<std::string> EncoderNames::ignored(const std::function<bool(const std::string&)>& ignorable) const {
  std::vector<std::string> out;
  for (const std::string& n : file_.names())
    if (!used_.count(n) && ignorable(n)) out.push_back(n);
  return out;
}

}  // namespace attend::runtime
