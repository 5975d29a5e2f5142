#include "formats/hf/encoder.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "attend/error.hpp"
#include "formats/hf/encoder_family.hpp"
#include "formats/sentence_transformers.hpp"
#include "formats/model_io.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

// The families read, by model_type. A new family is one file and a line here.
const std::vector<const EncoderFamily*>& families() {
  static const std::vector<const EncoderFamily*> all = {&bert_family(), &roberta_family(), &xlm_roberta_family(),
                                                        &camembert_family(), &distilbert_family()};
  return all;
}

const EncoderFamily* find_family(const std::string& model_type) {
  for (const EncoderFamily* f : families())
    if (model_type == f->model_type) return f;
  return nullptr;
}

const EncoderFamily& family_of(const JsonFile& config) {
  const std::string model_type = config.text_or("model_type", "");
  const EncoderFamily* family = find_family(model_type);
  if (family == nullptr)
    config.bad("model_type", "is '" + model_type + "' — attend runs the encoder-only families " + hf_encoder_model_types());
  return *family;
}

// config.json's architecture (the base model when it names none): the base model, its
// sequence classifier, or the encoder under a pre-training head.
std::string architecture_of(const JsonFile& config, const EncoderFamily& family) {
  const std::string base = family.base;
  if (!config.has("architectures")) return base + "Model";
  const json& a = config.value()["architectures"];
  if (!a.is_array() || a.size() != 1 || !a[0].is_string()) config.bad("architectures", "must list one architecture");
  const std::string architecture = a[0].get<std::string>();
  const std::string head = architecture.substr(std::min(architecture.size(), base.size()));
  if (architecture.rfind(base, 0) != 0 ||
      !(head == "Model" || head == "ForMaskedLM" || head == "ForPreTraining" || head == "ForSequenceClassification"))
    config.bad("architectures", "is '" + architecture + "' — attend runs " + base + "Model, " + base +
                                    "ForSequenceClassification and the encoder of " + base + "ForMaskedLM");
  return architecture;
}

// Fields asking for attention attend's encoders do not have.
void refuse_unsupported(const JsonFile& config) {
  if (config.flag_or("is_decoder", false)) config.bad("is_decoder", "is true — attend runs encoders (bidirectional attention)");
  if (config.text_or("position_embedding_type", "absolute") != "absolute")
    config.bad("position_embedding_type", "is '" + config.text_or("position_embedding_type", "") +
                                              "' — attend runs absolute position embeddings only");
}

// The fields every family names alike: vocabulary, positions, pad.
void read_shared_fields(const JsonFile& config, const EncoderFamily& family, EncoderConfig& c) {
  constexpr EncoderSizeLimits limit;
  c.vocab_size = config.integer_in("vocab_size", 1, limit.vocab_size);
  c.position_rows = config.integer_in("max_position_embeddings", 1, limit.position_rows);
  c.pad_id = static_cast<std::int32_t>(config.integer_in_or("pad_token_id", family.pad_fallback, 0, c.vocab_size - 1));
  c.position_offset = family.positions_after_pad ? c.pad_id + 1 : 0;
  c.pad_positions = family.positions_after_pad;
}

// id2label (else num_labels' LABEL_i), in id order.
void read_labels(const JsonFile& config, EncoderConfig& c) {
  std::map<std::int64_t, std::string> labels;
  if (config.has("id2label")) {
    const json& m = config.value()["id2label"];
    if (!m.is_object()) config.bad("id2label", "must be an object {\"0\": \"LABEL\", …}");
    for (const auto& [k, v] : m.items()) {
      std::int64_t id = -1;
      try {
        size_t used = 0;
        id = std::stoll(k, &used);
        if (used != k.size()) id = -1;
      } catch (const std::exception&) {
      }
      if (id < 0 || !v.is_string()) config.bad("id2label", "must map ids 0, 1, … to label names; got \"" + k + "\": " + v.dump());
      labels[id] = v.get<std::string>();
    }
  }
  constexpr EncoderSizeLimits limit;
  c.num_labels = labels.empty() ? config.integer_in_or("num_labels", 2, 1, limit.num_labels) : static_cast<std::int64_t>(labels.size());
  for (std::int64_t i = 0; i < c.num_labels; ++i) {
    const auto it = labels.find(i);
    if (!labels.empty() && it == labels.end()) config.bad("id2label", "has no label for id " + std::to_string(i));
    c.labels.push_back(it != labels.end() ? it->second : "LABEL_" + std::to_string(i));
  }
}

