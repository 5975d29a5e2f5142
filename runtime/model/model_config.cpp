#include "model/model_config.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "attend/error.hpp"
#include "attend/ops/attention.hpp"
#include "formats/json_errors.hpp"

namespace attend::runtime {
namespace {

using json = nlohmann::json;

constexpr int kFormatVersion = 1;
constexpr std::int64_t kMaxHeadDim = 256;  // the attention kernels' limit

[[noreturn]] void bad(const std::string& origin, const std::string& field, const std::string& why) {
  throw error_of(origin, ": field '", field, "' ", why);
}

std::int64_t get_int(const json& v, const std::string& origin, const std::string& field) {
  if (!v.is_number_integer()) bad(origin, field, "must be an integer, got " + v.dump());
  return v.get<std::int64_t>();
}

bool get_bool(const json& v, const std::string& origin, const std::string& field) {
  if (!v.is_boolean()) bad(origin, field, "must be true or false, got " + v.dump());
  return v.get<bool>();
}

float get_float(const json& v, const std::string& origin, const std::string& field) {
  if (!v.is_number()) bad(origin, field, "must be a number, got " + v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::abs(d) > 3.0e38) bad(origin, field, "must be finite, got " + v.dump());
  return static_cast<float>(d);
}

std::string get_string(const json& v, const std::string& origin, const std::string& field) {
  if (!v.is_string()) bad(origin, field, "must be a string, got " + v.dump());
  return v.get<std::string>();
}

template <class E>
E get_enum(const json& v, const std::string& origin, const std::string& field,
           const std::map<std::string, E>& choices) {
  const std::string s = get_string(v, origin, field);
  const auto it = choices.find(s);
  if (it == choices.end()) {
    std::string list;
    for (const auto& [k, _] : choices) list += (list.empty() ? "" : ", ") + k;
    bad(origin, field, "is '" + s + "'; expected one of " + list);
  }
  return it->second;
}

const std::map<std::string, NormPlacement> kNorms = {{"pre", NormPlacement::pre}, {"post", NormPlacement::post}};
const std::map<std::string, PositionEncoding> kPositions = {
    {"sinusoidal_interleaved", PositionEncoding::sinusoidal_interleaved},
    {"sinusoidal_concatenated", PositionEncoding::sinusoidal_concatenated},
    {"learned", PositionEncoding::learned},
    {"none", PositionEncoding::none}};
const std::map<std::string, NormType> kNormTypes = {{"layer_norm", NormType::layer_norm}, {"rms_norm", NormType::rms_norm}};
const std::map<std::string, RelativeAttention> kRelative = {
    {"none", RelativeAttention::none}, {"t5_bias", RelativeAttention::t5_bias}, {"shaw", RelativeAttention::shaw}};
const std::map<std::string, ops::Activation> kActivations = {{"relu", ops::Activation::relu},
                                                             {"gelu", ops::Activation::gelu},
                                                             {"gelu_tanh", ops::Activation::gelu_tanh},
                                                             {"silu", ops::Activation::silu},
                                                             {"gelu_sigmoid", ops::Activation::gelu_sigmoid}};

}  // namespace

const char* norm_placement_name(NormPlacement p) { return p == NormPlacement::pre ? "pre" : "post"; }

const char* position_encoding_name(PositionEncoding p) {
  switch (p) {
    case PositionEncoding::sinusoidal_interleaved: return "sinusoidal_interleaved";
    case PositionEncoding::sinusoidal_concatenated: return "sinusoidal_concatenated";
    case PositionEncoding::learned: return "learned";
    case PositionEncoding::none: return "none";
  }
  return "?";
}

const char* norm_type_name(NormType n) { return n == NormType::layer_norm ? "layer_norm" : "rms_norm"; }

const char* relative_attention_name(RelativeAttention r) {
  switch (r) {
    case RelativeAttention::none: return "none";
    case RelativeAttention::t5_bias: return "t5_bias";
    case RelativeAttention::shaw: return "shaw";
  }
  return "?";
}

ModelConfig ModelConfig::from_json(std::string_view text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw error_of(origin, ": not valid JSON (", json_reason(e), ")");  // names line, column and reason
  }
  if (!j.is_object()) throw error_of(origin, ": must be a JSON object");

