#include "formats/hf_encoder.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "attend/error.hpp"
#include "formats/json_errors.hpp"
#include "formats/json_file.hpp"
#include "formats/sentence_transformers.hpp"
#include "formats/model_io.hpp"
#include "formats/safetensors.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

// The families attend runs: their model_type, the prefix their heads' checkpoints put
// before the base model's names, and the architectures accepted (a head attend does not
// run is refused by name; a masked-LM head is left out: the encoder is the same).
struct Family {
  std::string model_type, prefix, base;
  bool distilbert = false, roberta_positions = false;
};

const std::vector<Family>& families() {
  static const std::vector<Family> all = {{"bert", "bert.", "Bert"},
                                          {"roberta", "roberta.", "Roberta", false, true},
                                          {"xlm-roberta", "roberta.", "XLMRoberta", false, true},
                                          {"camembert", "roberta.", "Camembert", false, true},
                                          {"distilbert", "distilbert.", "DistilBert", true}};
  return all;
}

ops::Activation activation_of(const JsonFile& config, const std::string& field, const std::string& name) {
  if (name == "gelu" || name == "gelu_python") return ops::Activation::gelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return ops::Activation::gelu_tanh;
  if (name == "relu") return ops::Activation::relu;
  if (name == "silu" || name == "swish") return ops::Activation::silu;
  config.bad(field, "is '" + name + "' — attend runs gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, silu");
}

// Tensors of a directory's safetensors files under attend's names: each an alias of a
// stored tensor, or the fused QKV weight or bias made on demand from its three parts
// (and freed once packed), so loading holds no second copy of the model.
class HfTensorSource final : public TensorSource {
 public:
  explicit HfTensorSource(std::string origin) : origin_(std::move(origin)) {}

  const SafetensorsFile& open(const std::string& path) {
    files_.push_back(std::make_unique<SafetensorsFile>(path, /*integer_buffers=*/true));
    return *files_.back();
  }
  void alias(const std::string& name, const SafetensorsFile& file, const TensorRecord& stored) {
    Entry& e = entries_[name];
    e.record = stored;
    e.record.name = name;
    e.stored = stored.name;
    e.file = &file;
    order_.push_back(name);
  }
  void fused(const std::string& name, const SafetensorsFile& file, std::vector<const TensorRecord*> parts) {
    Entry& e = entries_[name];
    e.record = *parts[0];
    e.record.name = name;
    e.record.shape[0] = 0;
    for (const TensorRecord* p : parts) e.record.shape[0] += p->shape[0];
    e.record.data = nullptr, e.record.offset = 0;
    e.file = &file;
    for (const TensorRecord* p : parts) e.stored += (e.stored.empty() ? "" : " + ") + p->name;
    e.parts = std::move(parts);
    order_.push_back(name);
  }

  const std::string& origin() const override { return origin_; }
  const TensorRecord* find(const std::string& name) const override {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second.record;
  }
  std::string where(const std::string& name) const override {  // the file and the stored name(s)
    const auto it = entries_.find(name);
    if (it == entries_.end()) return TensorSource::where(name);
    return it->second.file->origin() + ": " + it->second.stored;
  }
  std::vector<std::string> names() const override { return order_; }
  std::size_t total_bytes() const override {
    std::size_t n = 0;
    for (const auto& f : files_) n += f->total_bytes();
    return n;
  }
  void acquire(const TensorRecord& t) const override {
    Entry& e = entries_.at(t.name);
    if (e.parts.empty() || e.record.data != nullptr) return;
    e.owned.resize(e.record.bytes());
    std::size_t at = 0;
    for (const TensorRecord* p : e.parts) {
      std::copy_n(p->data, p->bytes(), e.owned.data() + at);
      at += p->bytes();
    }
    e.record.data = e.owned.data();
  }
  void release(const TensorRecord& t) const override {
    Entry& e = entries_.at(t.name);
    if (e.parts.empty()) {
      e.file->release(e.record);
      return;
    }
    for (const TensorRecord* p : e.parts) e.file->release(*p);
    std::vector<std::byte>().swap(e.owned);
    e.record.data = nullptr;
  }
  void evict_all() const override {
    for (const auto& f : files_) f->evict_all();
  }
  void evict(const TensorRecord& t) const override {
    const Entry& e = entries_.at(t.name);
    if (e.parts.empty()) e.file->evict(e.record);  // (a fused tensor is memory of ours, read once)
  }

