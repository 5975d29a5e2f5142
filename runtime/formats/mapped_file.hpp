// A read-only view of a whole file: a memory mapping of it, or its bytes held in memory
// (a model loaded from memory, formats/model_files.hpp) — the loaders read both alike.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace attend::runtime {

class MappedFile {
 public:
  // Throws attend::Error naming the path if the file cannot be opened or mapped.
  explicit MappedFile(std::string path);
  // The bytes of `content`, kept alive by this object; `path` names it in messages.
  MappedFile(std::string path, std::shared_ptr<const std::string> content);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Tells the kernel we are done with [offset, offset + bytes): the pages leave this
  // process's resident set (they are re-read from disk if touched again). Called after
  // a tensor has been converted or packed into memory of our own, so loading a model
  // does not hold the file and the packed copy resident at once. Nothing for bytes
  // held in memory: they are the caller's, not pages the kernel can drop.
  void release(std::size_t offset, std::size_t bytes) const;

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::shared_ptr<const std::string> content_;  // held in memory: data_ points into it
};

}  // namespace attend::runtime
