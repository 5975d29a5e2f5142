#include "formats/ct2_model.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "attend/error.hpp"
#include "formats/json_errors.hpp"
#include "formats/ct2_model_file.hpp"
#include "formats/ct2_tensor_source.hpp"
#include "formats/mapped_file.hpp"
#include "formats/model_io.hpp"
#include "text/vocabulary.hpp"

namespace attend::runtime {
namespace {

// Revision-1 files carry OpenNMT-tf's own variable names; this is CTranslate2's renaming.
std::string map_v1_name(std::string name) {
  auto replace = [&](const std::string& from, const std::string& to) {
    if (const auto at = name.find(from); at != std::string::npos) name.replace(at, from.size(), to);
  };
  replace("transformer/", "");
  replace(":0", "");
  replace("w_embs", "embeddings/weight");
  replace("kernel", "weight");
  replace("LayerNorm", "layer_norm");
  replace("dense", "projection");
  replace("conv1d_", "linear_");
  replace("conv1d", "linear_0");
  if (name.find("encoder") != std::string::npos) {
    replace("multi_head", "self_attention");
  } else {
    replace("masked_multi_head", "self_attention");
    replace("multi_head", "attention");
  }
  return name;
}

// attend tensor name → CTranslate2 variable name.
std::string ct2_name(const std::string& attend, const std::string& encoder_embeddings) {
  static const std::vector<std::pair<std::string, std::string>> sublayers = {
      {"self_attn.qkv_proj", "self_attention/linear_0"}, {"self_attn.out_proj", "self_attention/linear_1"},
      {"self_attn_layer_norm", "self_attention/layer_norm"}, {"cross_attn.q_proj", "attention/linear_0"},
      {"cross_attn.kv_proj", "attention/linear_1"}, {"cross_attn.out_proj", "attention/linear_2"},
      {"cross_attn_layer_norm", "attention/layer_norm"}, {"fc1", "ffn/linear_0"},
      {"fc1_noact", "ffn/linear_0_noact"}, {"fc2", "ffn/linear_1"}, {"final_layer_norm", "ffn/layer_norm"},
      {"layernorm_embedding", "layernorm_embedding"}, {"layer_norm", "layer_norm"}};
  if (attend == "output_projection.weight") return "decoder/projection/weight";
  if (attend == "output_projection.bias") return "decoder/projection/bias";
  if (attend == "encoder.embed_tokens.weight") return encoder_embeddings;
  if (attend == "decoder.embed_tokens.weight") return "decoder/embeddings/weight";
  const std::string stack = attend.substr(0, attend.find('.'));  // encoder | decoder
  if (attend.ends_with("embed_positions.weight")) return stack + "/position_encodings/encodings";
  // T5's bias: CTranslate2 stores a copy in every layer but uses the first layer's.
  if (attend.ends_with("relative_attention_bias.weight")) return stack + "/layer_0/self_attention/relative_attention_bias";
  static const std::regex relative(R"(\w+\.layers\.(\d+)\.self_attn\.(relative_position_keys|relative_position_values))");
  if (std::smatch m; std::regex_match(attend, m, relative))
    return stack + "/layer_" + m[1].str() + "/self_attention/" + m[2].str();
  std::string rest = attend.substr(stack.size() + 1), out = stack + "/";
  static const std::regex layer(R"(layers\.(\d+)\.(.*))");
  std::smatch m;
  if (std::regex_match(rest, m, layer)) {
    out += "layer_" + m[1].str() + "/";
    rest = m[2].str();
  }
  const bool is_norm = rest.find("norm") != std::string::npos;
  const std::string suffix = rest.substr(rest.rfind('.') + 1), module = rest.substr(0, rest.rfind('.'));
  for (const auto& [from, to] : sublayers)
    if (module == from) return out + to + "/" + (is_norm ? (suffix == "weight" ? "gamma" : "beta") : suffix);
  throw error_of("internal: no CTranslate2 name for '", attend, "'");
}

// Reads configuration out of a parsed file: attribute variables (per stack, or at the
// root for spec revisions before 5), spec-name defaults, aliases.
class ConfigReader {
 public:
  ConfigReader(const Ct2ModelFile& m, const std::string& origin) : m_(m), origin_(origin) {}

