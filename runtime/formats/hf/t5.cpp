// T5ForConditionalGeneration and MT5ForConditionalGeneration (t5, flan-t5, mT5), as
// transformers' modeling_t5 runs them: pre-norm layers of RMS norms without bias (and a
// final norm per stack), no biases in the linear layers, attention scores not scaled,
// no absolute positions: a learned bias per head and log-bucketed relative distance,
// computed in layer 0 of each stack and shared by its layers (bidirectional buckets in
// the encoder, causal in the decoder); feed-forward relu (DenseReluDense: wi, wo) or
// gated (gated-gelu: gelu_new(wi_0·x) ⊙ wi_1·x, then wo); one token table for both
// stacks; with tie_word_embeddings the output is that table and the last decoder state
// is scaled by d_model^−0.5 first (untied t5 v1.1/mT5: lm_head, no scaling). Decoding
// starts from the pad token. Heads are d_kv wide, whatever d_model.
#include <cmath>

#include "attend/error.hpp"
#include "formats/hf/bart_layers.hpp"
#include "formats/hf/seq2seq.hpp"
#include "model/model.hpp"

namespace attend::runtime {
namespace {

// feed_forward_proj: "relu", "gated-gelu" or "[gated-]ACT" as T5Config parses it.
void read_feed_forward(const JsonFile& config, ModelConfig& c) {
  std::string proj = config.text_or("feed_forward_proj", "relu");
  c.ffn_gated = proj.rfind("gated-", 0) == 0;
  if (c.ffn_gated) proj = proj.substr(6);
  if (proj == "gelu" && c.ffn_gated) proj = "gelu_new";  // T5Config: gated-gelu means gelu_new
  c.activation = hf_activation(config, "feed_forward_proj", proj);
}

void map_attention(TensorMap& map, const std::string& a, const std::string& h, bool cross) {
  if (cross) {
    map.alias(a + "q_proj.weight", h + "q.weight");
    map.fused(a + "kv_proj.weight", {h + "k.weight", h + "v.weight"});
  } else {
    map.fused(a + "qkv_proj.weight", {h + "q.weight", h + "k.weight", h + "v.weight"});
  }
  map.alias(a + "out_proj.weight", h + "o.weight");
}

void map_feed_forward(TensorMap& map, const ModelConfig& c, const std::string& a, const std::string& h) {
  if (c.ffn_gated) {
    map.alias(a + "fc1.weight", h + "DenseReluDense.wi_0.weight");
    map.alias(a + "fc1_noact.weight", h + "DenseReluDense.wi_1.weight");
  } else {
    map.alias(a + "fc1.weight", h + "DenseReluDense.wi.weight");
  }
  map.alias(a + "fc2.weight", h + "DenseReluDense.wo.weight");
  map.alias(a + "final_layer_norm.weight", h + "layer_norm.weight");
}

void read_t5(const JsonFile& config, TensorMap& map, ModelConfig& c) {
  c.d_model = config.integer("d_model");
  c.num_heads = config.integer("num_heads");
  // The attention's width, d_kv × num_heads, may differ from d_model (mT5-small: 64 × 6 =
  // 384 ≠ 512): q, k, v are [inner, d_model], o [d_model, inner].
  const std::int64_t d_kv = config.integer("d_kv");
  if (c.num_heads < 1 || c.num_heads > 1024) config.bad("num_heads", "must be in [1, 1024], got " + std::to_string(c.num_heads));
  if (d_kv < 1 || d_kv > 256) config.bad("d_kv", "must be in [1, 256] (attend's attention kernels), got " + std::to_string(d_kv));
  c.attention_dim = d_kv * c.num_heads;
  c.ffn_dim = config.integer("d_ff");
  c.encoder_layers = config.integer("num_layers");
  c.decoder_layers = config.integer_or("num_decoder_layers", c.encoder_layers);
  read_feed_forward(config, c);
  c.src_vocab_size = c.tgt_vocab_size = config.integer("vocab_size");
  c.max_positions = config.integer_or("n_positions", 512);
  c.layer_norm_epsilon = static_cast<float>(config.number_or("layer_norm_epsilon", 1e-6));
  c.norm_type = NormType::rms_norm;
  c.norm_placement = NormPlacement::pre;
  c.encoder_final_norm = c.decoder_final_norm = true;
  c.linear_bias = false;
  c.attention_scale = 1.0f;  // T5 folds the scaling into its initialisation
  c.position_encoding = PositionEncoding::none;
  c.relative_attention = RelativeAttention::t5_bias;
  c.relative_attention_buckets = config.integer_or("relative_attention_num_buckets", 32);
  c.relative_attention_max_distance = config.integer_or("relative_attention_max_distance", 128);
  c.shared_embeddings = true;
  // The output: lm_head.weight where the checkpoint stores one (t5 v1.1, flan-t5, mT5),
  // else the token table. The d_model^−0.5 scaling: scale_decoder_outputs (transformers 5
  // writes it), else tie_word_embeddings not false (what older configs meant by it).
  c.tie_output_projection = !map.has("lm_head.weight");
  const bool scaled = config.has("scale_decoder_outputs") ? config.flag_or("scale_decoder_outputs", true)
                                                          : config.flag_or("tie_word_embeddings", true);
  c.decoder_output_scale = scaled ? 1.0f / std::sqrt(static_cast<float>(c.d_model)) : 1.0f;
  auto id = [&](const char* field, std::int64_t fallback) {
    const std::int64_t v = config.integer_or(field, fallback);
    if (v < 0 || v >= c.tgt_vocab_size) config.bad(field, "is " + std::to_string(v) + ", outside the vocabulary");
    return static_cast<std::int32_t>(v);
  };
  c.pad_id = id("pad_token_id", 0);
  c.eos_id = id("eos_token_id", 1);
  c.bos_id = c.eos_id;  // T5 has no BOS; nothing generates or needs one
  c.decoder_start_id = id("decoder_start_token_id", c.pad_id);
  c.alignment_layer = -1, c.alignment_heads = 1;

  map.alias("encoder.embed_tokens.weight", map.has("shared.weight") ? "shared.weight" : "encoder.embed_tokens.weight");
  map.alias("encoder.relative_attention_bias.weight", "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  map.alias("decoder.relative_attention_bias.weight", "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  for (std::int64_t l = 0; l < c.encoder_layers; ++l) {
    const std::string a = tensor_names::encoder_layer(l), h = "encoder.block." + std::to_string(l) + ".layer.";
    map_attention(map, a + "self_attn.", h + "0.SelfAttention.", false);
    map.alias(a + "self_attn_layer_norm.weight", h + "0.layer_norm.weight");
    map_feed_forward(map, c, a, h + "1.");
  }
  for (std::int64_t l = 0; l < c.decoder_layers; ++l) {
    const std::string a = tensor_names::decoder_layer(l), h = "decoder.block." + std::to_string(l) + ".layer.";
    map_attention(map, a + "self_attn.", h + "0.SelfAttention.", false);
    map.alias(a + "self_attn_layer_norm.weight", h + "0.layer_norm.weight");
    map_attention(map, a + "cross_attn.", h + "1.EncDecAttention.", true);
    map.alias(a + "cross_attn_layer_norm.weight", h + "1.layer_norm.weight");
    map_feed_forward(map, c, a, h + "2.");
  }
  map.alias("encoder.layer_norm.weight", "encoder.final_layer_norm.weight");
  map.alias("decoder.layer_norm.weight", "decoder.final_layer_norm.weight");
  if (!c.tie_output_projection) map.alias("output_projection.weight", "lm_head.weight");
}

bool t5_ignorable(const std::string& stored) {
  return stored == "encoder.embed_tokens.weight" || stored == "decoder.embed_tokens.weight" || stored == "lm_head.weight";
}

}  // namespace

const Seq2SeqFamily& t5_family() {
  static const Seq2SeqFamily f{"t5", "T5ForConditionalGeneration, T5Model", read_t5, t5_ignorable};
  return f;
}

const Seq2SeqFamily& mt5_family() {
  static const Seq2SeqFamily f{"mt5", "MT5ForConditionalGeneration, MT5Model", read_t5, t5_ignorable};
  return f;
}

}  // namespace attend::runtime
