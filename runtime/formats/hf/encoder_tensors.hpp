// An encoder directory's safetensors files under attend's encoder names
// (model/encoder_config.hpp: expected_encoder_tensors): each an alias of a stored
// tensor, or the fused QKV weight or bias made on demand from its three parts (and freed
// once packed), so loading holds no second copy of the model. Several files feed one
// source: the encoder's model.safetensors and each sentence-transformers Dense module's.
// Messages name the file and the stored name, never attend's.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "formats/safetensors.hpp"
#include "formats/tensor_source.hpp"

namespace attend::runtime {

class EncoderTensors final : public TensorSource {
 public:
  explicit EncoderTensors(std::string origin) : origin_(std::move(origin)) {}

  // Opens a safetensors file whose tensors will be mapped (kept open with the source).
  const SafetensorsFile& open(const std::string& path);
  void alias(const std::string& name, const SafetensorsFile& file, const TensorRecord& stored);
  void fused(const std::string& name, const SafetensorsFile& file, std::vector<const TensorRecord*> parts);

  const std::string& origin() const override { return origin_; }
  const TensorRecord* find(const std::string& name) const override;
  std::string where(const std::string& name) const override;  // the file and the stored name(s)
  std::vector<std::string> names() const override { return order_; }
  std::size_t total_bytes() const override;
  void acquire(const TensorRecord& t) const override;
  void release(const TensorRecord& t) const override;
  void evict_all() const override;
  void evict(const TensorRecord& t) const override;

 private:
  struct Entry {
    TensorRecord record;
    std::string stored;  // the name(s) in the file, for messages ("a.weight + b.weight" when fused)
    const SafetensorsFile* file = nullptr;
    std::vector<const TensorRecord*> parts;  // fused: the stored pieces, in order
    std::vector<std::byte> owned;            // fused: their concatenation while acquired
  };
  std::string origin_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  mutable std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

// Maps the stored names of one safetensors file onto attend's, and tells which stored
// tensors were used; the rest must be ones a Hugging Face checkpoint may carry beside
// the encoder (a masked-LM head, position_ids). What the family readers call.
class EncoderNames {
 public:
  EncoderNames(EncoderTensors& out, const SafetensorsFile& file) : out_(out), file_(file) {}

  bool has(const std::string& stored) const { return file_.find(stored) != nullptr; }
  // The stored tensor; throws attend::Error naming the file and the tensor if absent.
  const TensorRecord& stored(const std::string& name) const;
  void map(const std::string& attend, const std::string& stored);
  // Linear `stored` (.weight, .bias) as `attend`.
  void linear(const std::string& attend, const std::string& stored, bool bias = true);
  // A LayerNorm: weight/bias, or the legacy gamma/beta.
  void norm(const std::string& attend, const std::string& stored);
  // Query, key and value projections fused into one [3D, D] weight and [3D] bias.
  void fused_qkv(const std::string& attend, const std::string& q, const std::string& k, const std::string& v);
  // Stored tensors neither mapped nor `ignorable`: an error naming the first few.
  void reject_unused(const std::function<bool(const std::string&)>& ignorable, const std::string& what) const;
  // Stored tensors not mapped that `ignorable` accepts (for the report).
  std::vector<std::string> ignored(const std::function<bool(const std::string&)>& ignorable) const;

 private:
  EncoderTensors& out_;
  const SafetensorsFile& file_;
  std::set<std::string> used_;
};

}  // namespace attend::runtime
