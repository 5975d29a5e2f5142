// The safetensors format: 8-byte little-endian header length N, N bytes of JSON
// ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {…}}),
// then the data; offsets are relative to the data's start.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "formats/mapped_file.hpp"
#include "formats/tensor_source.hpp"

namespace attend::runtime {

struct SafetensorsHeader {
  std::map<std::string, TensorRecord> tensors;  // data pointers into the parsed bytes
  std::map<std::string, std::vector<float>> scales;   // of each I8 tensor, by its name
  std::map<std::string, std::string> metadata;
  std::map<std::string, std::string> integer_tensors;  // name → dtype (integer_buffers only)
  std::size_t data_offset = 0;                  // where the data section starts
};

// Parses and validates the header against the bytes: JSON well-formed, dtypes known
// (F32, F16, BF16, I8 — each I8 tensor 'N' with its per-row scales 'N_scale', which
// the tensor list then omits), shapes non-negative, byte ranges consistent with shape × dtype,
// inside the file and not overlapping. Every failure names `origin` and the tensor.
// `integer_buffers`: integer tensors (I64, I32, I16, U8, BOOL…: a Hugging Face file's
// buffers such as BERT's position_ids) are checked the same way and listed in
// integer_tensors, not in tensors; without it they are an error.
SafetensorsHeader parse_safetensors(std::span<const std::byte> file, const std::string& origin,
                                    bool integer_buffers = false);

class SafetensorsFile final : public TensorSource {
 public:
  explicit SafetensorsFile(const std::string& path, bool integer_buffers = false);
  // A file already opened (mapped, or held in memory: formats/model_files.hpp).
  explicit SafetensorsFile(std::shared_ptr<const MappedFile> file, bool integer_buffers = false);

  const std::string& origin() const override { return file_->path(); }
  const TensorRecord* find(const std::string& name) const override;
  std::vector<std::string> names() const override;
  void release(const TensorRecord& t) const override { file_->release(t.offset, t.bytes()); }
  void evict(const TensorRecord& t) const override { file_->release(t.offset, t.bytes()); }
  void evict_all() const override { file_->release(0, file_->size()); }
  std::size_t total_bytes() const override { return file_->size(); }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  const std::map<std::string, std::string>& integer_tensors() const { return header_.integer_tensors; }

 private:
  std::shared_ptr<const MappedFile> file_;
  SafetensorsHeader header_;
};

}  // namespace attend::runtime