 private:
  struct Entry {
    TensorRecord record;
    std::string stored;  // the name(s) in the file, for messages ("a.weight + b.weight" when fused)
    const SafetensorsFile* file = nullptr;
    std::vector<const TensorRecord*> parts;  // fused: the stored pieces, in order
    std::vector<std::byte> owned;            // fused: their concatenation while acquired
  };
  std::string origin_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  mutable std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

// Maps the stored names of one safetensors file onto attend's, and tells which stored
// tensors were used; the rest must be ones a Hugging Face checkpoint may carry beside
// the encoder (a masked-LM head, position_ids).
class NameMapper {
 public:
  NameMapper(HfTensorSource& out, const SafetensorsFile& file) : out_(out), file_(file) {}

  bool has(const std::string& stored) const { return file_.find(stored) != nullptr; }
  const TensorRecord& stored(const std::string& name) const {
    const TensorRecord* t = file_.find(name);
    if (t == nullptr) throw error_of(file_.origin(), ": missing tensor '", name, "'");
    return *t;
  }
  void map(const std::string& attend, const std::string& hf) {
    out_.alias(attend, file_, stored(hf));
    used_.insert(hf);
  }
  // Linear `hf` (.weight, .bias) as `attend`.
  void linear(const std::string& attend, const std::string& hf, bool bias = true) {
    map(attend + ".weight", hf + ".weight");
    if (bias) map(attend + ".bias", hf + ".bias");
  }
  // A LayerNorm: weight/bias, or the legacy gamma/beta.
  void norm(const std::string& attend, const std::string& hf) {
    const bool legacy = !has(hf + ".weight") && has(hf + ".gamma");
    map(attend + ".weight", hf + (legacy ? ".gamma" : ".weight"));
    map(attend + ".bias", hf + (legacy ? ".beta" : ".bias"));
  }
  // Query, key and value projections fused into one [3D, D] weight and [3D] bias.
  void fused_qkv(const std::string& attend, const std::string& q, const std::string& k, const std::string& v) {
    for (const char* part : {".weight", ".bias"}) {
      std::vector<const TensorRecord*> parts;
      for (const std::string& hf : {q, k, v}) {
        parts.push_back(&stored(hf + part));
        used_.insert(hf + part);
      }
      for (const TensorRecord* p : parts)
        if (p->dtype != parts[0]->dtype || p->shape.size() != parts[0]->shape.size() || p->shape.empty() ||
            (p->shape.size() == 2 && p->shape[1] != parts[0]->shape[1]))
          throw error_of(file_.origin(), ": tensors '", q, part, "', '", k, part, "' and '", v, part,
                         "' differ in dtype or shape; attend fuses them into one projection");
      out_.fused(attend + part, file_, std::move(parts));
    }
  }
  // Stored tensors neither mapped nor `ignorable`: an error naming the first few.
  void reject_unused(const std::function<bool(const std::string&)>& ignorable, const std::string& what) const {
    std::vector<std::string> extra;
    for (const std::string& n : file_.names())
      if (!used_.count(n) && !ignorable(n)) extra.push_back(n);
    if (extra.empty()) return;
    std::string list;
    for (size_t i = 0; i < extra.size() && i < 5; ++i) list += (i ? ", '" : "'") + extra[i] + "'";
    throw error_of(file_.origin(), ": ", extra.size(), " tensor(s) that are not part of ", what, ": ", list,
                   extra.size() > 5 ? ", …" : "");
  }
  std::vector<std::string> ignored(const std::function<bool(const std::string&)>& ignorable) const {
    std::vector<std::string> out;
    for (const std::string& n : file_.names())
      if (!used_.count(n) && ignorable(n)) out.push_back(n);
    return out;
  }

