// The tensors a configuration implies: the one list the loader validates against and
// the writers and converters produce.
#include "model/model.hpp"

namespace attend::runtime {

namespace tensor_names {
std::string encoder_layer(std::int64_t i) { return "encoder.layers." + std::to_string(i) + "."; }
std::string decoder_layer(std::int64_t i) { return "decoder.layers." + std::to_string(i) + "."; }
}  // namespace tensor_names

std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected_tensors(const ModelConfig& c) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
  // A: the attention's width, heads × head_dim (d_model but in T5s with other d_kv).
  const std::int64_t D = c.d_model, A = c.attention_width(), F = c.ffn_dim, P = c.position_offset + c.max_positions;
  auto linear = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
    out.push_back({name + ".weight", {rows, cols}});
    if (c.linear_bias) out.push_back({name + ".bias", {rows}});
  };
  auto norm = [&](const std::string& name) {
    out.push_back({name + ".weight", {D}});
    if (c.norm_type == NormType::layer_norm) out.push_back({name + ".bias", {D}});
  };
  const std::int64_t relative_distances = 2 * c.relative_attention_max_distance + 1;
  out.push_back({"encoder.embed_tokens.weight", {c.src_vocab_size, D}});
  if (c.relative_attention == RelativeAttention::t5_bias)
    out.push_back({"encoder.relative_attention_bias.weight", {c.relative_attention_buckets, c.num_heads}});
  if (c.position_encoding == PositionEncoding::learned) out.push_back({"encoder.embed_positions.weight", {P, D}});
  if (c.layernorm_embedding) norm("encoder.layernorm_embedding");
  auto self_attention = [&](const std::string& p) {
    linear(p + "self_attn.qkv_proj", 3 * A, D);
    linear(p + "self_attn.out_proj", D, A);
    if (c.relative_attention == RelativeAttention::shaw) {
      out.push_back({p + "self_attn.relative_position_keys", {relative_distances, c.head_dim()}});
      out.push_back({p + "self_attn.relative_position_values", {relative_distances, c.head_dim()}});
    }
    norm(p + "self_attn_layer_norm");
  };
  auto feed_forward = [&](const std::string& p) {
    linear(p + "fc1", F, D);
    if (c.ffn_gated) linear(p + "fc1_noact", F, D);
    linear(p + "fc2", D, F);
    norm(p + "final_layer_norm");
  };
  for (std::int64_t i = 0; i < c.encoder_layers; ++i) {
    self_attention(tensor_names::encoder_layer(i));
    feed_forward(tensor_names::encoder_layer(i));
  }
  if (c.encoder_final_norm) norm("encoder.layer_norm");
  if (!c.shared_embeddings) out.push_back({"decoder.embed_tokens.weight", {c.tgt_vocab_size, D}});
  if (c.position_encoding == PositionEncoding::learned && !c.shared_position_table)
    out.push_back({"decoder.embed_positions.weight", {P, D}});
  if (c.relative_attention == RelativeAttention::t5_bias)
    out.push_back({"decoder.relative_attention_bias.weight", {c.relative_attention_buckets, c.num_heads}});
  if (c.layernorm_embedding) norm("decoder.layernorm_embedding");
  for (std::int64_t i = 0; i < c.decoder_layers; ++i) {
    const std::string p = tensor_names::decoder_layer(i);
    self_attention(p);
    linear(p + "cross_attn.q_proj", A, D);
    linear(p + "cross_attn.kv_proj", 2 * A, D);
    linear(p + "cross_attn.out_proj", D, A);
    norm(p + "cross_attn_layer_norm");
    feed_forward(p);
  }
  if (c.decoder_final_norm) norm("decoder.layer_norm");
  if (!c.tie_output_projection) out.push_back({"output_projection.weight", {c.tgt_vocab_size, D}});
  if (c.output_bias) out.push_back({"output_projection.bias", {c.tgt_vocab_size}});
  return out;
}

}  // namespace attend::runtime