// *ForSequenceClassification: the family's head, its labels and score function.
void read_classifier(const JsonFile& config, const EncoderFamily& family, EncoderConfig& c) {
  c.classifier = family.classifier;
  read_labels(config, c);
  const std::string problem = config.text_or("problem_type", "");
  if (!problem.empty() && problem != "regression" && problem != "single_label_classification" &&
      problem != "multi_label_classification")
    config.bad("problem_type", "is '" + problem +
                                   "' — transformers knows regression, single_label_classification and "
                                   "multi_label_classification");
  c.scores = problem == "regression" ? ScoreFunction::none
             : problem == "multi_label_classification" || c.num_labels == 1 ? ScoreFunction::sigmoid
                                                                             : ScoreFunction::softmax;
}

// model.safetensors; another weights file is named (attend reads only this one for encoders).
std::string weights_path(const fs::path& base) {
  const std::string weights = (base / "model.safetensors").string();
  if (fs::exists(weights)) return weights;
  for (const char* other : {"pytorch_model.bin", "model.safetensors.index.json", "tf_model.h5"})
    if (fs::exists(base / other))
      throw error_of(weights, ": missing — the directory has ", other,
                     "; attend reads one model.safetensors (save_pretrained(…, safe_serialization=True) writes it)");
  throw error_of(weights, ": missing");
}

// Layer `l`'s stored tensors (the family's names) onto attend's.
void map_layer(EncoderNames& n, const EncoderLayerNames& names, const std::string& base, std::int64_t l) {
  const std::string a = tensor_names::encoder_layer(l), h = base + names.layers + std::to_string(l) + ".";
  n.fused_qkv(a + "self_attn.qkv_proj", h + names.query, h + names.key, h + names.value);
  n.linear(a + "self_attn.out_proj", h + names.attention_out);
  n.norm(a + "self_attn_layer_norm", h + names.attention_norm);
  n.linear(a + "fc1", h + names.fc1);
  n.linear(a + "fc2", h + names.fc2);
  n.norm(a + "final_layer_norm", h + names.output_norm);
}

// Embeddings, layers, pooler and head onto attend's names; `base` is the stored prefix
// ("bert." in a head's checkpoint, "" in the base model's).
void map_encoder(EncoderNames& n, const EncoderFamily& family, const EncoderConfig& c, const std::string& base) {
  n.map("encoder.embed_tokens.weight", base + "embeddings.word_embeddings.weight");
  n.map("encoder.embed_positions.weight", base + "embeddings.position_embeddings.weight");
  if (c.type_vocab_size > 0) n.map("encoder.embed_types.weight", base + "embeddings.token_type_embeddings.weight");
  n.norm("encoder.layernorm_embedding", base + "embeddings.LayerNorm");
  for (std::int64_t l = 0; l < c.layers; ++l) map_layer(n, family.layer, base, l);
  if (c.pooler) n.linear("pooler.dense", base + "pooler.dense");
  switch (c.classifier) {
    case ClassifierHead::none: break;
    case ClassifierHead::pooled: n.linear("classifier.out_proj", "classifier"); break;
    case ClassifierHead::dense_tanh:
      n.linear("classifier.dense", "classifier.dense");
      n.linear("classifier.out_proj", "classifier.out_proj");
      break;
    case ClassifierHead::dense_relu:
      n.linear("classifier.dense", "pre_classifier");
      n.linear("classifier.out_proj", "classifier");
      break;
  }
}

// What a checkpoint may carry beside the encoder and its head: the masked-LM or
// next-sentence heads of pre-training, and buffers.
bool pretraining_leftover(const std::string& name) {
  for (const char* p : {"cls.", "lm_head.", "vocab_transform.", "vocab_layer_norm.", "vocab_projector."})
    if (name.rfind(p, 0) == 0) return true;
  return name.ends_with("position_ids") || name.ends_with("token_type_ids");
}

// Each sentence-transformers Dense module's weights, as dense.<i>.
void map_dense_modules(EncoderTensors& source, const std::vector<std::string>& weights, const EncoderConfig& c) {
  for (size_t i = 0; i < weights.size(); ++i) {
    EncoderNames dn(source, source.open(weights[i]));
    dn.linear("dense." + std::to_string(i), "linear", c.dense[i].bias);
    dn.reject_unused([](const std::string&) { return false; }, "a sentence-transformers Dense module");
  }
}

// Without sentence-transformers' max_seq_length (sentence-transformers 6 keeps it in the
// tokenizer), the tokenizer's model_max_length, as sentence-transformers reads it;
// transformers writes a huge one for "no limit", left to the positions.
void read_model_max_length(const fs::path& base, EncoderConfig& c) {
  const fs::path tokenizer_config = base / "tokenizer_config.json";
  if (c.max_seq_length != 0 || !fs::exists(tokenizer_config)) return;
  const double model_max_length = JsonFile(tokenizer_config.string()).number_or("model_max_length", 0);
  if (model_max_length >= 1 && model_max_length < double(1 << 20)) c.max_seq_length = static_cast<std::int64_t>(model_max_length);
}

