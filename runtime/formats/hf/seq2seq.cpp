#include "formats/hf/seq2seq.hpp"

#include <filesystem>

#include "attend/error.hpp"
#include "formats/model_io.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;
namespace {

const std::vector<const Seq2SeqFamily*>& families() {
  static const std::vector<const Seq2SeqFamily*> all = {&marian_family(), &m2m100_family(), &mbart_family(), &bart_family(), &t5_family(), &mt5_family()};
  return all;
}

const Seq2SeqFamily* family_of(const JsonFile& config) {
  const std::string type = config.text_or("model_type", "");
  for (const Seq2SeqFamily* f : families())
    if (type == f->model_type) return f;
  return nullptr;
}

// The architecture config.json names, checked against the family's.
std::string architecture_of(const JsonFile& config, const Seq2SeqFamily& family) {
  const auto list = config.strings("architectures");
  if (!list) return std::string(family.architectures).substr(0, std::string(family.architectures).find(','));
  if (list->size() != 1) config.bad("architectures", "must name one architecture");
  const std::string& a = (*list)[0];
  const std::string accepted = std::string(", ") + family.architectures + ",";
  if (accepted.find(", " + a + ",") == std::string::npos)
    config.bad("architectures", "is '" + a + "' — attend translates with " + family.architectures);
  return a;
}

// Fields that ask for something the families' attention does not have.
void refuse_unsupported(const JsonFile& config) {
  if (config.flag_or("is_decoder", false) && !config.flag_or("is_encoder_decoder", true))
    config.bad("is_decoder", "is true — a decoder-only model, not an encoder-decoder");
  if (!config.flag_or("is_encoder_decoder", true)) config.bad("is_encoder_decoder", "is false — attend translates with encoder-decoders");
  if (config.has("attention_type") && config.text_or("attention_type", "") != "original_full")
    config.bad("attention_type", "is '" + config.text_or("attention_type", "") + "' — attend runs full attention");
}

}  // namespace

bool is_hf_seq2seq_config(const JsonFile& config) { return family_of(config) != nullptr; }

std::string hf_seq2seq_model_types() {
  std::string known;
  for (const Seq2SeqFamily* f : families()) known += (known.empty() ? "" : ", ") + std::string(f->model_type);
  return known;
}

HfSeq2SeqFiles read_hf_seq2seq(const std::string& dir) {
  require_model_directory(dir);
  const JsonFile config((fs::path(dir) / "config.json").string());
  const Seq2SeqFamily* family = family_of(config);
  if (family == nullptr)
    config.bad("model_type", "is '" + config.text_or("model_type", "") + "' — attend translates with " + hf_seq2seq_model_types());
  refuse_unsupported(config);
  HfSeq2SeqFiles out;
  out.family = family->model_type;
  out.architecture = architecture_of(config, *family);
  auto map = std::make_shared<TensorMap>(StoredWeights::open(dir));
  ModelConfig& c = out.config;
  c.name = out.architecture;
  family->read(config, *map, c);
  c.validate(config.path());
  if (const auto extra = map->unused(family->ignorable); !extra.empty()) {
    std::string list;
    for (std::size_t i = 0; i < extra.size() && i < 5; ++i) list += (i ? ", '" : "'") + extra[i] + "'";
    throw error_of(map->origin(), ": ", extra.size(), " tensor(s) that are not part of a ", out.architecture, " attend runs: ", list,
                   extra.size() > 5 ? ", …" : "");
  }

  LoadReport& r = out.report;
  r.origin = dir;
  r.format = "Hugging Face (config.json + " + map->stored_weights().describe() + ", " + out.architecture + ")";
  r.file_bytes = map->total_bytes();
  const StoredWeights& stored = map->stored_weights();
  for (const std::string& name : stored.names()) {
    const TensorRecord* t = stored.find(name);
    r.tensors.push_back({name, dtype_name(t->dtype), t->shape_string(), t->elements()});
  }
  for (const auto& [name, dtype] : stored.integer_buffers()) r.tensors.push_back({name, dtype, "(buffer, unused)", 0});
  r.checks.push_back("config.json: model_type, architecture and every field attend needs, typed and in range");
  r.checks.push_back(stored.describe() + ": well-formed; dtypes, shapes and byte ranges consistent, inside the file");
  r.checks.push_back("every stored tensor mapped onto attend's names (tied copies and recomputed position tables left out)");
  out.tensors = std::move(map);
  return out;
}

}  // namespace attend::runtime
