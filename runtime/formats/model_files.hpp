// The files of a model, by name: a directory on disk, or files handed over in memory
// (CTranslate2's Translator(files=…): a model loaded without touching the disk, its
// name standing for the directory). Every model loader asks for its files here, so a
// model loads the same from either, and messages name a file as `name/file` either way.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/mapped_file.hpp"

namespace attend::runtime {

class ModelFiles {
 public:
  static ModelFiles directory(std::string dir);
  // `files`: file name → content. A name is a plain file name (no directory part):
  // anything else throws attend::Error naming it.
  static ModelFiles in_memory(std::string name, std::map<std::string, std::string> files);

  const std::string& name() const { return name_; }  // the directory, or the model's name
  bool in_memory() const { return in_memory_; }
  bool has(const std::string& file) const;
  std::string path(const std::string& file) const;  // for messages: name/file
  // The whole file; throws attend::Error naming path(file) if it is missing or unreadable.
  std::string read(const std::string& file) const;
  // The whole file, mapped (on disk) or viewed where it lies (in memory).
  std::shared_ptr<MappedFile> open(const std::string& file) const;
  // The file names held in memory (empty for a directory).
  std::vector<std::string> names() const;

  // For a directory: throws attend::Error unless it is one, saying what the path is
  // instead (a file, nothing); in memory: nothing to check.
  void require_directory() const;

 private:
  std::string name_;
  bool in_memory_ = false;
  std::map<std::string, std::shared_ptr<const std::string>> memory_;
};

}  // namespace attend::runtime
