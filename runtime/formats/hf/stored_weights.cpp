#include "formats/hf/stored_weights.hpp"

#include <filesystem>
#include <set>

#include "attend/error.hpp"
#include "formats/json_file.hpp"
#include "formats/hf/torch_bin.hpp"
#include "formats/safetensors.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

std::shared_ptr<TensorSource> open_file(const fs::path& path, std::map<std::string, std::string>& integers) {
  if (path.extension() == ".safetensors") {
    auto f = std::make_shared<SafetensorsFile>(path.string(), /*integer_buffers=*/true);
    integers = f->integer_tensors();
    return f;
  }
  auto f = std::make_shared<TorchBinFile>(path.string());
  integers = f->integer_tensors();
  return f;
}

// The shard files an index names, in order, each checked to be a plain file name of the
// directory (an index cannot point outside it).
std::vector<std::string> shards_of(const JsonFile& index, std::map<std::string, std::string>& weight_map) {
  if (!index.has("weight_map") || !index.value()["weight_map"].is_object()) index.bad("weight_map", "must be an object {tensor: file}");
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (const auto& [name, file] : index.value()["weight_map"].items()) {
    if (!file.is_string()) index.bad("weight_map", "maps '" + name + "' to " + file.dump() + ", not a file name");
    const std::string f = file.get<std::string>();
    if (f.empty() || f.find('/') != std::string::npos || f.find('\\') != std::string::npos || f == "." || f == "..")
      index.bad("weight_map", "maps '" + name + "' to '" + f + "' — shards must be files of the directory");
    weight_map[name] = f;
    if (seen.insert(f).second) files.push_back(f);
  }
  if (files.empty()) index.bad("weight_map", "is empty");
  return files;
}

}  // namespace

std::shared_ptr<const StoredWeights> StoredWeights::open(const std::string& dir) {
  const fs::path d(dir);
  auto w = std::shared_ptr<StoredWeights>(new StoredWeights());
  std::map<std::string, std::string> integers;
  for (const char* single : {"model.safetensors", "pytorch_model.bin"}) {
    if (!fs::exists(d / single)) continue;
    w->origin_ = (d / single).string();
    w->add(open_file(d / single, integers), integers);
    w->description_ = single;
    if (const auto* bin = dynamic_cast<const TorchBinFile*>(w->files_.back().get()))
      w->description_ += std::string(" (torch.save ") + bin->layout() + " format, read without running pickle code)";
    return w;
  }
  for (const char* index_name : {"model.safetensors.index.json", "pytorch_model.bin.index.json"}) {
    if (!fs::exists(d / index_name)) continue;
    const JsonFile index((d / index_name).string());
    w->origin_ = index.path();
    std::map<std::string, std::string> weight_map;
    const std::vector<std::string> files = shards_of(index, weight_map);
    for (const std::string& f : files) {
      if (!fs::exists(d / f)) throw error_of(index.path(), ": names shard '", f, "', which the directory lacks");
      w->add(open_file(d / f, integers), integers);
    }
    for (const auto& [name, file] : weight_map)
      if (!w->where_.count(name) && !w->integer_buffers_.count(name))
        throw error_of(index.path(), ": tensor '", name, "' is mapped to ", file, ", which does not hold it");
    w->description_ = std::string(index_name) + " (" + std::to_string(files.size()) + " shard" + (files.size() > 1 ? "s" : "") + ")";
    return w;
  }
  for (const char* other : {"tf_model.h5", "flax_model.msgpack", "model.ckpt.index"})
    if (fs::exists(d / other))
      throw error_of(dir, ": the weights are in ", other, " only; attend reads model.safetensors (also sharded) and pytorch_model.bin");
  throw error_of(dir, ": no weights: neither model.safetensors, model.safetensors.index.json, pytorch_model.bin nor its index");
}

void StoredWeights::add(std::shared_ptr<TensorSource> file, const std::map<std::string, std::string>& integers) {
  for (const std::string& name : file->names()) {
    if (where_.count(name)) throw error_of(file->origin(), ": tensor '", name, "' is also in ", files_[where_[name]]->origin());
    where_[name] = files_.size();
  }
  integer_buffers_.insert(integers.begin(), integers.end());
  files_.push_back(std::move(file));
}

const TensorRecord* StoredWeights::find(const std::string& name) const {
  const auto it = where_.find(name);
  return it == where_.end() ? nullptr : files_[it->second]->find(name);
}

const TensorSource& StoredWeights::file_of(const std::string& name) const {
  const auto it = where_.find(name);
  if (it == where_.end()) throw error_of("internal: no stored tensor '", name, "'");
  return *files_[it->second];
}

std::vector<std::string> StoredWeights::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : where_) out.push_back(name);
  return out;
}

std::size_t StoredWeights::total_bytes() const {
  std::size_t n = 0;
  for (const auto& f : files_) n += f->total_bytes();
  return n;
}

void StoredWeights::evict_all() const {
  for (const auto& f : files_) f->evict_all();
}

}  // namespace attend::runtime
