#include "model/encoder_config.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "attend/error.hpp"

namespace attend::runtime {

namespace {
constexpr std::int64_t kMaxHeadDim = 256;  // the attention kernels' limit
}

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::cls: return "cls";
    case Pooling::max: return "max";
    case Pooling::mean: return "mean";
    case Pooling::mean_sqrt_len: return "mean_sqrt_len";
    case Pooling::weighted_mean: return "weightedmean";
    case Pooling::last_token: return "lasttoken";
  }
  return "?";
}

Pooling parse_pooling(const std::string& name) {
  for (Pooling p : {Pooling::cls, Pooling::max, Pooling::mean, Pooling::mean_sqrt_len, Pooling::weighted_mean,
                    Pooling::last_token})
    if (name == pooling_name(p)) return p;
  throw error_of("pooling '", name, "' is unknown; use one of: cls, mean, max, mean_sqrt_len, weightedmean, lasttoken");
}

std::int64_t EncoderConfig::max_length() const {
  return max_seq_length > 0 ? std::min(max_seq_length, max_positions()) : max_positions();
}

void EncoderConfig::validate(const std::string& origin) const {
  auto bad = [&](const char* field, const std::string& why) { throw error_of(origin, ": field '", field, "' ", why); };
  auto positive = [&](std::int64_t v, const char* field, std::int64_t limit) {
    if (v < 1 || v > limit) bad(field, "must be in [1, " + std::to_string(limit) + "], got " + std::to_string(v));
  };
  positive(d_model, "hidden_size", 1 << 16);
  positive(num_heads, "num_attention_heads", 1 << 10);
  positive(ffn_dim, "intermediate_size", 1 << 18);
  positive(layers, "num_hidden_layers", 1 << 10);
  positive(vocab_size, "vocab_size", 1 << 24);
  positive(position_rows, "max_position_embeddings", 1 << 20);
  if (d_model % num_heads != 0)
    bad("num_attention_heads", std::to_string(num_heads) + " does not divide hidden_size " + std::to_string(d_model));
  if (head_dim() > kMaxHeadDim)
    bad("num_attention_heads", "gives head dimension " + std::to_string(head_dim()) + " > " + std::to_string(kMaxHeadDim));
  if (position_offset < 0 || position_offset >= position_rows)
    bad("pad_token_id", "gives a first position " + std::to_string(position_offset) + " outside the " +
                            std::to_string(position_rows) + " position embeddings");
  if (type_vocab_size < 0 || type_vocab_size > (1 << 16)) bad("type_vocab_size", "must be in [0, 65536]");
  if (!std::isfinite(layer_norm_epsilon) || layer_norm_epsilon <= 0) bad("layer_norm_eps", "must be finite and > 0");
  if (pad_id < 0 || pad_id >= vocab_size) bad("pad_token_id", "must be an id of the vocabulary [0, " + std::to_string(vocab_size) + ")");
  if (classifier != ClassifierHead::none) {
    positive(num_labels, "num_labels", 1 << 20);
    if (static_cast<std::int64_t>(labels.size()) != num_labels) bad("id2label", "must name every one of the num_labels labels");
    if (classifier == ClassifierHead::pooled && !pooler) bad("architectures", "a BERT classifier needs the pooler");
  }
  if (pooling.empty()) bad("pooling", "needs at least one pooling mode");
  std::int64_t dim = pooled_dim();
  for (const DenseModuleConfig& d : dense) {
    if (d.in_features != dim)
      bad("in_features", "of a Dense module is " + std::to_string(d.in_features) + ", but what it receives has " +
                             std::to_string(dim) + " dimensions");
    positive(d.out_features, "out_features", 1 << 20);
    dim = d.out_features;
  }
  if (max_seq_length < 0) bad("max_seq_length", "must be ≥ 0");
}

std::string EncoderConfig::to_json() const {
  nlohmann::ordered_json j;
  j["kind"] = "encoder";
  j["architecture"] = architecture;
  j["family"] = family;
  j["d_model"] = d_model;
  j["num_heads"] = num_heads;
  j["ffn_dim"] = ffn_dim;
  j["layers"] = layers;
  j["vocab_size"] = vocab_size;
  j["max_positions"] = max_positions();
  j["position_offset"] = position_offset;
  j["type_vocab_size"] = type_vocab_size;
  j["activation"] = ops::activation_name(activation);
  j["norm_placement"] = norm_placement_name(norm_placement);
  j["layer_norm_epsilon"] = layer_norm_epsilon;
  j["pad_id"] = pad_id;
  j["pooler"] = pooler;
  j["num_labels"] = num_labels;
  j["labels"] = labels;
  j["scores"] = scores == ScoreFunction::softmax ? "softmax" : scores == ScoreFunction::sigmoid ? "sigmoid" : "none";
  std::vector<std::string> modes;
  for (Pooling p : pooling) modes.push_back(pooling_name(p));
  j["pooling"] = modes;
  nlohmann::ordered_json dense_modules = nlohmann::ordered_json::array();
  for (const auto& d : dense)
    dense_modules.push_back({{"in_features", d.in_features}, {"out_features", d.out_features}, {"bias", d.bias},
                             {"activation", d.tanh ? "tanh" : "identity"}});
  j["dense"] = dense_modules;
  j["normalize"] = normalize;
  j["max_seq_length"] = max_length();
  j["embedding_dim"] = embedding_dim();
  j["name"] = name;
  return j.dump(2);
}

std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected_encoder_tensors(const EncoderConfig& c) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
  const std::int64_t D = c.d_model, F = c.ffn_dim;
  auto linear = [&](const std::string& name, std::int64_t rows, std::int64_t cols, bool bias = true) {
    out.push_back({name + ".weight", {rows, cols}});
    if (bias) out.push_back({name + ".bias", {rows}});
  };
  auto norm = [&](const std::string& name) {
    out.push_back({name + ".weight", {D}});
    out.push_back({name + ".bias", {D}});
  };
  out.push_back({"encoder.embed_tokens.weight", {c.vocab_size, D}});
  out.push_back({"encoder.embed_positions.weight", {c.position_rows, D}});
  if (c.type_vocab_size > 0) out.push_back({"encoder.embed_types.weight", {c.type_vocab_size, D}});
  norm("encoder.layernorm_embedding");
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "encoder.layers." + std::to_string(l) + ".";
    linear(p + "self_attn.qkv_proj", 3 * D, D);
    linear(p + "self_attn.out_proj", D, D);
    norm(p + "self_attn_layer_norm");
    linear(p + "fc1", F, D);
    linear(p + "fc2", D, F);
    norm(p + "final_layer_norm");
  }
  if (c.final_norm) norm("encoder.layer_norm");
  if (c.pooler) linear("pooler.dense", D, D);
  if (c.classifier == ClassifierHead::dense_tanh || c.classifier == ClassifierHead::dense_relu)
    linear("classifier.dense", D, D);
  if (c.classifier != ClassifierHead::none) linear("classifier.out_proj", c.num_labels, D);
  for (size_t i = 0; i < c.dense.size(); ++i)
    linear("dense." + std::to_string(i), c.dense[i].out_features, c.dense[i].in_features, c.dense[i].bias);
  return out;
}

}  // namespace attend::runtime