  const Ct2Variable* attribute(const std::string& stack, const std::string& name) const {
    if (const Ct2Variable* v = m_.find(stack + "/" + name)) return v;
    return m_.revision < 5 ? m_.find(name) : nullptr;
  }
  // An attribute's value, read from its own bytes and finite; `fallback` when absent.
  double number(const std::string& stack, const std::string& name, double fallback) const {
    const Ct2Variable* v = attribute(stack, name);
    return v ? finite(*v) : fallback;
  }
  // An attribute that must be a whole number in [lowest, highest] (a count, an id).
  std::int64_t integer(const std::string& stack, const std::string& name, std::int64_t fallback, std::int64_t lowest,
                       std::int64_t highest) const {
    const Ct2Variable* v = attribute(stack, name);
    return v ? whole(*v, lowest, highest) : fallback;
  }
  // A variable's single value, finite.
  double finite(const Ct2Variable& v) const {
    const double x = v.scalar(origin_);
    if (!std::isfinite(x)) throw error_of(origin_, ": attribute '", v.name, "' is ", x, ", expected a finite number");
    return x;
  }
  // A variable's single value, a whole number in [lowest, highest].
  std::int64_t whole(const Ct2Variable& v, std::int64_t lowest, std::int64_t highest) const {
    const double x = finite(v);
    if (x != std::floor(x) || x < static_cast<double>(lowest) || x > static_cast<double>(highest))
      throw error_of(origin_, ": attribute '", v.name, "' is ", x, ", expected an integer in [", lowest, ", ", highest, "]");
    return static_cast<std::int64_t>(x);
  }
  const Ct2Variable& required(const std::string& name) const {
    const Ct2Variable* v = m_.find(name);
    if (v == nullptr) throw error_of(origin_, ": missing variable '", name, "'");
    return *v;
  }
  // A variable that must be a matrix (an embedding or weight whose rows give a size).
  const Ct2Variable& matrix(const std::string& name) const {
    const Ct2Variable& v = required(name);
    if (v.shape.size() != 2)
      throw error_of(origin_, ": variable '", name, "' has shape ", v.shape_string(), ", expected a matrix [rows, columns]");
    return v;
  }
  bool has(const std::string& name) const { return m_.find(name) != nullptr; }
  // Both names resolve to one variable (an alias made by CTranslate2's converter).
  bool same(const std::string& a, const std::string& b) const {
    const Ct2Variable *x = m_.find(a), *y = m_.find(b);
    return x != nullptr && x == y;
  }
  std::int64_t layers(const std::string& stack) const {
    std::int64_t n = 0;
    while (has(stack + "/layer_" + std::to_string(n) + "/ffn/linear_0/weight")) ++n;
    return n;
  }
  const std::string& origin() const { return origin_; }
  [[noreturn]] void unsupported(const std::string& what) const {
    throw error_of(origin_, ": ", what, " — attend does not implement it");
  }

