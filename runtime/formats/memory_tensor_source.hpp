// Tensors held in memory: random models for the benchmark presets and tests, and
// converted weights on their way to a file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "formats/tensor_source.hpp"

namespace attend::runtime {

class MemoryTensorSource final : public TensorSource {
 public:
  explicit MemoryTensorSource(std::string origin) : origin_(std::move(origin)) {}

  void add(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values);
  const std::string& origin() const override { return origin_; }
  const TensorRecord* find(const std::string& name) const override;
  std::vector<std::string> names() const override;  // in the order added
  std::size_t total_bytes() const override;
  // Frees each tensor once the model has packed or copied it (off by default: tests
  // build several models from one source). A released tensor cannot be read again.
  void set_release_after_read(bool on) { release_after_read_ = on; }
  void release(const TensorRecord& t) const override;

 private:
  struct Entry {
    TensorRecord record;
    std::vector<float> values;
  };
  std::string origin_;
  mutable std::map<std::string, Entry> tensors_;  // release() frees values
  bool release_after_read_ = false;
  std::vector<std::string> order_;
};

}  // namespace attend::runtime
