// Where a model's tensors come from: a safetensors file, a CTranslate2 model.bin, or
// memory (the benchmark presets). The model builder asks for tensors by name and
// checks their shapes; sources only describe and hand out bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attend::runtime {

// i8: CTranslate2's int8 weights, symmetric per row: w[r][c] ≈ q[r][c] / scale[r].
enum class DType { f32, f16, bf16, i8 };

const char* dtype_name(DType d);
std::size_t dtype_size(DType d);

struct TensorRecord {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  const std::byte* data = nullptr;  // bytes() bytes, any alignment
  std::size_t offset = 0;           // within the source, for release()
  const float* scales = nullptr;    // i8 only: scale[r] per row of shape[0] (w ≈ q / scale),
                                    // each > 0, owned by the source

  std::int64_t elements() const;
  std::size_t bytes() const { return static_cast<std::size_t>(elements()) * dtype_size(dtype); }
  std::string shape_string() const;  // "[512, 2048]"
};

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // What to name in error messages: a file path, or "preset base".
  virtual const std::string& origin() const = 0;
  virtual const TensorRecord* find(const std::string& name) const = 0;
  // How errors name tensor `name`: "origin: tensor 'name'" unless the source knows the
  // file and the name it is stored under ("…/2_Dense/model.safetensors: linear.weight").
  virtual std::string where(const std::string& name) const { return origin() + ": tensor '" + name + "'"; }
  virtual std::vector<std::string> names() const = 0;
  // The model is about to read this tensor's bytes: a source that makes its tensors on
  // demand (generated weights) makes this one now and sets its data. Describing a
  // tensor (find: name, dtype, shape) never needs it.
  virtual void acquire(const TensorRecord&) const {}
  // The model has copied or packed this tensor; its bytes will not be read again.
  virtual void release(const TensorRecord&) const {}
  // The model reads this tensor in place, now and then (an embedding table): its bytes
  // stay readable, but its pages may leave this process's memory until touched again
  // (a mapped file's are re-read from the page cache), so a check that read them all
  // does not keep them all resident.
  virtual void evict(const TensorRecord&) const {}
  // The model is built: every page of the source's files may leave this process (tensors
  // read in place come back as they are read). Where the page cache holds a file in large
  // folios, reading a 1 KiB bias maps 2 MiB that no per-tensor release can drop.
  virtual void evict_all() const {}
  virtual std::size_t total_bytes() const = 0;
};

// The tensor's elements as fp32 (F16 and BF16 converted, I8 dequantized with its
// scales; F32 copied, since the source may not be 4-byte aligned). Throws attend::Error
// if the tensor has no data (made on demand and not acquired, or already released).
std::vector<float> to_f32(const TensorRecord& t);
// The same into caller memory of t.elements() floats.
void to_f32(const TensorRecord& t, std::span<float> out);

}  // namespace attend::runtime
