#include "formats/model_files.hpp"

#include <filesystem>

#include "attend/error.hpp"
#include "formats/model_io.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;

ModelFiles ModelFiles::directory(std::string dir) {
  ModelFiles f;
  f.name_ = std::move(dir);
  return f;
}

ModelFiles ModelFiles::in_memory(std::string name, std::map<std::string, std::string> files) {
  ModelFiles f;
  f.name_ = std::move(name);
  f.in_memory_ = true;
  for (auto& [file, content] : files) {
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos)
      throw error_of(f.name_, ": the file name '", file, "' is not a plain file name (a model's files sit side by side)");
    f.memory_.emplace(file, std::make_shared<const std::string>(std::move(content)));
  }
  return f;
}

bool ModelFiles::has(const std::string& file) const {
  if (in_memory_) return memory_.count(file) != 0;
  std::error_code ec;
  return fs::exists(fs::path(name_) / file, ec);
}

std::string ModelFiles::path(const std::string& file) const { return (fs::path(name_) / file).string(); }

std::string ModelFiles::read(const std::string& file) const {
  if (!in_memory_) return read_text_file(path(file));
  const auto it = memory_.find(file);
  if (it == memory_.end()) throw error_of(path(file), ": missing (not among the files given in memory)");
  return *it->second;
}

std::shared_ptr<MappedFile> ModelFiles::open(const std::string& file) const {
  if (!in_memory_) return std::make_shared<MappedFile>(path(file));
  const auto it = memory_.find(file);
  if (it == memory_.end()) throw error_of(path(file), ": missing (not among the files given in memory)");
  return std::make_shared<MappedFile>(path(file), it->second);
}

std::vector<std::string> ModelFiles::names() const {
  std::vector<std::string> out;
  for (const auto& entry : memory_) out.push_back(entry.first);
  return out;
}

void ModelFiles::require_directory() const {
  if (!in_memory_) require_model_directory(name_);
}

}  // namespace attend::runtime
