#include "formats/sentence_transformers.hpp"

#include <optional>

#include "attend/error.hpp"
#include "formats/json_file.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

// A pooling mode as sentence-transformers' Pooling names it, in its old flags'
// ("mean_tokens", "cls_token") or its newer list ("mean", "mean_sqrt_len_tokens").
std::optional<Pooling> pooling_of(std::string name) {
  for (const char* suffix : {"_tokens", "_token"})
    if (name.ends_with(suffix)) name.erase(name.size() - std::string(suffix).size());
  for (Pooling p : {Pooling::cls, Pooling::max, Pooling::mean, Pooling::mean_sqrt_len, Pooling::weighted_mean, Pooling::last_token})
    if (name == pooling_name(p)) return p;
  return std::nullopt;
}

// 1_Pooling/config.json: its modes, concatenated in the order sentence-transformers
// concatenates them (the list's, or cls, max, mean, mean_sqrt_len, weightedmean,
// lasttoken for the flags).
std::vector<Pooling> read_pooling(const JsonFile& f, std::int64_t d_model) {
  std::vector<Pooling> modes;
  if (f.has("pooling_mode")) {
    json list = f.value()["pooling_mode"];
    if (list.is_string()) list = json::array({list});
    if (!list.is_array()) f.bad("pooling_mode", "must be a mode or a list of modes");
    for (const json& m : list) {
      const auto mode = m.is_string() ? pooling_of(m.get<std::string>()) : std::nullopt;
      if (!mode) f.bad("pooling_mode", "has " + m.dump() + "; attend pools cls, mean, max, mean_sqrt_len, weightedmean, lasttoken");
      modes.push_back(*mode);
    }
  } else {
    for (const char* key : {"pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_tokens",
                            "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"})
      if (f.flag_or(key, false)) modes.push_back(*pooling_of(std::string(key).substr(std::string("pooling_mode_").size())));
  }
  if (modes.empty()) f.bad("pooling_mode", "— no pooling mode is set");
  for (const char* key : {"word_embedding_dimension", "embedding_dimension"})
    if (f.integer_or(key, d_model) != d_model)
      f.bad(key, "is " + std::to_string(f.integer_or(key, 0)) + " but the model's hidden size is " + std::to_string(d_model));
  if (!f.flag_or("include_prompt", true))
    f.bad("include_prompt", "is false — attend pools every token (prompts included)");
  return modes;
}

// config_sentence_transformers.json: the prompts put before the texts, the one used
// when none is asked for, and how embeddings are compared — checked as
// sentence-transformers checks them when it loads the model.
void read_prompts_and_similarity(const fs::path& dir, EncoderConfig& c) {
  const fs::path path = dir / "config_sentence_transformers.json";
  if (!fs::exists(path)) return;
  const JsonFile f(path.string());
  if (!f.value().is_object()) throw error_of(path.string(), ": must be a JSON object");
  if (f.has("prompts")) {
    const json& prompts = f.value()["prompts"];
    if (!prompts.is_object()) f.bad("prompts", "must be an object {\"name\": \"prompt text\", …}");
    for (const auto& [name, text] : prompts.items()) {
      if (!text.is_string() && !text.is_null())
        f.bad("prompts", "has " + json(name).dump() + ": " + text.dump() + ", not a string");
      c.prompts.emplace_back(name, text.is_null() ? "" : text.get<std::string>());  // null: no prompt, as ""
    }
  }
  c.default_prompt_name = f.text_or("default_prompt_name", "");
  if (!c.default_prompt_name.empty() && !c.prompt(c.default_prompt_name) && !is_standard_prompt_name(c.default_prompt_name)) {
    std::string names;
    for (const auto& [name, text] : c.prompts) names += (names.empty() ? "" : ", ") + name;
    f.bad("default_prompt_name", "is '" + c.default_prompt_name + "', which is not one of the prompts (" +
                                     (names.empty() ? "none" : names) + ")");
  }
  const std::string similarity = f.text_or("similarity_fn_name", "cosine");
  if (!parse_similarity(similarity, c.similarity))
    f.bad("similarity_fn_name", "is '" + similarity + "' — sentence-transformers knows cosine, dot, euclidean, manhattan");
}

}  // namespace

