#include "formats/model_io.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attend/error.hpp"
#include "formats/ct2_model.hpp"
#include "formats/hf/seq2seq.hpp"
#include "formats/safetensors.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw error_of(path, ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_of(path, ": cannot open");
  std::ostringstream s;
  try {
    s << in.rdbuf();
  } catch (const std::exception& e) {  // libstdc++'s filebuf throws on a read error
    throw error_of(path, ": read error (", e.what(), ")");
  }
  if (in.bad()) throw error_of(path, ": read error");
  return s.str();
}

void require_model_directory(const std::string& dir) {
  if (fs::exists(dir) && !fs::is_directory(dir))
    throw error_of(dir, ": not a directory (a model is a directory: give the one that holds this file)");
  if (!fs::is_directory(dir)) throw error_of(dir, ": model directory does not exist");
}

namespace {

// Hugging Face encoder-decoders are read from their directory (memory-mapped weights,
// tokenizer files beside them): given as files in memory, one is named as such rather
// than misread as attend's format or reported as having no weights.
void refuse_hf_seq2seq_in_memory(const ModelFiles& files) {
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(files.read("config.json"));
  } catch (const std::exception&) {
    return;  // not JSON: the format's own reader says what is wrong
  }
  if (!config.is_object() || !config.contains("model_type") || !config["model_type"].is_string()) return;
  if (is_hf_seq2seq_config(JsonFile(files.path("config.json"), config)))
    throw error_of(files.path("config.json"), ": a Hugging Face ", config["model_type"].get<std::string>(),
                   " model — attend reads these from their directory (Model::load(dir)), not from files in memory");
}

}  // namespace

ModelFormat detect_model_format(const std::string& dir) { return detect_model_format(ModelFiles::directory(dir)); }

ModelFormat detect_model_format(const ModelFiles& files) {
  files.require_directory();
  const std::string& dir = files.name();
  const char* held = files.in_memory() ? "the files given" : "the directory";
  // A Hugging Face directory by its config.json's model_type (it may hold a
  // model.safetensors too); then by the weights file: CTranslate2 directories carry a
  // config.json too (format ≥ 5).
  if (!files.in_memory() && is_hf_seq2seq_directory(dir)) return ModelFormat::hf_seq2seq;
  if (files.in_memory() && files.has("config.json")) refuse_hf_seq2seq_in_memory(files);
  if (files.has("model.safetensors")) return ModelFormat::attend;
  if (files.has("model.bin")) return ModelFormat::ctranslate2;
  if (files.has("config.json"))  // attend's or CTranslate2's: either way the weights are missing
    throw error_of(dir, ": no weights: neither model.safetensors (attend's format, beside config.json) nor model.bin "
                        "(CTranslate2's) is in ", held);
  throw error_of(dir, files.in_memory() ? ": the files given hold no model" : ": not a model directory",
                 " (expected config.json + model.safetensors, or a CTranslate2 model.bin)");
}

AttendModelFiles read_attend_model(const std::string& dir) { return read_attend_model(ModelFiles::directory(dir)); }

AttendModelFiles read_attend_model(const ModelFiles& files) {
  const std::string& dir = files.name();
  if (!files.has("config.json")) throw error_of(dir, ": missing config.json");
  if (!files.has("model.safetensors")) throw error_of(dir, ": missing model.safetensors");
  AttendModelFiles m;
  m.config = ModelConfig::from_json(files.read("config.json"), files.path("config.json"));
  auto source = std::make_shared<SafetensorsFile>(files.open("model.safetensors"));
  m.report.origin = dir;
  m.report.format = "attend (config.json + safetensors)";
  m.report.file_bytes = source->total_bytes();
  for (const std::string& name : source->names()) {
    const TensorRecord* t = source->find(name);
    m.report.tensors.push_back({name, dtype_name(t->dtype), t->shape_string(), t->elements()});
  }
  m.report.checks.push_back("config.json: every field known, typed and in range");
  m.report.checks.push_back("model.safetensors: header well-formed; dtypes, shapes and byte ranges consistent, inside the file, not overlapping");
  m.tensors = std::move(source);
  return m;
}