  ModelConfig c;
  using Setter = std::function<void(const json&, const std::string&)>;
  auto integer = [&](std::int64_t& f) -> Setter { return [&f, &origin](const json& v, const std::string& k) { f = get_int(v, origin, k); }; };
  auto id = [&](std::int32_t& f) -> Setter {
    return [&f, &origin](const json& v, const std::string& k) {
      const std::int64_t x = get_int(v, origin, k);
      if (x < 0 || x > INT32_MAX) bad(origin, k, "must be a token id ≥ 0, got " + v.dump());
      f = static_cast<std::int32_t>(x);
    };
  };
  auto boolean = [&](bool& f) -> Setter { return [&f, &origin](const json& v, const std::string& k) { f = get_bool(v, origin, k); }; };
  auto real = [&](float& f) -> Setter { return [&f, &origin](const json& v, const std::string& k) { f = get_float(v, origin, k); }; };

  const std::map<std::string, Setter> fields = {
      {"format", [&](const json& v, const std::string& k) {
         if (get_string(v, origin, k) != "attend") bad(origin, k, "must be \"attend\"");
       }},
      {"format_version", [&](const json& v, const std::string& k) {
         if (get_int(v, origin, k) != kFormatVersion)
           bad(origin, k, "is " + v.dump() + "; this build reads version " + std::to_string(kFormatVersion));
       }},
      {"architecture", [&](const json& v, const std::string& k) {
         if (get_string(v, origin, k) != "transformer_encoder_decoder")
           bad(origin, k, "is " + v.dump() + "; attend runs \"transformer_encoder_decoder\"");
       }},
      {"name", [&](const json& v, const std::string& k) { c.name = get_string(v, origin, k); }},
      {"d_model", integer(c.d_model)},
      {"num_heads", integer(c.num_heads)},
      {"attention_dim", integer(c.attention_dim)},
      {"ffn_dim", integer(c.ffn_dim)},
      {"encoder_layers", integer(c.encoder_layers)},
      {"decoder_layers", integer(c.decoder_layers)},
      {"src_vocab_size", integer(c.src_vocab_size)},
      {"tgt_vocab_size", integer(c.tgt_vocab_size)},
      {"max_positions", integer(c.max_positions)},
      {"activation", [&](const json& v, const std::string& k) { c.activation = get_enum(v, origin, k, kActivations); }},
      {"norm_placement", [&](const json& v, const std::string& k) { c.norm_placement = get_enum(v, origin, k, kNorms); }},
      {"layer_norm_epsilon", real(c.layer_norm_epsilon)},
      {"encoder_final_norm", boolean(c.encoder_final_norm)},
      {"decoder_final_norm", boolean(c.decoder_final_norm)},
      {"layernorm_embedding", boolean(c.layernorm_embedding)},
      {"linear_bias", boolean(c.linear_bias)},
      {"norm_type", [&](const json& v, const std::string& k) { c.norm_type = get_enum(v, origin, k, kNormTypes); }},
      {"ffn_gated", boolean(c.ffn_gated)},
      {"attention_scale", real(c.attention_scale)},
      {"relative_attention", [&](const json& v, const std::string& k) { c.relative_attention = get_enum(v, origin, k, kRelative); }},
      {"relative_attention_buckets", integer(c.relative_attention_buckets)},
      {"relative_attention_max_distance", integer(c.relative_attention_max_distance)},
      {"decoder_start_zero_embedding", boolean(c.decoder_start_zero_embedding)},
      {"decoder_output_scale", real(c.decoder_output_scale)},
      {"position_encoding", [&](const json& v, const std::string& k) { c.position_encoding = get_enum(v, origin, k, kPositions); }},
      {"position_offset", integer(c.position_offset)},
      {"pad_positions", boolean(c.pad_positions)},
      {"shared_position_table", boolean(c.shared_position_table)},
      {"embedding_scale", [&](const json& v, const std::string& k) {
         // "sqrt_d_model" is resolved once d_model is known.
         if (v.is_string()) {
           if (v.get<std::string>() != "sqrt_d_model") bad(origin, k, "must be a number or \"sqrt_d_model\"");
           c.embedding_scale = -1.0f;
         } else {
           c.embedding_scale = get_float(v, origin, k);
         }
       }},
      {"shared_embeddings", boolean(c.shared_embeddings)},
      {"tie_output_projection", boolean(c.tie_output_projection)},
      {"output_bias", boolean(c.output_bias)},
      {"pad_id", id(c.pad_id)},
      {"bos_id", [&](const json& v, const std::string& k) {  // −1: none
         const std::int64_t x = get_int(v, origin, k);
         if (x < kNoToken || x > INT32_MAX) bad(origin, k, "must be a token id ≥ 0, or −1 for none, got " + v.dump());
         c.bos_id = static_cast<std::int32_t>(x);
       }},
      {"eos_id", id(c.eos_id)},
      {"unk_id", id(c.unk_id)},
      {"decoder_start_id", id(c.decoder_start_id)},
      {"add_source_bos", boolean(c.add_source_bos)},
      {"add_source_eos", boolean(c.add_source_eos)},
      {"alignment_layer", integer(c.alignment_layer)},
      {"alignment_heads", integer(c.alignment_heads)},
  };
  for (const char* required : {"d_model", "num_heads", "ffn_dim", "encoder_layers", "decoder_layers", "src_vocab_size",
                               "tgt_vocab_size"})
    if (!j.contains(required)) throw error_of(origin, ": missing required field '", required, "'");
  for (const auto& [key, value] : j.items()) {
    const auto it = fields.find(key);
    if (it == fields.end()) {
      if (!key.empty() && key[0] == '_') continue;  // comments and tool annotations
      throw error_of(origin, ": unknown field '", key, "' (see docs/model-format.md)");
    }
    it->second(value, key);
  }
  if (c.embedding_scale == -1.0f && c.d_model > 0) c.embedding_scale = std::sqrt(static_cast<float>(c.d_model));
  c.validate(origin);
  return c;
}