SentenceTransformersModules read_modules(const fs::path& dir) {
  SentenceTransformersModules m;
  const fs::path path = dir / "modules.json";
  if (!fs::exists(path)) return m;
  const JsonFile file(path.string());
  if (!file.value().is_array()) throw error_of(path.string(), ": must be a JSON array of modules");
  m.present = true;
  int stage = 0;  // 0 transformer, 1 pooling, 2 dense, 3 normalize
  for (size_t i = 0; i < file.value().size(); ++i) {
    const json& module = file.value()[i];
    const std::string where = "module " + std::to_string(i);
    if (!module.is_object() || !module.contains("type") || !module["type"].is_string())
      throw error_of(path.string(), ": ", where, " needs a 'type' string");
    const std::string type = module["type"].get<std::string>();
    const std::string rel = module.contains("path") && module["path"].is_string() ? module["path"].get<std::string>() : "";
    const std::string leaf = type.substr(type.rfind('.') + 1);
    auto order = [&](int wanted, bool repeatable) {
      if (stage > wanted || (stage == wanted && !repeatable && wanted != 0 && i > 0))
        throw error_of(path.string(), ": ", where, " (", type, ") comes out of order; attend runs Transformer, Pooling, Dense…, Normalize");
      stage = wanted;
    };
    if (leaf == "Transformer" && i == 0) {
      m.transformer_path = rel;
    } else if (leaf == "Pooling" && stage == 0) {
      order(1, false);
      m.pooling_path = rel;
    } else if (leaf == "Dense" && stage >= 1 && stage <= 2) {
      order(2, true);
      m.dense_paths.push_back(rel);
    } else if (leaf == "Normalize" && stage >= 1 && stage <= 2) {
      order(3, false);
      m.normalize = true;
    } else {
      throw error_of(path.string(), ": ", where, " has type '", type,
                     "' — attend runs sentence-transformers' Transformer, Pooling, Dense and Normalize modules, in that order");
    }
    m.names.push_back(leaf);
  }
  if (m.names.empty() || m.names[0] != "Transformer")
    throw error_of(path.string(), ": the first module must be a sentence_transformers.models.Transformer");
  return m;
}

std::vector<std::string> read_sentence_transformers(const fs::path& root, const SentenceTransformersModules& modules,
                                                    EncoderConfig& c) {
  constexpr EncoderSizeLimits limit;
  const fs::path base = root / modules.transformer_path;
  std::vector<std::string> dense_weights;
  c.sentence_transformers = true;
  if (modules.pooling_path.empty())
    throw error_of((root / "modules.json").string(), ": no Pooling module — attend needs one to make sentence embeddings");
  c.pooling = read_pooling(JsonFile((root / modules.pooling_path / "config.json").string()), c.d_model);
  const fs::path st_config = base / "sentence_bert_config.json";
  if (fs::exists(st_config))
    c.max_seq_length = JsonFile(st_config.string()).integer_in_or("max_seq_length", 0, 0, INT64_MAX);
  std::int64_t dim = c.pooled_dim();
  for (size_t i = 0; i < modules.dense_paths.size(); ++i) {
    const fs::path folder = root / modules.dense_paths[i];
    const JsonFile dense((folder / "config.json").string());
    DenseModuleConfig d;
    d.in_features = dense.integer_in("in_features", 1, limit.dense_features);
    d.out_features = dense.integer_in("out_features", 1, limit.dense_features);
    d.bias = dense.flag_or("bias", true);
    const std::string act = dense.text_or("activation_function", "torch.nn.modules.activation.Tanh");
    if (act.ends_with(".Tanh")) d.tanh = true;
    else if (act.ends_with(".Identity")) d.tanh = false;
    else dense.bad("activation_function", "is '" + act + "' — attend runs Tanh and Identity");
    if (d.in_features != dim)
      dense.bad("in_features", "is " + std::to_string(d.in_features) + " but the module before gives " + std::to_string(dim));
    dim = d.out_features;
    const fs::path weights = folder / "model.safetensors";
    if (!fs::exists(weights))
      throw error_of(weights.string(), ": missing", fs::exists(folder / "pytorch_model.bin")
                                                        ? " — the module has pytorch_model.bin; attend reads safetensors only"
                                                        : "");
    dense_weights.push_back(weights.string());
    c.dense.push_back(d);
  }
  c.normalize = modules.normalize;
  read_prompts_and_similarity(root, c);
  return dense_weights;
}

}  // namespace attend::runtime