std::shared_ptr<const Model> load_model(const std::string& dir, const LoadOptions& options) {
  return load_model(ModelFiles::directory(dir), options);
}

std::shared_ptr<const Model> load_model(const ModelFiles& files, const LoadOptions& options) {
  switch (detect_model_format(files)) {
    case ModelFormat::ctranslate2: return load_ct2_model(files, options);
    case ModelFormat::hf_seq2seq: {
      HfSeq2SeqFiles m = read_hf_seq2seq(files.name());
      return Model::build(std::move(m.config), std::move(m.tensors), std::move(m.report), options);
    }
    case ModelFormat::attend: break;
  }
  AttendModelFiles m = read_attend_model(files);
  return Model::build(std::move(m.config), std::move(m.tensors), std::move(m.report), options);
}

namespace {

// One tensor as written: F32 (F16 converted), BF16 as is, I8 followed by its scales.
struct WrittenTensor {
  std::string name;
  const char* dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t bytes;
};

std::vector<WrittenTensor> written_tensors(const TensorSource& tensors) {
  std::vector<WrittenTensor> out;
  for (const std::string& name : tensors.names()) {
    const TensorRecord* t = tensors.find(name);
    const auto n = static_cast<std::uint64_t>(t->elements());
    switch (t->dtype) {
      case DType::f32:
      case DType::f16: out.push_back({name, "F32", t->shape, 4 * n}); break;
      case DType::bf16: out.push_back({name, "BF16", t->shape, 2 * n}); break;
      case DType::i8: {
        const std::int64_t rows = t->shape.empty() ? 1 : t->shape[0];
        out.push_back({name, "I8", t->shape, n});
        out.push_back({name + "_scale", "F32", {rows}, 4 * static_cast<std::uint64_t>(rows)});
        break;
      }
    }
  }
  return out;
}

void write_tensor_data(std::ofstream& out, const TensorRecord& t) {
  switch (t.dtype) {
    case DType::f32:
    case DType::bf16:
      out.write(reinterpret_cast<const char*>(t.data), static_cast<std::streamsize>(t.bytes()));
      return;
    case DType::f16: {
      const std::vector<float> v = to_f32(t);
      out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
      return;
    }
    case DType::i8: {
      const std::int64_t rows = t.shape.empty() ? 1 : t.shape[0];
      out.write(reinterpret_cast<const char*>(t.data), static_cast<std::streamsize>(t.bytes()));
      out.write(reinterpret_cast<const char*>(t.scales), static_cast<std::streamsize>(rows * 4));
      return;
    }
  }
}

}  // namespace

void write_safetensors(const std::string& path, const TensorSource& tensors) {
  nlohmann::ordered_json header;
  std::uint64_t offset = 0;
  for (const WrittenTensor& w : written_tensors(tensors)) {
    header[w.name] = {{"dtype", w.dtype}, {"shape", w.shape}, {"data_offsets", {offset, offset + w.bytes}}};
    offset += w.bytes;
  }
  header["__metadata__"] = {{"format", "pt"}, {"written_by", "attend"}};
  std::string text = header.dump();
  text.append((64 - (8 + text.size()) % 64) % 64, ' ');  // data section 64-byte aligned
  std::ofstream out(path, std::ios::binary);
  if (!out) throw error_of(path, ": cannot create");
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>((text.size() >> (8 * i)) & 0xff);
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const std::string& name : tensors.names()) {
    write_tensor_data(out, *tensors.find(name));
    if (!out) break;
  }
  out.close();  // the last buffered bytes: a full disk shows here
  if (!out) throw error_of(path, ": write failed (", std::strerror(errno), ")");
}

void save_model(const std::string& dir, const ModelConfig& config, const TensorSource& tensors) {
  fs::create_directories(dir);
  const std::string config_path = (fs::path(dir) / "config.json").string();
  std::ofstream config_file(config_path);
  config_file << config.to_json();
  config_file.close();
  if (!config_file) throw error_of(config_path, ": write failed (", std::strerror(errno), ")");
  write_safetensors((fs::path(dir) / "model.safetensors").string(), tensors);
}

}  // namespace attend::runtime
