// pytorch_model.bin — a state dict of tensors as torch.save writes it — read without
// running any pickle code.
//
// torch.save writes a zip archive (PyTorch ≥ 1.6: ARCHIVE/data.pkl, ARCHIVE/data/KEY for
// each storage, stored uncompressed) or, before that, the legacy stream (pickled magic
// number, protocol version and system information, the pickled object, the pickled list
// of storage keys, then each storage as an int64 element count and its bytes). The
// pickle is read by a small interpreter that knows only the opcodes those pickles use
// and only the callables a state dict needs — collections.OrderedDict,
// torch._utils._rebuild_tensor_v2 and _rebuild_parameter, the torch.*Storage types —
// and refuses anything else (an arbitrary global, a REDUCE of anything but those) with
// an error naming it: a hostile file cannot make it run code, allocate beyond its own
// size, or read outside it. Tensors point into the mapped file where contiguous and are
// copied out where not.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "formats/mapped_file.hpp"
#include "formats/tensor_source.hpp"

namespace attend::runtime {

struct TorchBinContents {
  std::map<std::string, TensorRecord> tensors;         // F32, F16, BF16 (offsets into the file)
  std::map<std::string, std::string> integer_tensors;  // name → dtype of integer buffers (never read)
  std::vector<std::vector<std::byte>> owned;           // copies of non-contiguous tensors
  std::string layout;                                  // "zip" or "legacy"
};

// Parses and validates; throws attend::Error naming `origin` (and the tensor, the
// opcode or the global) for anything but a state dict of tensors.
TorchBinContents parse_torch_bin(std::span<const std::byte> file, const std::string& origin);

class TorchBinFile final : public TensorSource {
 public:
  explicit TorchBinFile(const std::string& path);

  const std::string& origin() const override { return file_.path(); }
  const TensorRecord* find(const std::string& name) const override;
  std::vector<std::string> names() const override;
  void release(const TensorRecord& t) const override {
    if (t.offset) file_.release(t.offset, t.bytes());
  }
  void evict(const TensorRecord& t) const override { release(t); }
  void evict_all() const override { file_.release(0, file_.size()); }
  std::size_t total_bytes() const override { return file_.size(); }
  const std::map<std::string, std::string>& integer_tensors() const { return contents_.integer_tensors; }
  const std::string& layout() const { return contents_.layout; }

 private:
  MappedFile file_;
  TorchBinContents contents_;
};

}  // namespace attend::runtime