 private:
  const Ct2ModelFile& m_;
  const std::string& origin_;
};

float embedding_scale(const ConfigReader& r, const std::string& stack, std::int64_t d_model) {
  const Ct2Variable* v = r.attribute(stack, "scale_embeddings");
  if (v == nullptr) v = r.attribute(stack, "embeddings/multiply_by_sqrt_depth");
  const float sqrt_d = std::sqrt(static_cast<float>(d_model));
  if (v == nullptr) return sqrt_d;  // CTranslate2's default
  const double x = r.finite(*v);
  if (v->dtype == Ct2DType::i8) return x != 0 ? sqrt_d : 1.0f;
  if (!(x > 0 && x <= std::numeric_limits<float>::max()))
    throw error_of(r.origin(), ": attribute '", v->name, "' is ", x, ", expected a finite scale > 0");
  return static_cast<float>(x);
}

// The vocabulary file named `stem` (.json first, as CTranslate2 looks), or "".
std::string vocabulary_file(const ModelFiles& files, const std::string& stem) {
  for (const char* ext : {".json", ".txt"})
    if (files.has(stem + ext)) return stem + ext;
  return {};
}

// Every variable must be a weight attend maps, its scale, or an attribute understood here.
void reject_unknown_variables(const Ct2ModelFile& m, const std::set<std::string>& mapped, const std::string& origin) {
  static const std::set<std::string> attributes = {
      "num_heads", "pre_norm", "activation", "embeddings_merge", "alignment_layer", "alignment_heads",
      "scale_embeddings", "multi_query_attention", "with_source_bos", "with_source_eos", "with_target_bos",
      "alibi", "alibi_use_positive_positions", "scale_alibi", "start_from_zero_embedding", "scale_outputs",
      "multiply_by_sqrt_depth", "queries_scale", "relative_attention_max_distance", "layer_norm_use_residual"};
  static const std::vector<std::pair<std::string, std::string>> features = {
      {"relative_asymmetric_position", "asymmetric relative positions"}, {"relative_left_max_position", "asymmetric relative positions"},
      {"relative_right_max_position", "asymmetric relative positions"}, {"project_in", "input/output projections"},
      {"rotary", "rotary position embeddings"}, {"embeddings_1", "source factors (several source embeddings)"},
      {"input_layer_norm", "parallel or pre-post layer norms"}, {"shared_layer_norm", "parallel residual blocks"},
      {"q_norm", "query/key normalisation"}, {"k_norm", "query/key normalisation"}, {"v_norm", "value normalisation"},
      {"num_heads_kv", "grouped-query attention"}, {"head_dim", "a head dimension other than d_model / num_heads"},
      {"sliding_window", "sliding-window attention"}, {"final_logit_softcapping", "logit soft-capping"},
      {"layer_scalar", "layer scalars"}, {"memory_kv", "merged encoder attention"}};
  for (const auto& [name, v] : m.variables) {
    if (mapped.count(name)) continue;
    if (name.ends_with("_scale") && mapped.count(name.substr(0, name.size() - 6))) continue;
    const std::string leaf = name.substr(name.rfind('/') + 1);
    if (attributes.count(leaf) || attributes.count(name)) continue;
    for (const auto& [key, feature] : features)
      if (name.find(key) != std::string::npos)
        throw error_of(origin, ": variable '", name, "' belongs to ", feature, " — attend does not implement them");
    throw error_of(origin, ": unexpected variable '", name, "' ", v.shape_string(), " — not part of an encoder-decoder Transformer attend can run");
  }
}

void check_attributes(const ConfigReader& r, const Ct2ModelFile& m) {
  for (const char* stack : {"encoder", "decoder"}) {
    if (r.number(stack, "embeddings_merge", 0) != 0 && r.has(std::string(stack) + "/embeddings_1/weight"))
      r.unsupported("source factors (several source embeddings)");
    if (r.number(stack, "alibi", 0) != 0) r.unsupported("ALiBi attention biases");
    if (r.number(stack, "multi_query_attention", 0) != 0) r.unsupported("multi-query attention");
  }
  if (r.number("encoder", "start_from_zero_embedding", 0) != 0) r.unsupported("a zero start embedding in the encoder");
  for (const auto& [name, v] : m.variables)
    if (name.ends_with("/layer_norm_use_residual") && r.finite(v) != 0)
      throw error_of(r.origin(), ": variable '", name, "' asks for RMSNorm with a residual gain — attend does not implement it");
  if (const Ct2Variable* v = m.find("decoder/scale_outputs"); v && !v->is_scalar())
    throw error_of(r.origin(), ": variable 'decoder/scale_outputs' has shape ", v->shape_string(), "; attend takes a scalar");
}

// Every attention module (encoder and decoder self-attention, cross-attention) of
// every layer: CTranslate2 scales the queries by each module's queries_scale, default
// 1/√head_dim. attend takes one scale for all of them.
float attention_scale(const ConfigReader& r, const Ct2ModelFile& m, std::int64_t head_dim) {
  const float fallback = 1.0f / std::sqrt(static_cast<float>(head_dim));
  bool any = false;
  float scale = 0.0f;
  std::string first;
  for (const auto& [name, v] : m.variables) {
    if (!name.ends_with("/queries_scale")) continue;
    if (!v.is_scalar()) throw error_of(r.origin(), ": variable '", name, "' must be a scalar");
    const float value = static_cast<float>(r.finite(v));
    if (any && value != scale)
      throw error_of(r.origin(), ": variables '", first, "' and '", name, "' give different query scales — attend takes one");
    any = true, scale = value, first = name;
  }
  if (!any) return 0.0f;  // the kernels' default, 1/√head_dim
  // Modules without the variable use the default, which must then agree.
  std::int64_t modules = 0;
  for (const char* stack : {"encoder", "decoder"})
    for (std::int64_t l = 0; l < r.layers(stack); ++l)
      for (const char* module : {"self_attention", "attention"}) {
        const std::string scope = std::string(stack) + "/layer_" + std::to_string(l) + "/" + module;
        if (r.has(scope + "/linear_1/weight")) ++modules;
      }
  std::int64_t with = 0;
  for (const auto& [name, v] : m.variables) with += name.ends_with("/queries_scale");
  if (with != modules && scale != fallback)
    throw error_of(r.origin(), ": '", first, "' is ", scale, " but other attention modules have no queries_scale (1/√head_dim = ",
                   fallback, ") — attend takes one scale for all");
  return scale;
}

// Relative positions of the self-attention layers: T5's bias (layer 0 of each stack is
// the one CTranslate2 uses; the converter copies it into every layer) or Shaw's vectors.
void relative_attention(const ConfigReader& r, ModelConfig& c) {
  const bool shaw = r.has("encoder/layer_0/self_attention/relative_position_keys");
  const bool t5 = r.has("encoder/layer_0/self_attention/relative_attention_bias");
  for (const char* stack : {"encoder", "decoder"})
    for (std::int64_t l = 0; l < r.layers(stack); ++l) {
      const std::string scope = std::string(stack) + "/layer_" + std::to_string(l) + "/self_attention/";
      for (const char* name : {"relative_position_keys", "relative_position_values"})
        if (r.has(scope + name) != shaw)
          throw error_of(r.origin(), ": variable '", scope, name,
                         shaw ? "' is missing — relative position keys and values must be in every self-attention layer, "
                                "as encoder/layer_0 has keys"
                              : "' is present but encoder/layer_0 has no relative position keys — they must be in every "
                                "self-attention layer or none");
      if (l == 0 && r.has(scope + "relative_attention_bias") != t5)
        throw error_of(r.origin(), ": variable '", scope, "relative_attention_bias' is ", t5 ? "missing" : "present",
                       " — the encoder and the decoder must both have T5 relative attention bias, or neither");
    }
  if (shaw && t5) throw error_of(r.origin(), ": both relative position vectors and a T5 relative attention bias — attend takes one");
  if (shaw) {
    const Ct2Variable& keys = r.required("encoder/layer_0/self_attention/relative_position_keys");
    if (keys.shape.size() != 2 || keys.shape[0] % 2 != 1)
      throw error_of(r.origin(), ": variable 'encoder/layer_0/self_attention/relative_position_keys' has shape ", keys.shape_string(),
                     "; expected [2·max_relative_position + 1, head_dim]");
    c.relative_attention = RelativeAttention::shaw;
    c.relative_attention_max_distance = (keys.shape[0] - 1) / 2;
  } else if (t5) {
    const Ct2Variable& bias = r.required("encoder/layer_0/self_attention/relative_attention_bias");
    if (bias.shape.size() != 2)
      throw error_of(r.origin(), ": variable 'encoder/layer_0/self_attention/relative_attention_bias' has shape ", bias.shape_string(),
                     "; expected [buckets, num_heads]");
    c.relative_attention = RelativeAttention::t5_bias;
    c.relative_attention_buckets = bias.shape[0];
    const Ct2Variable& distance = r.required("encoder/layer_0/self_attention/relative_attention_max_distance");
    c.relative_attention_max_distance = r.whole(distance, 1, 1 << 20);
    const Ct2Variable& decoder_distance = r.required("decoder/layer_0/self_attention/relative_attention_max_distance");
    if (r.whole(decoder_distance, 1, 1 << 20) != c.relative_attention_max_distance ||
        r.matrix("decoder/layer_0/self_attention/relative_attention_bias").shape[0] != c.relative_attention_buckets)
      r.unsupported("T5 relative attention with different buckets or max distance in the encoder and the decoder");
  }
}

// config.json beside model.bin (format version 5 on): the special tokens and flags
// CTranslate2 keeps outside the weights. Absent (or null) fields take CTranslate2's
// defaults; a field of the wrong type is an error naming the file and the field.
class Ct2Config {
 public:
  explicit Ct2Config(const ModelFiles& files) : path_(files.path("config.json")) {
    if (!files.has("config.json")) return;
    try {
      json_ = nlohmann::json::parse(files.read("config.json"));
    } catch (const nlohmann::json::exception& e) {
      throw error_of(path_, ": not valid JSON (", json_reason(e), ")");
    }
    if (!json_.is_object()) throw error_of(path_, ": must be a JSON object, not ", json_.type_name());
  }