LoadReport report_of(const std::string& dir, const std::string& architecture, const SentenceTransformersModules& modules,
                     const EncoderTensors& source, const SafetensorsFile& file, const std::vector<std::string>& left_out) {
  LoadReport r;
  r.origin = dir;
  r.format = "Hugging Face (config.json + model.safetensors, " + architecture + ")";
  if (modules.present) {
    std::string list;
    for (const std::string& m : modules.names) list += (list.empty() ? "" : ", ") + m;
    r.format += ", sentence-transformers (" + list + ")";
  }
  r.file_bytes = source.total_bytes();
  for (const std::string& name : file.names()) {
    const TensorRecord* t = file.find(name);
    r.tensors.push_back({name, dtype_name(t->dtype), t->shape_string(), t->elements()});
  }
  for (const auto& [name, dtype] : file.integer_tensors()) r.tensors.push_back({name, dtype, "(buffer, unused)", 0});
  r.checks.push_back("config.json: model_type, architecture and every field attend needs, typed and in range");
  r.checks.push_back("model.safetensors: header well-formed; dtypes, shapes and byte ranges consistent, inside the file");
  r.checks.push_back("every stored tensor mapped onto attend's names, or a pre-training head left out");
  if (!left_out.empty())
    r.checks.push_back(std::to_string(left_out.size()) + " tensor(s) of heads attend does not run left out (" + left_out[0] +
                       (left_out.size() > 1 ? ", …)" : ")"));
  if (modules.present) r.checks.push_back("modules.json: Transformer, Pooling, Dense and Normalize modules read");
  return r;
}

// tokenizer.json, else the files transformers builds the tokenizer from; empty if none.
std::string tokenizer_of(const fs::path& base) {
  for (const char* name : {"tokenizer.json", "vocab.txt", "sentencepiece.bpe.model"})
    if (fs::exists(base / name)) return (base / name).string();
  return {};
}

std::string directory_name(const fs::path& root) {
  return root.filename().string().empty() ? root.parent_path().filename().string() : root.filename().string();
}

}  // namespace

bool is_hf_encoder_config(const JsonFile& config) {
  const json& j = config.value();
  return j.is_object() && j.contains("model_type") && j["model_type"].is_string() &&
         find_family(j["model_type"].get<std::string>()) != nullptr;
}

std::string hf_encoder_model_types() {
  std::string out;
  for (const EncoderFamily* f : families()) out += (out.empty() ? "" : ", ") + std::string(f->model_type);
  return out;
}

HfEncoderFiles read_hf_encoder(const std::string& dir) {
  const fs::path root(dir);
  require_model_directory(dir);
  const SentenceTransformersModules modules = read_modules(root);
  const fs::path base = root / modules.transformer_path;
  const JsonFile config((base / "config.json").string());
  const std::string weights = weights_path(base);
  const EncoderFamily& family = family_of(config);
  const std::string architecture = architecture_of(config, family);
  refuse_unsupported(config);

  EncoderConfig c;
  c.architecture = architecture;
  c.family = family.model_type;
  c.name = directory_name(root);
  c.norm_placement = NormPlacement::post;
  family.read_config(config, c);
  read_shared_fields(config, family, c);
  if (architecture.ends_with("ForSequenceClassification")) read_classifier(config, family, c);

  auto source = std::make_shared<EncoderTensors>(weights);
  const SafetensorsFile& file = source->open(weights);
  EncoderNames names(*source, file);
  const std::string stored_base = names.has(std::string(family.prefix) + "embeddings.word_embeddings.weight") ? family.prefix : "";
  c.pooler = names.has(stored_base + "pooler.dense.weight");
  c.validate(config.path());  // before mapping: a bad field is named, not a tensor
  map_encoder(names, family, c, stored_base);
  names.reject_unused(pretraining_leftover, "a " + architecture + " attend runs");

  // sentence-transformers' modules: their configuration, then each Dense module's weights.
  if (modules.present) map_dense_modules(*source, read_sentence_transformers(root, modules, c), c);
  read_model_max_length(base, c);
  c.validate(config.path());

  HfEncoderFiles out;
  out.config = c;
  out.report = report_of(dir, architecture, modules, *source, file, names.ignored(pretraining_leftover));
  out.tokenizer = tokenizer_of(base);
  out.tensors = std::move(source);
  return out;
}

}  // namespace attend::runtime
