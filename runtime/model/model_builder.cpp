// Model::build: validate every tensor against the configuration, resolve the compute
// type, pack the GEMM weights in it and hold the token embedding tables in it (int8
// stored by CTranslate2 as it is, everything else through fp32), convert the other
// tensors to fp32, release the source's pages tensor by tensor.
#include <cmath>
#include <cstring>
#include <cstdint>
#include <map>
#include <set>

#include "attend/error.hpp"
#include "attend/ops/bf16.hpp"
#include "attend/ops/embedding.hpp"
#include "model/model.hpp"
#include "model/relative_positions.hpp"
#include "model/weight_reader.hpp"

namespace attend::runtime {
namespace {

Table sinusoidal_table(const ModelConfig& c) {
  const std::int64_t rows = c.position_offset + c.max_positions;
  std::vector<float> t(static_cast<size_t>(rows * c.d_model));
  ops::sinusoidal_positions(c.position_encoding == PositionEncoding::sinusoidal_interleaved
                                ? ops::PositionLayout::interleaved
                                : ops::PositionLayout::concatenated,
                            0, ops::Matrix(t.data(), rows, c.d_model));
  return Table(std::move(t), rows, c.d_model);
}

// The decoder's K and V projections for all layers as one [L·2A, D] weight (A: the
// attention width), so one GEMM computes every layer's cross-attention keys and values
// from the encoder output. int8 stored and int8 asked: the stored rows and scales,
// stacked as they are.
Linear stacked_cross_kv(WeightReader& r, const ModelConfig& c, const Packing& p) {
  const std::int64_t D = c.d_model, A = c.attention_width(), L = c.decoder_layers;
  auto name = [](std::int64_t l) { return tensor_names::decoder_layer(l) + "cross_attn.kv_proj"; };
  bool stored_int8 = p.type == ops::WeightType::s8;
  for (std::int64_t l = 0; l < L; ++l) stored_int8 = stored_int8 && r.stored_dtype(name(l) + ".weight") == DType::i8;
  Linear out;
  if (stored_int8) {
    std::vector<std::int8_t> q(static_cast<size_t>(L * 2 * A * D));
    std::vector<float> scales(static_cast<size_t>(L * 2 * A));
    for (std::int64_t l = 0; l < L; ++l) {
      const TensorRecord& t = r.record(name(l) + ".weight");
      std::memcpy(q.data() + l * 2 * A * D, t.data, static_cast<size_t>(2 * A * D));
      std::copy(t.scales, t.scales + 2 * A, scales.begin() + l * 2 * A);
    }
    out.weight = ops::pack_weight_s8({q.data(), L * 2 * A, D}, scales.data(), p.isa);
  } else {
    std::vector<float> w(static_cast<size_t>(L * 2 * A * D));
    for (std::int64_t l = 0; l < L; ++l) {
      const std::vector<float> wl = r.floats(name(l) + ".weight");
      std::copy(wl.begin(), wl.end(), w.begin() + l * 2 * A * D);
    }
    out.weight = ops::pack_weight(ops::ConstMatrix(w.data(), L * 2 * A, D), p.type, p.isa);
  }
  if (c.linear_bias)
    for (std::int64_t l = 0; l < L; ++l) {
      const std::vector<float> bl = r.floats(name(l) + ".bias");
      out.bias.insert(out.bias.end(), bl.begin(), bl.end());
    }
  return out;
}

// The dtype the model stores its GEMM weights in (the first layer's self-attention).
DType stored_gemm_type(const TensorSource& source, const ModelConfig& c) {
  const std::string first = (c.encoder_layers > 0 ? tensor_names::encoder_layer(0) : tensor_names::decoder_layer(0)) +
                            "self_attn.qkv_proj.weight";
  const TensorRecord* t = source.find(first);
  return t ? t->dtype : DType::f32;
}

}  // namespace

std::shared_ptr<const Model> Model::build(ModelConfig config, std::shared_ptr<const TensorSource> source, LoadReport report,
                                          const LoadOptions& options) {
  config.validate(source->origin());
  std::shared_ptr<Model> m(new Model());
  m->config_ = config;
  m->isa_ = options.isa;
  m->source_ = source;
  const ModelConfig& c = m->config_;
  // (The bf16 rates are measured only where the CPU has AVX512_BF16, once a process.)
  m->compute_type_ = resolve_compute_type(options.compute_type, stored_gemm_type(*source, c), options.cpu());
  name_kernel(m->compute_type_, options.isa);
  resolve_kv_cache_type(options.kv_cache_type, m->compute_type_);
  const Packing packing{m->compute_type_.gemm_weights, options.isa};
  const bool bias = c.linear_bias;
  WeightReader r(*source, expected_tensors(c));
  r.check_all();

  // The vocabulary-sized tensors first, while little else is held: a source that makes
  // its tensors on demand (the presets) then peaks at one fp32 table or projection plus
  // its narrow copy, not at the whole packed model plus those. A tied output projection
  // is packed from the target table's stored tensor before the table is narrowed (and
  // the tensor's pages released).
  const std::string target_table = c.shared_embeddings ? "encoder.embed_tokens.weight" : "decoder.embed_tokens.weight";
  if (c.tie_output_projection) {
    m->output.weight = r.weight(target_table, packing, /*keep_source=*/true);
  } else {
    m->output = r.linear("output_projection", false, packing);
  }
  if (c.output_bias) m->output.bias = r.floats("output_projection.bias");
  const ops::WeightType table_type = m->compute_type_.embedding_tables;
  m->source_embedding = r.table("encoder.embed_tokens.weight", table_type);
  if (!c.shared_embeddings) m->target_embedding = r.table("decoder.embed_tokens.weight", table_type);
  if (c.position_encoding == PositionEncoding::learned) {
    m->source_positions = r.table("encoder.embed_positions.weight", ops::WeightType::f32);
    if (!c.shared_position_table) m->target_positions = r.table("decoder.embed_positions.weight", ops::WeightType::f32);
  } else if (c.position_encoding != PositionEncoding::none) {
    m->source_positions = sinusoidal_table(c);
  }
  if (c.relative_attention == RelativeAttention::t5_bias) {
    m->encoder_position_bias = expand_t5_bias(r.floats("encoder.relative_attention_bias.weight"), c.relative_attention_buckets,
                                              c.num_heads, c.relative_attention_max_distance, true);
    m->decoder_position_bias = expand_t5_bias(r.floats("decoder.relative_attention_bias.weight"), c.relative_attention_buckets,
                                              c.num_heads, c.relative_attention_max_distance, false);
  }
  const NormType nt = c.norm_type;
  if (c.layernorm_embedding) {
    m->source_embedding_norm = r.norm("encoder.layernorm_embedding", nt);
    m->target_embedding_norm = r.norm("decoder.layernorm_embedding", nt);
  }
  // The self-attention and feed-forward blocks, alike in both stacks.
  auto read_common = [&](const std::string& p, Linear& qkv, Linear& out, LayerNormWeights& attn_norm, Linear& fc1,
                         Linear& fc1_noact, Linear& fc2, LayerNormWeights& ffn_norm, RelativeVectors& relative) {
    qkv = r.linear(p + "self_attn.qkv_proj", bias, packing);
    out = r.linear(p + "self_attn.out_proj", bias, packing);
    if (c.relative_attention == RelativeAttention::shaw) {
      relative.keys = r.floats(p + "self_attn.relative_position_keys");
      relative.values = r.floats(p + "self_attn.relative_position_values");
    }
    attn_norm = r.norm(p + "self_attn_layer_norm", nt);
    fc1 = r.linear(p + "fc1", bias, packing);
    if (c.ffn_gated) fc1_noact = r.linear(p + "fc1_noact", bias, packing);
    fc2 = r.linear(p + "fc2", bias, packing);
    ffn_norm = r.norm(p + "final_layer_norm", nt);
  };
  for (std::int64_t i = 0; i < c.encoder_layers; ++i) {
    EncoderLayer l;
    read_common(tensor_names::encoder_layer(i), l.qkv, l.out, l.self_attn_norm, l.fc1, l.fc1_noact, l.fc2, l.ffn_norm,
                l.relative);
    m->encoder.push_back(std::move(l));
  }
  if (c.encoder_final_norm) m->encoder_norm = r.norm("encoder.layer_norm", nt);
  for (std::int64_t i = 0; i < c.decoder_layers; ++i) {
    const std::string p = tensor_names::decoder_layer(i);
    DecoderLayer l;
    read_common(p, l.qkv, l.self_out, l.self_attn_norm, l.fc1, l.fc1_noact, l.fc2, l.ffn_norm, l.relative);
    l.cross_q = r.linear(p + "cross_attn.q_proj", bias, packing);
    l.cross_out = r.linear(p + "cross_attn.out_proj", bias, packing);
    l.cross_attn_norm = r.norm(p + "cross_attn_layer_norm", nt);
    m->decoder.push_back(std::move(l));
  }
  m->cross_kv = stacked_cross_kv(r, c, packing);
  if (c.decoder_final_norm) m->decoder_norm = r.norm("decoder.layer_norm", nt);

  r.reject_unexpected();

  report.parameters = r.parameters();
  report.checks.push_back("every tensor the configuration implies is present, with the implied shape");
  report.checks.push_back("no unexpected tensors");
  report.checks.push_back("every weight value is finite");
  report.checks.push_back(std::string("GEMM weights packed as ") + ops::weight_type_name(packing.type) + " for " +
                          ops::isa_name(packing.isa) + " (" + ops::gemm_kernel_name(packing.isa, packing.type) + ")");
  report.checks.push_back(std::string("token embedding tables held as ") + ops::weight_type_name(table_type));
  m->report_ = std::move(report);
  return_freed_memory(*source);
  return m;
}

}  // namespace attend::runtime