  bool has(const char* key) const { return field(key) != nullptr; }
  std::string text(const char* key, const std::string& fallback) const {
    const nlohmann::json* v = field(key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) bad(key, "must be a string", *v);
    return v->get<std::string>();
  }
  bool flag(const char* key, bool fallback) const {
    const nlohmann::json* v = field(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) bad(key, "must be true or false", *v);
    return v->get<bool>();
  }
  float epsilon(const char* key, float fallback) const {
    const nlohmann::json* v = field(key);
    if (v == nullptr) return fallback;
    const double x = v->is_number() ? v->get<double>() : 0.0;
    // > 0 and representable: ε = 0 divides by zero on a constant row, 1e39 is infinite.
    if (!v->is_number() || !(x > 0 && x <= std::numeric_limits<float>::max()) || static_cast<float>(x) == 0.0f)
      bad(key, "must be a finite number > 0", *v);
    return static_cast<float>(x);
  }

 private:
  const nlohmann::json* field(const char* key) const {
    if (!json_.is_object()) return nullptr;
    const auto it = json_.find(key);
    return it == json_.end() || it->is_null() ? nullptr : &*it;
  }
  [[noreturn]] void bad(const char* key, const char* why, const nlohmann::json& v) const {
    std::string shown = v.dump(-1, ' ', true);
    if (shown.size() > 60) shown = shown.substr(0, 60) + "…";
    throw error_of(path_, ": field '", key, "' ", why, ", got ", shown);
  }

