#include "formats/ct2_encoder.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "attend/error.hpp"
#include "formats/ct2_model.hpp"
#include "formats/ct2_tensor_source.hpp"
#include "formats/json_errors.hpp"
#include "formats/model_io.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
HfEncoderFiles read_ct2_encoder(const std::string& dir) {
  const std::string path = (fs::path(dir) / "model.bin").string();
  auto file = std::make_shared<MappedFile>(path);
  Ct2ModelFile m = parse_ct2_model({file->data(), file->size()}, path);
  if (m.spec != kCt2EncoderSpec) throw error_of(path, ": spec '", m.spec, "' is not ", kCt2EncoderSpec);
  auto required = [&](const std::string& name) -> const Ct2Variable& {
    const Ct2Variable* v = m.find(name);
    if (v == nullptr) throw error_of(path, ": missing variable '", name, "'");
    return *v;
  };
  auto number = [&](const std::string& name, double fallback) {
    const Ct2Variable* v = m.find(name);
    return v ? v->scalar(path) : fallback;
  };
  for (const char* feature : {"encoder/layer_0/self_attention/relative_position_keys",
                              "encoder/layer_0/self_attention/relative_attention_bias", "encoder/layer_0/ffn/linear_0_noact/weight",
                              "encoder/embeddings_2/weight"})
    if (m.find(feature)) throw error_of(path, ": variable '", feature, "' belongs to a feature attend's encoders do not run");
  if (number("encoder/multi_query_attention", 0) != 0 || number("multi_query_attention", 0) != 0)
    throw error_of(path, ": multi-query attention — attend's encoders do not run it");
  if (number("encoder/scale_embeddings", 1) != 0) throw error_of(path, ": variable 'encoder/scale_embeddings' is set — attend's encoders add unscaled embeddings (as BERT)");

  EncoderConfig c;
  c.architecture = kCt2EncoderSpec;
  c.family = "ctranslate2";
  c.name = fs::path(dir).filename().string();
  const Ct2Variable& tokens = required("encoder/embeddings_0/weight");
  const Ct2Variable& positions = required("encoder/position_encodings/encodings");
  if (tokens.shape.size() != 2 || positions.shape.size() != 2)
    throw error_of(path, ": the embeddings and position encodings must be matrices");
  c.vocab_size = tokens.shape[0];
  c.d_model = tokens.shape[1];
  c.position_rows = positions.shape[0];
  c.position_offset = 0;  // the converter cuts RoBERTa's table at padding_idx + 1
  if (const Ct2Variable* types = m.find("encoder/embeddings_1/weight")) {
    if (number("encoder/embeddings_merge", 0) != 1)
      throw error_of(path, ": 'encoder/embeddings_merge' concatenates its embeddings — attend adds token types (merge ADD)");
    c.type_vocab_size = types->shape.empty() ? 0 : types->shape[0];
  }
  c.num_heads = static_cast<std::int64_t>(required("encoder/num_heads").scalar(path));
  c.norm_placement = number("encoder/pre_norm", 1) != 0 ? NormPlacement::pre : NormPlacement::post;
  c.activation = activation_from_ct2(static_cast<std::int64_t>(number("encoder/activation", 0)), path);
  c.final_norm = m.find("encoder/layer_norm/gamma") != nullptr;
  while (m.find("encoder/layer_" + std::to_string(c.layers) + "/ffn/linear_0/weight")) ++c.layers;
  if (c.layers == 0) throw error_of(path, ": no encoder layers");
  c.ffn_dim = required("encoder/layer_0/ffn/linear_0/weight").shape[0];
  c.pooler = m.find("pooler_dense/weight") != nullptr;
  if (c.pooler && number("pooler_activation", 5) != 5)
    throw error_of(path, ": 'pooler_activation' is not Tanh (5) — attend's pooler is dense + tanh");
  c.pooling = {Pooling::cls};  // CTranslate2's Encoder has no pooling of its own: the first token
  c.layer_norm_epsilon = 1e-5f;  // CTranslate2's default without config.json
  const fs::path config_path = fs::path(dir) / "config.json";
  if (fs::exists(config_path)) {
    try {
      const nlohmann::json j = nlohmann::json::parse(read_text_file(config_path.string()));
      if (j.contains("layer_norm_epsilon") && j["layer_norm_epsilon"].is_number())
        c.layer_norm_epsilon = j["layer_norm_epsilon"].get<float>();
    } catch (const nlohmann::json::exception& e) {
      throw error_of(config_path.string(), ": not valid JSON (", json_reason(e), ")");
    }
  }

  auto tensors = std::make_shared<Ct2TensorSource>(file, m);
  std::set<std::string> mapped;
  auto add = [&](const std::string& attend, const std::string& ct2) {
    tensors->add(attend, required(ct2));
    mapped.insert(ct2);
  };
  auto linear = [&](const std::string& attend, const std::string& ct2) {
    add(attend + ".weight", ct2 + "/weight");
    add(attend + ".bias", ct2 + "/bias");
  };
  auto norm = [&](const std::string& attend, const std::string& ct2) {
    add(attend + ".weight", ct2 + "/gamma");
    add(attend + ".bias", ct2 + "/beta");
  };
  add("encoder.embed_tokens.weight", "encoder/embeddings_0/weight");
  add("encoder.embed_positions.weight", "encoder/position_encodings/encodings");
  if (c.type_vocab_size > 0) add("encoder.embed_types.weight", "encoder/embeddings_1/weight");
  norm("encoder.layernorm_embedding", "encoder/layernorm_embedding");
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string a = tensor_names::encoder_layer(l), v = "encoder/layer_" + std::to_string(l) + "/";
    linear(a + "self_attn.qkv_proj", v + "self_attention/linear_0");
    linear(a + "self_attn.out_proj", v + "self_attention/linear_1");
    norm(a + "self_attn_layer_norm", v + "self_attention/layer_norm");
    linear(a + "fc1", v + "ffn/linear_0");
    linear(a + "fc2", v + "ffn/linear_1");
    norm(a + "final_layer_norm", v + "ffn/layer_norm");
  }
  if (c.final_norm) norm("encoder.layer_norm", "encoder/layer_norm");
  if (c.pooler) linear("pooler.dense", "pooler_dense");
  static const std::set<std::string> attributes = {"num_heads", "pre_norm", "activation", "embeddings_merge",
                                                   "scale_embeddings", "multi_query_attention", "pooler_activation"};
  for (const auto& [name, v] : m.variables) {
    if (mapped.count(name) || (name.ends_with("_scale") && mapped.count(name.substr(0, name.size() - 6)))) continue;
    if (attributes.count(name.substr(name.rfind('/') + 1))) continue;
    throw error_of(path, ": unexpected variable '", name, "' ", v.shape_string(), " — not part of an encoder attend runs");
  }
  c.validate(path);

  HfEncoderFiles out;
  out.config = c;
  out.report.origin = dir;
  out.report.format = "CTranslate2 model.bin v" + std::to_string(m.version) + " (spec " + kCt2EncoderSpec + ")";
  out.report.file_bytes = file->size();
  for (const std::string& name : tensors->names()) {
    const TensorRecord* t = tensors->find(name);
    out.report.tensors.push_back({name, dtype_name(t->dtype), t->shape_string(), t->elements()});
  }
  out.report.checks.push_back("model.bin: version, spec, every variable's shape, dtype and byte count, no trailing bytes");
  out.report.checks.push_back("no variable of a feature attend's encoders do not run");
  for (const char* stem : {"vocabulary.json", "vocabulary.txt"})
    if (fs::exists(fs::path(dir) / stem)) out.vocabulary = (fs::path(dir) / stem).string();
  if (fs::exists(fs::path(dir) / "tokenizer.json")) out.tokenizer = (fs::path(dir) / "tokenizer.json").string();
  out.tensors = std::move(tensors);
  return out;
}

}  // namespace attend::runtime