 private:
  HfTensorSource& out_;
  const SafetensorsFile& file_;
  std::set<std::string> used_;
};

}  // namespace

bool is_hf_encoder_directory(const std::string& dir) {
  const fs::path d(dir);
  if (fs::exists(d / "modules.json")) return true;
  if (!fs::exists(d / "config.json") || !fs::exists(d / "model.safetensors")) return false;
  try {
    const json j = json::parse(read_text_file((d / "config.json").string()));
    return j.is_object() && j.contains("model_type") && !j.contains("d_model");  // attend's own config has d_model
  } catch (const std::exception&) {
    return false;
  }
}

HfEncoderFiles read_hf_encoder(const std::string& dir) {
  const fs::path root(dir);
  require_model_directory(dir);
  const SentenceTransformersModules modules = read_modules(root);
  const fs::path base = root / modules.transformer_path;
  const JsonFile config((base / "config.json").string());
  const std::string weights = (base / "model.safetensors").string();
  if (!fs::exists(weights)) {
    for (const char* other : {"pytorch_model.bin", "model.safetensors.index.json", "tf_model.h5"})
      if (fs::exists(base / other))
        throw error_of(weights, ": missing — the directory has ", other,
                       "; attend reads one model.safetensors (save_pretrained(…, safe_serialization=True) writes it)");
    throw error_of(weights, ": missing");
  }

  const std::string model_type = config.text_or("model_type", "");
  const auto family = std::find_if(families().begin(), families().end(), [&](const Family& f) { return f.model_type == model_type; });
  if (family == families().end())
    config.bad("model_type", "is '" + model_type + "' — attend runs the encoder-only families bert, roberta, xlm-roberta, camembert, distilbert");
  std::string architecture = family->base + "Model";
  if (config.has("architectures")) {
    const json& a = config.value()["architectures"];
    if (!a.is_array() || a.size() != 1 || !a[0].is_string()) config.bad("architectures", "must list one architecture");
    architecture = a[0].get<std::string>();
  }
  const std::string head = architecture.substr(std::min(architecture.size(), family->base.size()));
  const bool classifier = head == "ForSequenceClassification";
  if (architecture.rfind(family->base, 0) != 0 ||
      !(head == "Model" || head == "ForMaskedLM" || head == "ForPreTraining" || classifier))
    config.bad("architectures", "is '" + architecture + "' — attend runs " + family->base + "Model, " + family->base +
                                    "ForSequenceClassification and the encoder of " + family->base + "ForMaskedLM");
  if (config.flag_or("is_decoder", false)) config.bad("is_decoder", "is true — attend runs encoders (bidirectional attention)");
  if (config.text_or("position_embedding_type", "absolute") != "absolute")
    config.bad("position_embedding_type", "is '" + config.text_or("position_embedding_type", "") +
                                              "' — attend runs absolute position embeddings only");

  EncoderConfig c;
  c.architecture = architecture;
  c.family = model_type;
  c.name = root.filename().string().empty() ? root.parent_path().filename().string() : root.filename().string();
  c.norm_placement = NormPlacement::post;
  constexpr EncoderSizeLimits limit;
  if (family->distilbert) {
    c.d_model = config.integer_in("dim", 1, limit.d_model);
    c.num_heads = config.integer_in("n_heads", 1, limit.num_heads);
    c.ffn_dim = config.integer_in("hidden_dim", 1, limit.ffn_dim);
    c.layers = config.integer_in("n_layers", 1, limit.layers);
    c.activation = activation_of(config, "activation", config.text_or("activation", "gelu"));
    c.layer_norm_epsilon = 1e-12f;  // fixed in DistilBERT
    c.type_vocab_size = 0;
  } else {
    c.d_model = config.integer_in("hidden_size", 1, limit.d_model);
    c.num_heads = config.integer_in("num_attention_heads", 1, limit.num_heads);
    c.ffn_dim = config.integer_in("intermediate_size", 1, limit.ffn_dim);
    c.layers = config.integer_in("num_hidden_layers", 1, limit.layers);
    c.activation = activation_of(config, "hidden_act", config.text_or("hidden_act", "gelu"));
    const double eps = config.number_or("layer_norm_eps", 1e-12);
    if (!(eps > 0 && eps < 1)) config.bad("layer_norm_eps", "must be in (0, 1)");
    c.layer_norm_epsilon = static_cast<float>(eps);
    c.type_vocab_size = config.integer_in_or("type_vocab_size", 2, 0, limit.type_vocab_size);
  }
  c.vocab_size = config.integer_in("vocab_size", 1, limit.vocab_size);
  c.position_rows = config.integer_in("max_position_embeddings", 1, limit.position_rows);
  c.pad_id = static_cast<std::int32_t>(
      config.integer_in_or("pad_token_id", family->roberta_positions ? 1 : 0, 0, c.vocab_size - 1));
  // RoBERTa numbers positions from padding_idx + 1, pads at padding_idx
  // (create_position_ids_from_input_ids).
  c.position_offset = family->roberta_positions ? c.pad_id + 1 : 0;
  c.pad_positions = family->roberta_positions;

  if (classifier) {
    c.classifier = family->distilbert ? ClassifierHead::dense_relu
                   : model_type == "bert" ? ClassifierHead::pooled
                                          : ClassifierHead::dense_tanh;
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
    c.num_labels = labels.empty() ? config.integer_in_or("num_labels", 2, 1, limit.num_labels)
                                  : static_cast<std::int64_t>(labels.size());
    for (std::int64_t i = 0; i < c.num_labels; ++i) {
      const auto it = labels.find(i);
      if (!labels.empty() && it == labels.end()) config.bad("id2label", "has no label for id " + std::to_string(i));
      c.labels.push_back(it != labels.end() ? it->second : "LABEL_" + std::to_string(i));
    }
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

  // The weights, under attend's names.
  auto source = std::make_shared<HfTensorSource>(weights);
  const SafetensorsFile& file = source->open(weights);
  NameMapper n(*source, file);
  const std::string B = n.has(family->prefix + "embeddings.word_embeddings.weight") ? family->prefix : "";
  c.pooler = n.has(B + "pooler.dense.weight");
  c.validate((base / "config.json").string());  // before mapping: a bad field is named, not a tensor
  n.map("encoder.embed_tokens.weight", B + "embeddings.word_embeddings.weight");
  n.map("encoder.embed_positions.weight", B + "embeddings.position_embeddings.weight");
  if (c.type_vocab_size > 0) n.map("encoder.embed_types.weight", B + "embeddings.token_type_embeddings.weight");
  n.norm("encoder.layernorm_embedding", B + "embeddings.LayerNorm");
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string a = tensor_names::encoder_layer(l);
    if (family->distilbert) {
      const std::string h = B + "transformer.layer." + std::to_string(l) + ".";
      n.fused_qkv(a + "self_attn.qkv_proj", h + "attention.q_lin", h + "attention.k_lin", h + "attention.v_lin");
      n.linear(a + "self_attn.out_proj", h + "attention.out_lin");
      n.norm(a + "self_attn_layer_norm", h + "sa_layer_norm");
      n.linear(a + "fc1", h + "ffn.lin1");
      n.linear(a + "fc2", h + "ffn.lin2");
      n.norm(a + "final_layer_norm", h + "output_layer_norm");
    } else {
      const std::string h = B + "encoder.layer." + std::to_string(l) + ".";
      n.fused_qkv(a + "self_attn.qkv_proj", h + "attention.self.query", h + "attention.self.key", h + "attention.self.value");
      n.linear(a + "self_attn.out_proj", h + "attention.output.dense");
      n.norm(a + "self_attn_layer_norm", h + "attention.output.LayerNorm");
      n.linear(a + "fc1", h + "intermediate.dense");
      n.linear(a + "fc2", h + "output.dense");
      n.norm(a + "final_layer_norm", h + "output.LayerNorm");
    }
  }
  if (c.pooler) n.linear("pooler.dense", B + "pooler.dense");
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
  // What a checkpoint may carry beside the encoder and its head: the masked-LM or
  // next-sentence heads of pre-training, and buffers.
  const auto ignorable = [&](const std::string& name) {
    for (const char* p : {"cls.", "lm_head.", "vocab_transform.", "vocab_layer_norm.", "vocab_projector."})
      if (name.rfind(p, 0) == 0) return true;
    return name.ends_with("position_ids") || name.ends_with("token_type_ids");
  };
  n.reject_unused(ignorable, "a " + architecture + " attend runs");

  // sentence-transformers' modules: their configuration, then each Dense module's weights.
  std::vector<std::string> dense_weights;
  if (modules.present) dense_weights = read_sentence_transformers(root, modules, c);
  for (size_t i = 0; i < dense_weights.size(); ++i) {
    const SafetensorsFile& f = source->open(dense_weights[i]);
    NameMapper dn(*source, f);
    dn.linear("dense." + std::to_string(i), "linear", c.dense[i].bias);
    dn.reject_unused([](const std::string&) { return false; }, "a sentence-transformers Dense module");
  }
  // Without sentence-transformers' max_seq_length (sentence-transformers 6 keeps it in
  // the tokenizer), the tokenizer's model_max_length, as sentence-transformers reads it;
  // transformers writes a huge one for "no limit", left to the positions.
  const fs::path tokenizer_config = base / "tokenizer_config.json";
  if (c.max_seq_length == 0 && fs::exists(tokenizer_config)) {
    const JsonFile t(tokenizer_config.string());
    const double model_max_length = t.number_or("model_max_length", 0);
    if (model_max_length >= 1 && model_max_length < double(1 << 20))
      c.max_seq_length = static_cast<std::int64_t>(model_max_length);
  }
  c.validate((base / "config.json").string());

  HfEncoderFiles out;
  out.config = c;
  out.report.origin = dir;
  out.report.format = "Hugging Face (config.json + model.safetensors, " + architecture + ")";
  if (modules.present) {
    std::string list;
    for (const std::string& m : modules.names) list += (list.empty() ? "" : ", ") + m;
    out.report.format += ", sentence-transformers (" + list + ")";
  }
  out.report.file_bytes = source->total_bytes();
  for (const std::string& name : file.names()) {
    const TensorRecord* t = file.find(name);
    out.report.tensors.push_back({name, dtype_name(t->dtype), t->shape_string(), t->elements()});
  }
  for (const auto& [name, dtype] : file.integer_tensors()) out.report.tensors.push_back({name, dtype, "(buffer, unused)", 0});
  out.report.checks.push_back("config.json: model_type, architecture and every field attend needs, typed and in range");
  out.report.checks.push_back("model.safetensors: header well-formed; dtypes, shapes and byte ranges consistent, inside the file");
  out.report.checks.push_back("every stored tensor mapped onto attend's names, or a pre-training head left out");
  if (const auto left = n.ignored(ignorable); !left.empty())
    out.report.checks.push_back(std::to_string(left.size()) + " tensor(s) of heads attend does not run left out (" + left[0] +
                                (left.size() > 1 ? ", …)" : ")"));
  if (modules.present) out.report.checks.push_back("modules.json: Transformer, Pooling, Dense and Normalize modules read");
  // tokenizer.json, else the files transformers builds the tokenizer from.
  for (const char* name : {"tokenizer.json", "vocab.txt", "sentencepiece.bpe.model"})
    if (out.tokenizer.empty() && fs::exists(base / name)) out.tokenizer = (base / name).string();
  out.tensors = std::move(source);
  return out;
}

}  // namespace attend::runtime