  std::string path_;
  nlohmann::json json_;
};

}  // namespace

ops::Activation activation_from_ct2(std::int64_t id, const std::string& origin) {
  switch (id) {
    case 0: return ops::Activation::relu;
    case 1: return ops::Activation::gelu_tanh;
    case 2: return ops::Activation::silu;
    case 3: return ops::Activation::gelu;
    case 4: return ops::Activation::gelu_sigmoid;
  }
  throw error_of(origin, ": activation id ", id, " (Tanh = 5, Sigmoid = 6, or unknown) — attend does not implement it");
}

Ct2Model read_ct2_model(const std::string& dir) { return read_ct2_model(ModelFiles::directory(dir)); }

Ct2Model read_ct2_model(const ModelFiles& files) {
  const std::string& dir = files.name();
  const std::string path = files.path("model.bin");
  auto file = files.open("model.bin");
  Ct2ModelFile m = parse_ct2_model({file->data(), file->size()}, path);
  if (m.revision == 1) {  // OpenNMT-tf names
    std::map<std::string, Ct2Variable> renamed;
    for (auto& [name, v] : m.variables) {
      v.name = map_v1_name(name);
      renamed.emplace(v.name, std::move(v));
    }
    m.variables = std::move(renamed);
  }
  if (m.spec != "" && m.spec != "TransformerBase" && m.spec != "TransformerBig" && m.spec != "TransformerSpec")
    throw error_of(path, ": spec '", m.spec, "' is not an encoder-decoder Transformer attend runs (TransformerSpec, TransformerBase, TransformerBig)");

  const Ct2Config extra(files);
  auto text = [&](const char* key, const std::string& fallback) { return extra.text(key, fallback); };

  const ConfigReader r(m, path);
  check_attributes(r, m);
  ModelConfig c;
  c.name = "ctranslate2:" + (m.spec.empty() ? std::string("TransformerBase") : m.spec);
  const std::string encoder_embeddings = r.has("encoder/embeddings/weight") ? "encoder/embeddings/weight" : "encoder/embeddings_0/weight";
  const Ct2Variable& src_emb = r.matrix(encoder_embeddings);
  const Ct2Variable& tgt_emb = r.matrix("decoder/embeddings/weight");
  c.d_model = src_emb.shape[1];
  c.src_vocab_size = src_emb.shape[0];
  c.tgt_vocab_size = tgt_emb.shape[0];
  c.encoder_layers = r.layers("encoder");
  c.decoder_layers = r.layers("decoder");
  if (c.encoder_layers == 0 || c.decoder_layers == 0) throw error_of(path, ": no encoder or no decoder layers found");
  c.ffn_dim = r.matrix("encoder/layer_0/ffn/linear_0/weight").shape[0];

  const std::int64_t spec_heads = m.spec == "TransformerBig" ? 16 : 8, max_heads = 1 << 10;
  if (m.spec == "TransformerSpec" && !r.attribute("encoder", "num_heads")) throw error_of(path, ": missing variable 'encoder/num_heads'");
  c.num_heads = r.integer("encoder", "num_heads", spec_heads, 1, max_heads);
  const bool pre_norm = r.number("encoder", "pre_norm", 1) != 0;
  c.norm_placement = pre_norm ? NormPlacement::pre : NormPlacement::post;
  c.activation = activation_from_ct2(r.integer("encoder", "activation", 0, 0, 6), path);
  if (r.integer("decoder", "num_heads", c.num_heads, 1, max_heads) != c.num_heads ||
      (r.number("decoder", "pre_norm", 1) != 0) != pre_norm ||
      activation_from_ct2(r.integer("decoder", "activation", 0, 0, 6), path) != c.activation)
    r.unsupported("an encoder and a decoder with different heads, norm placement or activation");

  c.linear_bias = r.has("encoder/layer_0/self_attention/linear_0/bias");
  c.encoder_final_norm = r.has("encoder/layer_norm/gamma");
  c.decoder_final_norm = r.has("decoder/layer_norm/gamma");
  c.layernorm_embedding = r.has("encoder/layernorm_embedding/gamma");
  // RMSNorm: gamma without beta (T5). Every norm must agree; a missing beta elsewhere is
  // reported as a missing variable below.
  c.norm_type = r.has("encoder/layer_0/self_attention/layer_norm/gamma") && !r.has("encoder/layer_0/self_attention/layer_norm/beta")
                    ? NormType::rms_norm
                    : NormType::layer_norm;
  // CTranslate2's default when config.json gives none: 1e-5 for LayerNorm, 1e-6 for RMSNorm.
  c.layer_norm_epsilon = extra.epsilon("layer_norm_epsilon", c.norm_type == NormType::rms_norm ? 1e-6f : 1e-5f);
  c.ffn_gated = r.has("encoder/layer_0/ffn/linear_0_noact/weight");
  c.attention_scale = attention_scale(r, m, c.d_model / std::max<std::int64_t>(c.num_heads, 1));
  relative_attention(r, c);
  c.decoder_start_zero_embedding = r.number("decoder", "start_from_zero_embedding", 0) != 0;
  if (const Ct2Variable* v = m.find("decoder/scale_outputs")) c.decoder_output_scale = static_cast<float>(r.finite(*v));

  if (c.relative_attention != RelativeAttention::none) {
    // Relative positions replace absolute ones: CTranslate2 ignores any position table.
    c.position_encoding = PositionEncoding::none;
    c.position_offset = 0;
    c.max_positions = 1024;  // no table limits the length; this bounds the plans
  } else if (r.has("encoder/position_encodings/encodings")) {
    const Ct2Variable& table = r.matrix("encoder/position_encodings/encodings");
    c.position_encoding = PositionEncoding::learned;
    c.position_offset = 0;
    c.max_positions = table.shape[0];
    c.shared_position_table = r.same("encoder/position_encodings/encodings", "decoder/position_encodings/encodings");
    if (!r.has("decoder/position_encodings/encodings")) r.unsupported("a stored position table on the encoder only");
  } else {
    // [sin | cos], frequency step ln(10000)/(d/2 − 1), evaluated at positions from 1.
    c.position_encoding = PositionEncoding::sinusoidal_concatenated;
    c.position_offset = 1;
    c.max_positions = 2048;
  }
  c.embedding_scale = embedding_scale(r, "encoder", c.d_model);
  if (embedding_scale(r, "decoder", c.d_model) != c.embedding_scale) r.unsupported("different embedding scales per stack");
  c.shared_embeddings = r.same(encoder_embeddings, "decoder/embeddings/weight");
  c.tie_output_projection = r.same("decoder/projection/weight", "decoder/embeddings/weight");
  c.output_bias = r.has("decoder/projection/bias");

  // Vocabularies and special tokens.
  Ct2Model out;
  out.unk_token = text("unk_token", "<unk>");
  const std::string shared = vocabulary_file(files, "shared_vocabulary");
  const std::string source_file = shared.empty() ? vocabulary_file(files, "source_vocabulary") : shared;
  const std::string target_file = shared.empty() ? vocabulary_file(files, "target_vocabulary") : shared;
  if (source_file.empty() || target_file.empty())
    throw error_of(dir, ": missing vocabulary (shared_vocabulary, or source_vocabulary and target_vocabulary, .txt or .json)");
  out.source_vocabulary = files.path(source_file), out.target_vocabulary = files.path(target_file);
  const Vocabulary source = Vocabulary::from_text(files.read(source_file), out.source_vocabulary, out.unk_token);
  const Vocabulary target = Vocabulary::from_text(files.read(target_file), out.target_vocabulary, out.unk_token);
  if (source.size() != c.src_vocab_size)
    throw error_of(out.source_vocabulary, ": ", source.size(), " tokens (", out.unk_token, " included) but the source embedding has ",
                   c.src_vocab_size, " rows");
  if (target.size() != c.tgt_vocab_size)
    throw error_of(out.target_vocabulary, ": ", target.size(), " tokens (", out.unk_token, " included) but the target embedding has ",
                   c.tgt_vocab_size, " rows");
  // A special token names its field in config.json (or the default it took).
  const std::string config_json = files.path("config.json");
  auto special = [&](const char* field, const std::string& fallback) {
    const std::string token = text(field, fallback);
    const auto id = target.find(token);
    if (!id)
      throw error_of(out.target_vocabulary, ": the special token '", token, "' (", config_json, ": field '", field, "'",
                     extra.has(field) ? "" : ", by default", ") is not in the vocabulary");
    return *id;
  };
  c.add_source_bos = extra.flag("add_source_bos", false) || r.number("encoder", "with_source_bos", 0) != 0;
  c.add_source_eos = extra.flag("add_source_eos", false) || r.number("encoder", "with_source_eos", 0) != 0;
  // BOS may be absent where no source gets one: CTranslate2 4.8's own Marian conversion
  // drops it (Marian has no BOS; its decoder starts from a zero embedding) yet config.json
  // names "<s>". CTranslate2 reads such a model: the only use of BOS left is its
  // empty-source rule, which compares source tokens with the BOS token's text, which no
  // vocabulary token matches — so the model has no BOS id (−1). A missing end or start
  // token, or a BOS the sources are to get, still refuses the model.
  const bool bos_present = target.find(text("bos_token", "<s>")).has_value();
  c.bos_id = bos_present || c.add_source_bos ? special("bos_token", "<s>") : kNoToken;
  c.eos_id = special("eos_token", "</s>");
  c.unk_id = target.unk_id();
  const bool with_target_bos = r.number("decoder", "with_target_bos", 1) != 0;
  c.decoder_start_id = special("decoder_start_token", with_target_bos ? "<s>" : "</s>");
  c.pad_id = source.find("<blank>").value_or(0);
  c.alignment_layer = r.integer("decoder", "alignment_layer", -1, -1024, 1024);
  c.alignment_heads = r.integer("decoder", "alignment_heads", 1, 0, 1024);
  c.validate(path);

  // The tensors, under attend's names.
  auto tensors = std::make_shared<Ct2TensorSource>(file, m);
  std::set<std::string> mapped;
  for (const auto& [name, shape] : expected_tensors(c)) {
    const std::string ct2 = ct2_name(name, encoder_embeddings);
    const Ct2Variable* v = m.find(ct2);
    if (v == nullptr) throw error_of(path, ": missing variable '", ct2, "' (attend's ", name, ")");
    if (v->shape != shape) {
      TensorRecord want;
      want.shape = shape;
      throw error_of(path, ": variable '", ct2, "' has shape ", v->shape_string(), ", the model's other variables imply ",
                     want.shape_string());
    }
    tensors->add(name, *v);
    mapped.insert(ct2);
    mapped.insert(v->name);
  }
  for (const char* also : {"decoder/embeddings/weight", "decoder/projection/weight", "decoder/position_encodings/encodings",
                           "encoder/position_encodings/encodings", "decoder/scale_outputs"})
    if (const Ct2Variable* v = m.find(also)) mapped.insert(also), mapped.insert(v->name);
  // T5: the copies of layer 0's bias in the other layers, unused as in CTranslate2.
  if (c.relative_attention == RelativeAttention::t5_bias)
    for (const char* stack : {"encoder", "decoder"})
      for (std::int64_t l = 1; l < r.layers(stack); ++l)
        if (const Ct2Variable* v = m.find(std::string(stack) + "/layer_" + std::to_string(l) + "/self_attention/relative_attention_bias"))
          mapped.insert(v->name);
  reject_unknown_variables(m, mapped, path);

  out.config = c;
  out.report.origin = dir;
  out.report.format = "CTranslate2 model.bin v" + std::to_string(m.version) + " (spec " +
                      (m.spec.empty() ? std::string("none") : m.spec) + ", revision " + std::to_string(m.revision) + ")" +
                      (tensors->int16_dequantized() ? ", int16 weights dequantized to fp32" : "");
  out.report.file_bytes = file->size();
  for (const std::string& name : tensors->names()) {
    const TensorRecord* t = tensors->find(name);
    out.report.tensors.push_back({name, dtype_name(t->dtype), t->shape_string(), t->elements()});
  }
  out.report.checks.push_back("model.bin: version, spec, every variable's shape, dtype and byte count, aliases, no trailing bytes");
  out.report.checks.push_back("no variable of an unsupported feature; attributes consistent between encoder and decoder");
  out.report.checks.push_back("vocabularies match the embedding tables; special tokens present");
  out.tensors = std::move(tensors);
  return out;
}

std::shared_ptr<const Model> load_ct2_model(const std::string& dir, const LoadOptions& options) {
  return load_ct2_model(ModelFiles::directory(dir), options);
}

std::shared_ptr<const Model> load_ct2_model(const ModelFiles& files, const LoadOptions& options) {
  Ct2Model m = read_ct2_model(files);
  return Model::build(std::move(m.config), std::move(m.tensors), std::move(m.report), options);
}

}  // namespace attend::runtime