void ModelConfig::validate(const std::string& origin) const {
  auto positive = [&](std::int64_t v, const char* field, std::int64_t limit) {
    if (v < 1 || v > limit) bad(origin, field, "must be in [1, " + std::to_string(limit) + "], got " + std::to_string(v));
  };
  positive(d_model, "d_model", 1 << 16);
  positive(num_heads, "num_heads", 1 << 10);
  positive(ffn_dim, "ffn_dim", 1 << 18);
  positive(encoder_layers, "encoder_layers", 1 << 10);
  positive(decoder_layers, "decoder_layers", 1 << 10);
  positive(src_vocab_size, "src_vocab_size", 1 << 24);
  positive(tgt_vocab_size, "tgt_vocab_size", 1 << 24);
  positive(max_positions, "max_positions", 1 << 20);
  if (attention_dim < 0 || attention_dim > (1 << 16))
    bad(origin, "attention_dim", "must be in [0, 65536] (0: d_model), got " + std::to_string(attention_dim));
  const char* width = attention_dim > 0 ? "attention_dim" : "d_model";
  if (attention_width() % num_heads != 0)
    bad(origin, "num_heads", std::to_string(num_heads) + " does not divide " + width + " " + std::to_string(attention_width()));
  if (head_dim() > kMaxHeadDim)
    bad(origin, "num_heads", "gives head dimension " + std::to_string(head_dim()) + " > " + std::to_string(kMaxHeadDim));
  // ε = 0 divides by zero on a constant row (a padded or degenerate input): NaN out.
  if (!std::isfinite(layer_norm_epsilon) || layer_norm_epsilon <= 0) bad(origin, "layer_norm_epsilon", "must be finite and > 0");
  if (!std::isfinite(embedding_scale) || embedding_scale <= 0) bad(origin, "embedding_scale", "must be finite and > 0");
  if (position_offset < 0 || position_offset > (1 << 20)) bad(origin, "position_offset", "must be in [0, 2^20]");
  if (!std::isfinite(attention_scale) || attention_scale < 0) bad(origin, "attention_scale", "must be finite and ≥ 0 (0: 1/√head_dim)");
  if (!std::isfinite(decoder_output_scale) || decoder_output_scale <= 0) bad(origin, "decoder_output_scale", "must be finite and > 0");
  switch (relative_attention) {
    case RelativeAttention::none:
      if (relative_attention_buckets != 0 || relative_attention_max_distance != 0)
        bad(origin, "relative_attention", "is none, but relative_attention_buckets or _max_distance is set");
      break;
    case RelativeAttention::t5_bias:
      if (relative_attention_buckets < 4 || relative_attention_buckets > (1 << 16))
        bad(origin, "relative_attention_buckets", "must be in [4, 65536] for t5_bias, got " + std::to_string(relative_attention_buckets));
      if (relative_attention_max_distance < 1 || relative_attention_max_distance > (1 << 20))
        bad(origin, "relative_attention_max_distance", "must be in [1, 2^20] for t5_bias, got " + std::to_string(relative_attention_max_distance));
      break;
    case RelativeAttention::shaw:
      if (relative_attention_buckets != 0) bad(origin, "relative_attention_buckets", "applies to t5_bias only");
      if (relative_attention_max_distance < 0 || relative_attention_max_distance > ops::kMaxRelativeKeyDistance)
        bad(origin, "relative_attention_max_distance", "must be in [0, " + std::to_string(ops::kMaxRelativeKeyDistance) +
                                                            "] for shaw, got " + std::to_string(relative_attention_max_distance));
      break;
  }
  if (position_encoding != PositionEncoding::learned && position_encoding != PositionEncoding::none && d_model % 2 != 0)
    bad(origin, "position_encoding", "sinusoidal encodings need an even d_model");
  if (position_encoding == PositionEncoding::sinusoidal_concatenated && d_model < 4)
    bad(origin, "position_encoding", "sinusoidal_concatenated needs d_model ≥ 4");
  if (shared_position_table && position_encoding != PositionEncoding::learned)
    bad(origin, "shared_position_table", "applies only to learned position tables");
  if (shared_embeddings && src_vocab_size != tgt_vocab_size)
    bad(origin, "shared_embeddings", "needs src_vocab_size = tgt_vocab_size (" + std::to_string(src_vocab_size) +
                                         " vs " + std::to_string(tgt_vocab_size) + ")");
  auto target_id = [&](std::int32_t v, const char* field) {
    if (v >= tgt_vocab_size) bad(origin, field, std::to_string(v) + " is outside the target vocabulary (" +
                                                    std::to_string(tgt_vocab_size) + ")");
  };
  target_id(bos_id, "bos_id");
  if (bos_id < kNoToken) bad(origin, "bos_id", "must be a token id ≥ 0, or −1 for none");
  if (bos_id == kNoToken && add_source_bos) bad(origin, "add_source_bos", "needs a bos_id (it is −1: none)");
  target_id(eos_id, "eos_id");
  target_id(decoder_start_id, "decoder_start_id");
  if (pad_id >= src_vocab_size) bad(origin, "pad_id", "is outside the source vocabulary");
  target_id(unk_id, "unk_id");  // the target's; source ids come from the tokenizer, which knows its own
  if (alignment_layer < -decoder_layers || alignment_layer >= decoder_layers)
    bad(origin, "alignment_layer", "must name a decoder layer: in [-" + std::to_string(decoder_layers) + ", " +
                                       std::to_string(decoder_layers) + ")");
  if (alignment_heads < 0 || alignment_heads > num_heads)
    bad(origin, "alignment_heads", "must be in [0, num_heads] (0: all heads)");
}

