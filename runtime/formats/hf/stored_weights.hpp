// The weights of a Hugging Face directory as save_pretrained writes them, whichever
// file holds them: model.safetensors, the shards of model.safetensors.index.json,
// pytorch_model.bin (formats/hf/torch_bin.hpp) or the shards of
// pytorch_model.bin.index.json. Every file is memory-mapped and checked as it opens; a
// name held by two shards, or a shard the index names but lacks, is an error.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/tensor_source.hpp"

namespace attend::runtime {

class StoredWeights {
 public:
  // Opens the first of the files above that `dir` has; throws attend::Error naming what
  // is missing or broken (a TensorFlow- or Flax-only directory is told so).
  static std::shared_ptr<const StoredWeights> open(const std::string& dir);

  const TensorRecord* find(const std::string& name) const;
  // The file a stored tensor is in (for release and evict).
  const TensorSource& file_of(const std::string& name) const;
  std::vector<std::string> names() const;
  // Integer buffers (position_ids …): named, never read.
  const std::map<std::string, std::string>& integer_buffers() const { return integer_buffers_; }
  const std::string& describe() const { return description_; }  // "model.safetensors", …
  const std::string& origin() const { return origin_; }          // the weights file, or the index
  std::size_t total_bytes() const;
  void evict_all() const;

 private:
  void add(std::shared_ptr<TensorSource> file, const std::map<std::string, std::string>& integers);
  std::string origin_, description_;
  std::vector<std::shared_ptr<TensorSource>> files_;
  std::map<std::string, std::size_t> where_;  // name → index in files_
  std::map<std::string, std::string> integer_buffers_;
};

}  // namespace attend::runtime
