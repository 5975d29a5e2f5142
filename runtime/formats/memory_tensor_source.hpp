// Tensors held in memory: random models for the benchmark presets and tests, and
// converted weights on their way to a file.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "formats/tensor_source.hpp"

namespace attend::runtime {

class MemoryTensorSource final : public TensorSource {
 public:
  explicit MemoryTensorSource(std::string origin) : origin_(std::move(origin)) {}

  void add(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values);
  // A tensor made on demand: `fill` writes its values when the model acquires it, and
  // (with release after read) they are freed once it is packed — so a model built from
  // generated weights never holds them all at once. Until acquired its data is null.
  using Fill = std::function<void(std::span<float>)>;
  void add_on_demand(const std::string& name, std::vector<std::int64_t> shape, Fill fill);
  const std::string& origin() const override { return origin_; }
  const TensorRecord* find(const std::string& name) const override;
  std::vector<std::string> names() const override;  // in the order added
  std::size_t total_bytes() const override;
  // Frees each tensor once the model has packed or copied it (off by default: tests
  // build several models from one source). A released tensor cannot be read again; an
  // on-demand one is made again.
  void set_release_after_read(bool on) { release_after_read_ = on; }
  void acquire(const TensorRecord& t) const override;
  void release(const TensorRecord& t) const override;

 private:
  struct Entry {
    TensorRecord record;
    std::vector<float> values;
    Fill fill;  // on-demand tensors only
  };
  Entry& insert(const std::string& name, std::vector<std::int64_t> shape);  // a new, empty entry
  std::string origin_;
  mutable std::map<std::string, Entry> tensors_;  // acquire() fills values, release() frees them
  bool release_after_read_ = false;
  std::vector<std::string> order_;
};

}  // namespace attend::runtime