std::string ModelConfig::to_json() const {
  json j;
  j["format"] = "attend";
  j["format_version"] = kFormatVersion;
  j["architecture"] = "transformer_encoder_decoder";
  if (!name.empty()) j["name"] = name;
  j["d_model"] = d_model;
  j["num_heads"] = num_heads;
  if (attention_width() != d_model) j["attention_dim"] = attention_dim;  // else d_model: written only where it differs
  j["ffn_dim"] = ffn_dim;
  j["encoder_layers"] = encoder_layers;
  j["decoder_layers"] = decoder_layers;
  j["src_vocab_size"] = src_vocab_size;
  j["tgt_vocab_size"] = tgt_vocab_size;
  j["max_positions"] = max_positions;
  j["activation"] = ops::activation_name(activation);
  j["norm_placement"] = norm_placement_name(norm_placement);
  j["layer_norm_epsilon"] = layer_norm_epsilon;
  j["encoder_final_norm"] = encoder_final_norm;
  j["decoder_final_norm"] = decoder_final_norm;
  j["layernorm_embedding"] = layernorm_embedding;
  j["linear_bias"] = linear_bias;
  j["norm_type"] = norm_type_name(norm_type);
  j["ffn_gated"] = ffn_gated;
  j["attention_scale"] = attention_scale;
  j["position_encoding"] = position_encoding_name(position_encoding);
  j["position_offset"] = position_offset;
  j["pad_positions"] = pad_positions;
  j["shared_position_table"] = shared_position_table;
  j["embedding_scale"] = embedding_scale;
  j["relative_attention"] = relative_attention_name(relative_attention);
  j["relative_attention_buckets"] = relative_attention_buckets;
  j["relative_attention_max_distance"] = relative_attention_max_distance;
  j["decoder_start_zero_embedding"] = decoder_start_zero_embedding;
  j["decoder_output_scale"] = decoder_output_scale;
  j["shared_embeddings"] = shared_embeddings;
  j["tie_output_projection"] = tie_output_projection;
  j["output_bias"] = output_bias;
  j["pad_id"] = pad_id;
  j["bos_id"] = bos_id;
  j["eos_id"] = eos_id;
  j["unk_id"] = unk_id;
  j["decoder_start_id"] = decoder_start_id;
  j["add_source_bos"] = add_source_bos;
  j["add_source_eos"] = add_source_eos;
  j["alignment_layer"] = alignment_layer;
  j["alignment_heads"] = alignment_heads;
  return j.dump(2) + "\n";
}

}  // namespace attend::runtime
