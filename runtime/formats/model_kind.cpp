#include "formats/model_kind.hpp"

#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "attend/error.hpp"
#include "formats/ct2_encoder.hpp"
#include "formats/hf/encoder.hpp"
#include "formats/hf/seq2seq.hpp"

namespace attend::runtime {
namespace {

// A Hugging Face config.json — an object naming its model_type (attend's and CTranslate2's
// config.json have none) — or nullopt; a file that is not JSON is left to the reader of
// the other files, which names what is wrong.
std::optional<JsonFile> hf_config_of(const ModelFiles& files) {
  if (!files.has("config.json")) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(files.read("config.json"));
    if (j.is_object() && j.contains("model_type") && j["model_type"].is_string()) return JsonFile(files.path("config.json"), std::move(j));
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// A Hugging Face directory: its family's kind, or an error naming model_type and the
// families attend reads.
ModelKind hf_kind(const ModelFiles& files, const JsonFile& config) {
  const std::string model_type = config.text_or("model_type", "");
  if (is_hf_encoder_config(config)) return ModelKind::hf_encoder;
  if (!is_hf_seq2seq_config(config))
    config.bad("model_type", "is '" + model_type + "' — attend reads the Hugging Face encoder families " + hf_encoder_model_types() +
                                 " and the encoder-decoder families " + hf_seq2seq_model_types() +
                                 " (besides CTranslate2's model.bin and attend's config.json + model.safetensors)");
  // Read from their directory (memory-mapped weights, tokenizer files beside them): given
  // as files in memory, one is named as such rather than misread as attend's format.
  if (files.in_memory())
    throw error_of(config.path(), ": a Hugging Face ", model_type,
                   " model — attend reads these from their directory (Model::load(dir)), not from files in memory");
  return ModelKind::hf_seq2seq;
}

// model.bin's spec name (format version ≥ 2: u32 version, then a string — u16 length
// with its NUL, the bytes); empty for an older or truncated file, which the reader names.
std::string ct2_spec_name(const ModelFiles& files) {
  const auto file = files.open("model.bin");
  const auto* p = reinterpret_cast<const unsigned char*>(file->data());
  const std::size_t size = file->size();
  if (size < 6) return {};
  std::uint32_t version = 0;
  std::uint16_t length = 0;
  std::memcpy(&version, p, 4);
  std::memcpy(&length, p + 4, 2);
  if (version < 2 || size < 6u + length) return {};
  std::string name(reinterpret_cast<const char*>(p + 6), length);
  if (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

}  // namespace

ModelKind detect_model(const std::string& dir) { return detect_model(ModelFiles::directory(dir)); }

ModelKind detect_model(const ModelFiles& files) {
  files.require_directory();
  if (files.has("modules.json")) return ModelKind::sentence_transformers;
  if (const auto config = hf_config_of(files)) return hf_kind(files, *config);
  if (files.has("model.safetensors")) return ModelKind::attend;
  if (files.has("model.bin")) return ct2_spec_name(files) == kCt2EncoderSpec ? ModelKind::ct2_encoder : ModelKind::ct2_translator;
  const std::string& dir = files.name();
  if (files.has("config.json"))  // attend's or CTranslate2's: either way the weights are missing
    throw error_of(dir, ": no weights: neither model.safetensors (attend's format, beside config.json) nor model.bin "
                        "(CTranslate2's) is in ", files.in_memory() ? "the files given" : "the directory",
                   ", and config.json names no Hugging Face model_type");
  throw error_of(dir, files.in_memory() ? ": the files given hold no model" : ": not a model directory",
                 " (looked for model.bin (CTranslate2), config.json (Hugging Face: its model_type; attend's: with "
                 "model.safetensors) and modules.json (sentence-transformers))");
}

bool is_encoder_kind(ModelKind kind) {
  return kind == ModelKind::ct2_encoder || kind == ModelKind::hf_encoder || kind == ModelKind::sentence_transformers;
}

const char* model_kind_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::attend: return "an attend encoder-decoder (config.json + model.safetensors)";
    case ModelKind::ct2_translator: return "a CTranslate2 encoder-decoder (model.bin)";
    case ModelKind::ct2_encoder: return "a CTranslate2 encoder (model.bin, TransformerEncoderSpec)";
    case ModelKind::hf_seq2seq: return "a Hugging Face encoder-decoder (config.json)";
    case ModelKind::hf_encoder: return "a Hugging Face encoder (config.json)";
    case ModelKind::sentence_transformers: return "a sentence-transformers encoder (modules.json)";
  }
  return "a model";
}

void require_model_kind(const ModelFiles& files, ModelKind kind, bool encoder) {
  if (is_encoder_kind(kind) == encoder) return;
  if (encoder)
    throw error_of(files.name(), ": ", model_kind_name(kind), ", not an encoder-only model — use `attend translate`");
  throw error_of(files.name(), ": ", model_kind_name(kind),
                 ", not an encoder-decoder — use `attend embed` or `attend classify` (attend::Encoder)");
}

}  // namespace attend::runtime
