#include "formats/hf/bart_layers.hpp"

#include <cmath>

#include "attend/error.hpp"
#include "model/model.hpp"

namespace attend::runtime {

void read_bart_stacks(const JsonFile& config, ModelConfig& c) {
  c.d_model = config.integer("d_model");
  c.encoder_layers = config.integer("encoder_layers");
  c.decoder_layers = config.integer("decoder_layers");
  c.num_heads = config.integer("encoder_attention_heads");
  if (config.integer("decoder_attention_heads") != c.num_heads)
    config.bad("decoder_attention_heads", "differs from encoder_attention_heads — attend runs stacks with equal heads");
  c.ffn_dim = config.integer("encoder_ffn_dim");
  if (config.integer("decoder_ffn_dim") != c.ffn_dim)
    config.bad("decoder_ffn_dim", "differs from encoder_ffn_dim — attend runs stacks with equal feed-forward sizes");
  c.activation = hf_activation(config, "activation_function", config.text_or("activation_function", "gelu"));
  c.src_vocab_size = c.tgt_vocab_size = config.integer("vocab_size");
  c.max_positions = config.integer_or("max_position_embeddings", 1024);
  c.layer_norm_epsilon = 1e-5f;  // nn.LayerNorm's default: these families set no other
  c.embedding_scale = config.flag_or("scale_embedding", false) ? std::sqrt(static_cast<float>(c.d_model)) : 1.0f;
  auto id = [&](const char* field, std::int64_t fallback) {
    const std::int64_t v = config.integer_or(field, fallback);
    if (v < 0 || v >= c.tgt_vocab_size) config.bad(field, "is " + std::to_string(v) + ", outside the vocabulary");
    return static_cast<std::int32_t>(v);
  };
  c.pad_id = id("pad_token_id", 1);
  c.bos_id = id("bos_token_id", 0);
  c.eos_id = id("eos_token_id", 2);
  c.decoder_start_id = id("decoder_start_token_id", c.eos_id);
  c.alignment_layer = -1, c.alignment_heads = 1;
  if (config.has("encoder_layerdrop") && config.number_or("encoder_layerdrop", 0) < 0)
    config.bad("encoder_layerdrop", "must be ≥ 0");  // (dropout of any kind is a training setting)
}

void map_linear(TensorMap& map, const std::string& attend, const std::string& stored, bool bias) {
  map.alias(attend + ".weight", stored + ".weight");
  if (bias) map.alias(attend + ".bias", stored + ".bias");
}

void map_norm(TensorMap& map, const std::string& attend, const std::string& stored, bool bias) {
  map.alias(attend + ".weight", stored + ".weight");
  if (bias) map.alias(attend + ".bias", stored + ".bias");
}

namespace {

void fused(TensorMap& map, const std::string& attend, const std::string& h, std::initializer_list<const char*> parts) {
  for (const char* suffix : {".weight", ".bias"}) {
    std::vector<std::string> names;
    for (const char* p : parts) names.push_back(h + p + suffix);
    map.fused(attend + suffix, names);
  }
}

}  // namespace

void map_bart_layers(TensorMap& map, const ModelConfig& c, const std::string& prefix) {
  for (std::int64_t l = 0; l < c.encoder_layers; ++l) {
    const std::string a = tensor_names::encoder_layer(l), h = prefix + "encoder.layers." + std::to_string(l) + ".";
    fused(map, a + "self_attn.qkv_proj", h + "self_attn.", {"q_proj", "k_proj", "v_proj"});
    map_linear(map, a + "self_attn.out_proj", h + "self_attn.out_proj");
    map_norm(map, a + "self_attn_layer_norm", h + "self_attn_layer_norm");
    map_linear(map, a + "fc1", h + "fc1");
    map_linear(map, a + "fc2", h + "fc2");
    map_norm(map, a + "final_layer_norm", h + "final_layer_norm");
  }
  for (std::int64_t l = 0; l < c.decoder_layers; ++l) {
    const std::string a = tensor_names::decoder_layer(l), h = prefix + "decoder.layers." + std::to_string(l) + ".";
    fused(map, a + "self_attn.qkv_proj", h + "self_attn.", {"q_proj", "k_proj", "v_proj"});
    map_linear(map, a + "self_attn.out_proj", h + "self_attn.out_proj");
    map_norm(map, a + "self_attn_layer_norm", h + "self_attn_layer_norm");
    map_linear(map, a + "cross_attn.q_proj", h + "encoder_attn.q_proj");
    fused(map, a + "cross_attn.kv_proj", h + "encoder_attn.", {"k_proj", "v_proj"});
    map_linear(map, a + "cross_attn.out_proj", h + "encoder_attn.out_proj");
    map_norm(map, a + "cross_attn_layer_norm", h + "encoder_attn_layer_norm");
    map_linear(map, a + "fc1", h + "fc1");
    map_linear(map, a + "fc2", h + "fc2");
    map_norm(map, a + "final_layer_norm", h + "final_layer_norm");
  }
}

bool is_bart_buffer(const std::string& stored) {
  return stored.ends_with("embed_positions._float_tensor") || stored.ends_with(".version");
}

}  // namespace attend::runtime
