// Reading a model's weights out of a TensorSource, for every kind of model (the
// encoder-decoder's model_builder.cpp, the encoder-only encoder_model.cpp): each tensor
// checked against the shape the configuration implies, GEMM weights packed in the
// compute type, tables kept in their narrow type, everything else converted to fp32 and
// checked finite, the source's pages released tensor by tensor.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "attend/ops/gemm.hpp"
#include "formats/tensor_source.hpp"
#include "model/model.hpp"
#include "model/table.hpp"

namespace attend::runtime {

// How GEMM weights are packed: element type and the kernels' ISA.
struct Packing {
  ops::WeightType type = ops::WeightType::f32;
  ops::Isa isa = ops::Isa::sse2;
};

using TensorShapes = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;

// Hands out tensors by name, checking each against the shape the configuration
// implies, and remembers which were used so leftovers can be reported.
class WeightReader {
 public:
  WeightReader(const TensorSource& source, const TensorShapes& expected);

  // The tensor, its data made if its source makes tensors on demand.
  const TensorRecord& record(const std::string& name);
  // The tensor's stored dtype, without reading it.
  DType stored_dtype(const std::string& name) const { return described(name).dtype; }
  // Every tensor present with its shape — checked before any table is built or weight
  // packed, so a broken directory fails at once, however large its configuration.
  void check_all() const;

  // The tensor as fp32, checked finite; its source pages are released afterwards unless
  // `keep_source` (the tensor is read again).
  std::vector<float> floats(const std::string& name, bool keep_source = false);
  Linear linear(const std::string& name, bool bias, const Packing& p);
  // A GEMM weight packed as p.type: int8 stored and int8 asked packs the stored q and
  // scales as they are (no dequantize–requantize round trip); anything else goes
  // through fp32. `keep_source`: the tensor is read again (a tied embedding table).
  ops::PackedWeight weight(const std::string& name, const Packing& p, bool keep_source = false);
  // The 2-D tensor as an fp32 matrix, checked finite: over the source's own bytes when
  // they are aligned F32 (no copy: a 32000 × 512 weight would otherwise be held twice
  // while packed), else converted into `converted`.
  ops::ConstMatrix fp32_matrix(const std::string& name, const TensorRecord& t, std::vector<float>& converted) const;
  static ops::MatrixView<const std::int8_t> int8_view(const TensorRecord& t) {
    return {reinterpret_cast<const std::int8_t*>(t.data), t.shape[0], t.shape[1]};
  }
  LayerNormWeights norm(const std::string& name, NormType type);
  // A table of `type` (ComputeType::embedding_tables; fp32 for positions), from the
  // tensor as it is stored where it can be: fp32 read in place when the file holds
  // aligned F32; int8 and bf16 stored and asked kept as they are (CTranslate2's int8
  // embeddings with their scales: no dequantize–requantize); anything else through fp32.
  Table table(const std::string& name, ops::WeightType type);

  void check_finite(const std::string& name, const float* v, size_t n) const;
  void check_finite(const std::string& name, float v, size_t at) const;
  // Tensors in the source that the configuration does not use.
  std::vector<std::string> unexpected() const;
  // Throws attend::Error listing (the first few of) them, if any.
  void reject_unexpected() const;
  std::int64_t parameters() const;

 private:
  const TensorRecord& described(const std::string& name) const;
  const TensorRecord& checked(const std::string& name, const std::vector<std::int64_t>& shape) const;
  static std::string shape_string(const std::vector<std::int64_t>& s);
  const TensorSource& source_;
  std::map<std::string, std::vector<std::int64_t>> expected_;
  std::set<std::string> used_;
};

// Loading frees what it converted and generated (a vocabulary-sized fp32 tensor is
// 62.5 MiB), but glibc keeps freed heap memory resident for reuse once its threshold
// for returning blocks to the system has risen past their size: measured on the base
// preset, 10 MiB of an int8 model's 190 MiB peak. Handing it back makes the resident
// memory the model's; and so does handing back every page of the source's files
// (TensorSource::evict_all).
void return_freed_memory(const TensorSource& source);

}  // namespace attend::runtime
