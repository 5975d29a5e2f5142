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

const char* similarity_name(Similarity s) {
  switch (s) {
    case Similarity::cosine: return "cosine";
    case Similarity::dot: return "dot";
    case Similarity::euclidean: return "euclidean";
    case Similarity::manhattan: return "manhattan";
  }
  return "?";
}

bool parse_similarity(const std::string& name, Similarity& out) {
  for (Similarity s : {Similarity::cosine, Similarity::dot, Similarity::euclidean, Similarity::manhattan})
    if (name == similarity_name(s)) return out = s, true;
  if (name == "dot_product") return out = Similarity::dot, true;
  return false;
}

bool is_standard_prompt_name(const std::string& name) { return name == "query" || name == "document"; }

const std::string* EncoderConfig::prompt(const std::string& name) const {
  for (const auto& [n, text] : prompts)
    if (n == name) return &text;
  return nullptr;
}

std::int64_t EncoderConfig::max_length() const {
  return max_seq_length > 0 ? std::min(max_seq_length, max_positions()) : max_positions();
}

void EncoderConfig::validate(const std::string& origin) const {
  const bool distilbert = family == "distilbert";
  const char* hidden = distilbert ? "dim" : "hidden_size";
  const char* heads = distilbert ? "n_heads" : "num_attention_heads";
  auto bad = [&](const char* field, const std::string& why) { throw error_of(origin, ": field '", field, "' ", why); };
  auto in_range = [&](std::int64_t v, const char* field, std::int64_t low, std::int64_t high) {
    if (v < low || v > high)
      bad(field, "must be in [" + std::to_string(low) + ", " + std::to_string(high) + "], got " + std::to_string(v));
  };
  constexpr EncoderSizeLimits limit;
  in_range(d_model, hidden, 1, limit.d_model);
  in_range(num_heads, heads, 1, limit.num_heads);
  in_range(ffn_dim, distilbert ? "hidden_dim" : "intermediate_size", 1, limit.ffn_dim);
  in_range(layers, distilbert ? "n_layers" : "num_hidden_layers", 1, limit.layers);
  in_range(vocab_size, "vocab_size", 1, limit.vocab_size);
  in_range(position_rows, "max_position_embeddings", 1, limit.position_rows);
  if (d_model % num_heads != 0)
    bad(heads, std::to_string(num_heads) + " does not divide " + hidden + " " + std::to_string(d_model));
  if (head_dim() > kMaxHeadDim)
    bad(heads, "gives head dimension " + std::to_string(head_dim()) + " > " + std::to_string(kMaxHeadDim));
  if (position_offset < 0 || position_offset >= position_rows)
    bad("pad_token_id", "gives a first position " + std::to_string(position_offset) + " outside the " +
                            std::to_string(position_rows) + " position embeddings");
  in_range(type_vocab_size, "type_vocab_size", 0, limit.type_vocab_size);
  if (!std::isfinite(layer_norm_epsilon) || layer_norm_epsilon <= 0) bad("layer_norm_eps", "must be finite and > 0");
  if (pad_id < 0 || pad_id >= vocab_size) bad("pad_token_id", "must be an id of the vocabulary [0, " + std::to_string(vocab_size) + ")");
  if (classifier != ClassifierHead::none) {
    in_range(num_labels, "num_labels", 1, limit.num_labels);
    if (static_cast<std::int64_t>(labels.size()) != num_labels) bad("id2label", "must name every one of the num_labels labels");
    if (classifier == ClassifierHead::pooled && !pooler) bad("architectures", "a BERT classifier needs the pooler");
  }
  if (pooling.empty()) bad("pooling", "needs at least one pooling mode");
  std::int64_t dim = pooled_dim();
  for (const DenseModuleConfig& d : dense) {
    if (d.in_features != dim)
      bad("in_features", "of a Dense module is " + std::to_string(d.in_features) + ", but what it receives has " +
                             std::to_string(dim) + " dimensions");
    in_range(d.out_features, "out_features", 1, limit.dense_features);
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
  j["pad_positions"] = pad_positions;
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
  nlohmann::ordered_json prompt_texts = nlohmann::ordered_json::object();
  for (const auto& [name, text] : prompts) prompt_texts[name] = text;
  j["prompts"] = prompt_texts;
  j["default_prompt_name"] = default_prompt_name;
  j["similarity"] = similarity_name(similarity);
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
