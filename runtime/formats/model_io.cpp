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
#include "formats/model_kind.hpp"
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
  const ModelKind kind = detect_model(files);
  require_model_kind(files, kind, /*encoder=*/false);
  if (kind == ModelKind::ct2_translator) return load_ct2_model(files, options);
  if (kind == ModelKind::hf_seq2seq) {
    HfSeq2SeqFiles m = read_hf_seq2seq(files.name());
    return Model::build(std::move(m.config), std::move(m.tensors), std::move(m.report), options);
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
