// A Hugging Face checkpoint's tensors under attend's names (model/model.hpp,
// expected_tensors): each an alias of a stored tensor (maybe reshaped, as
// final_logits_bias [1, V] becomes [V]), several stored tensors concatenated along
// their rows (the fused QKV and cross-attention KV projections, made on demand and freed
// once packed, so loading holds no second copy of the model), or a table the loader
// computes (sinusoidal positions that are not stored). Every stored tensor mapped is
// remembered, so the family readers can refuse what they do not understand.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "formats/hf/stored_weights.hpp"
#include "formats/tensor_source.hpp"

namespace attend::runtime {

class TensorMap final : public TensorSource {
 public:
  explicit TensorMap(std::shared_ptr<const StoredWeights> stored) : stored_(std::move(stored)) {}

  bool has(const std::string& stored) const { return stored_->find(stored) != nullptr; }
  // The stored tensor; throws attend::Error naming the file and the tensor if absent.
  const TensorRecord& stored(const std::string& name) const;
  // attend's `name` is the stored tensor `stored_name`, with `shape` if given (same elements).
  void alias(const std::string& name, const std::string& stored_name, std::vector<std::int64_t> shape = {});
  // attend's `name` is the stored tensors concatenated along their first dimension.
  void fused(const std::string& name, const std::vector<std::string>& stored_names);
  // attend's `name` is computed by the loader.
  void computed(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values);
  // The stored tensors nothing mapped, less the ones `ignorable` accepts.
  std::vector<std::string> unused(bool (*ignorable)(const std::string&)) const;
  const StoredWeights& stored_weights() const { return *stored_; }

  const std::string& origin() const override { return stored_->origin(); }
  const TensorRecord* find(const std::string& name) const override;
  std::vector<std::string> names() const override { return order_; }
  std::size_t total_bytes() const override { return stored_->total_bytes(); }
  void acquire(const TensorRecord& t) const override;
  void release(const TensorRecord& t) const override;
  void evict(const TensorRecord& t) const override;
  void evict_all() const override { stored_->evict_all(); }

 private:
  struct Entry {
    TensorRecord record;
    std::vector<std::string> parts;  // stored names: one for an alias, several for a fused tensor
    std::vector<std::byte> owned;    // fused (while acquired) or computed
  };
  Entry& insert(const std::string& name);
  std::shared_ptr<const StoredWeights> stored_;
  mutable std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
  std::set<std::string> used_;
};

}  // namespace attend::runtime
