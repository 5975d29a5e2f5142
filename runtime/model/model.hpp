// An encoder-decoder transformer ready to run: configuration plus weights, GEMM
// weights packed for the kernels. Immutable once built, so many threads can share it
// (each with its own Workspace).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attend/ops/gemm.hpp"
#include "attend/ops/normalization.hpp"
#include "model/compute_type.hpp"
#include "model/model_config.hpp"
#include "model/table.hpp"
#include "formats/tensor_source.hpp"

namespace attend::runtime {

struct Linear {
  ops::PackedWeight weight;  // [out, in], packed
  std::vector<float> bias;   // [out], or empty
  const float* bias_data() const { return bias.empty() ? nullptr : bias.data(); }
};

// LayerNorm, or RMSNorm (beta empty).
struct LayerNormWeights {
  std::vector<float> gamma, beta;
  bool present() const { return !gamma.empty(); }
  ops::NormWeights with_epsilon(float eps) const { return {gamma.data(), beta.empty() ? nullptr : beta.data(), eps}; }
};

// Shaw et al.'s relative key and value vectors of one self-attention layer,
// [2R + 1, head_dim] each (empty without relative_attention shaw).
struct RelativeVectors {
  std::vector<float> keys, values;
};

// T5's relative attention bias of one stack, expanded from buckets to clipped distances:
// bias[h·(2R + 1) + δ + R] for δ = clamp(j − i, −R, R), where beyond R every distance
// falls in the last bucket (runtime/model/relative_positions.hpp).
struct DistanceBias {
  std::vector<float> bias;
  std::int64_t max_distance = 0;
  bool empty() const { return bias.empty(); }
};

struct EncoderLayer {
  Linear qkv, out, fc1, fc1_noact, fc2;  // fc1_noact: the gate of a gated FFN, or empty
  LayerNormWeights self_attn_norm, ffn_norm;
  RelativeVectors relative;
};

struct DecoderLayer {
  Linear qkv, self_out, cross_q, cross_out, fc1, fc1_noact, fc2;
  LayerNormWeights self_attn_norm, cross_attn_norm, ffn_norm;
  RelativeVectors relative;
};

struct TensorSummary {
  std::string name, dtype, shape;
  std::int64_t elements = 0;
};

// What loading found and checked, for `attend inspect` and logs.
struct LoadReport {
  std::string origin;
  std::string format;                   // "attend (safetensors)", "CTranslate2 model.bin v2", …
  std::uint64_t file_bytes = 0;
  std::int64_t parameters = 0;
  std::vector<TensorSummary> tensors;
  std::vector<std::string> checks;      // one line per check that passed
};

struct LoadOptions {
  ops::Isa isa = ops::active_isa();     // kernels the GEMM weights are packed for
  std::string compute_type = "default"; // CTranslate2's names (model/compute_type.hpp)
  std::string kv_cache_type = "default"; // the decoder's attention caches: default, float32, bfloat16
  // The CPU the compute type is chosen for: unset, this one (measure_cpu_gemm_speed(isa)).
  // Tests describe other CPUs (a bf16 dot product faster or slower than the FMA) to the
  // loaders through it; the weights are still packed for `isa`.
  std::optional<CpuGemmSpeed> described_cpu;
  CpuGemmSpeed cpu() const { return described_cpu ? *described_cpu : measure_cpu_gemm_speed(isa); }
};

class Model {
 public:
  // Builds from a configuration and a tensor source; `source` is kept alive for the
  // tables read in place. Throws attend::Error naming the origin and the tensor.
  static std::shared_ptr<const Model> build(ModelConfig config, std::shared_ptr<const TensorSource> source,
                                            LoadReport report, const LoadOptions& options = {});

  const ModelConfig& config() const { return config_; }
  const LoadReport& report() const { return report_; }
  ops::Isa isa() const { return isa_; }
  const ComputeType& compute_type() const { return compute_type_; }

  Table source_embedding, target_embedding;  // compute_type().embedding_tables; target_embedding
                                             // is empty when shared
  Table source_positions, target_positions;  // fp32 [position_offset + max_positions, d_model];
                                             // target_positions is empty when shared
  const Table& target_embedding_table() const {
    return config_.shared_embeddings ? source_embedding : target_embedding;
  }
  const Table& target_position_table() const {
    return target_positions.empty() ? source_positions : target_positions;
  }
  LayerNormWeights source_embedding_norm, target_embedding_norm;
  DistanceBias encoder_position_bias, decoder_position_bias;  // relative_attention t5_bias
  std::vector<EncoderLayer> encoder;
  LayerNormWeights encoder_norm;
  std::vector<DecoderLayer> decoder;
  Linear cross_kv;  // every decoder layer's K and V projections, stacked: [L·2A, D] (A: attention_width())
  LayerNormWeights decoder_norm;
  Linear output;    // [tgt_vocab, D]

 private:
  Model() = default;
  ModelConfig config_;
  LoadReport report_;
  ops::Isa isa_ = ops::Isa::sse2;
  ComputeType compute_type_;
  std::shared_ptr<const TensorSource> source_;
};

// Tensor names of attend's format (docs/model-format.md).
namespace tensor_names {
std::string encoder_layer(std::int64_t i);  // "encoder.layers.3."
std::string decoder_layer(std::int64_t i);
}  // namespace tensor_names

// Every tensor name and shape a configuration implies, in file order.
std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected_tensors(const ModelConfig& c);

}  // namespace attend::runtime
