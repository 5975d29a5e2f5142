#include "formats/model_conversion.hpp"

#include <unistd.h>

#include <filesystem>

#include "attend/error.hpp"
#include "attend/options.hpp"
#include "formats/ct2_model.hpp"
#include "formats/model_io.hpp"
#include "formats/model_kind.hpp"
#include "formats/typed_tensor_source.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;

namespace {

// A new directory beside `target` (same file system, so it can be renamed into place),
// hidden and named after it: `.OUT.attend-partial-PID-N`, with the permissions a new
// directory gets here.
fs::path temporary_beside(const fs::path& target) {
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  fs::create_directories(parent);
  for (int n = 0;; ++n) {
    std::string name(1, '.');
    name.append(target.filename().string()).append(".attend-partial-");
    name.append(std::to_string(::getpid())).append("-").append(std::to_string(n));
    if (fs::create_directory(parent / name)) return parent / name;
  }
}

// The input as written: its config, tensors and the files to copy beside them.
struct ConversionInput {
  ModelConfig config;
  std::shared_ptr<const TensorSource> tensors;
  std::string format;
  std::vector<fs::path> files;  // vocabularies, tokenizer models
};

ConversionInput read_input(const std::string& input_dir, const std::string& compute_type) {
  ConversionInput in;
  const ModelKind kind = detect_model(input_dir);
  if (kind != ModelKind::attend && kind != ModelKind::ct2_translator)
    throw error_of(input_dir, ": ", model_kind_name(kind),
                   " — attend convert rewrites attend's and CTranslate2's encoder-decoders; this one loads as it is");
  if (kind == ModelKind::attend) {
    if (compute_type == "default")
      throw error_of(input_dir, ": already in attend's format (config.json + model.safetensors); give a compute type "
                                "(int8, bfloat16, float32) to rewrite its weights");
    AttendModelFiles m = read_attend_model(input_dir);
    in.config = m.config, in.tensors = m.tensors, in.format = m.report.format;
    for (const auto& entry : fs::directory_iterator(input_dir)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && name != "config.json" && name != "model.safetensors") in.files.push_back(entry.path());
    }
    return in;
  }
  Ct2Model m = read_ct2_model(input_dir);
  in.config = m.config, in.tensors = m.tensors, in.format = m.report.format;
  in.files.push_back(m.source_vocabulary);
  if (m.target_vocabulary != m.source_vocabulary) in.files.push_back(m.target_vocabulary);
  return in;
}

// The tensors with the GEMM weights and token embedding tables in the type `compute_type`
// names.
std::shared_ptr<const TensorSource> typed(std::shared_ptr<const TensorSource> tensors, const std::string& compute_type) {
  if (compute_type == "default") return tensors;
  if (compute_type == "int8" || compute_type == "int8_float32") return std::make_shared<TypedTensorSource>(tensors, DType::i8);
  if (compute_type == "bfloat16") return std::make_shared<TypedTensorSource>(tensors, DType::bf16);
  if (compute_type == "float32") return std::make_shared<TypedTensorSource>(tensors, DType::f32);
  throw OptionError("compute_type", "'" + compute_type + "'", "not a type a model is stored in (default, int8, bfloat16, float32)");
}

// Writes the converted model into `dir`; returns what it wrote.
ConversionReport write_converted(const ConversionInput& in, const TensorSource& tensors, const fs::path& dir) {
  save_model(dir.string(), in.config, tensors);
  ConversionReport r;
  r.input_format = in.format;
  for (const std::string& name : tensors.names()) {
    ++r.tensors;
    r.parameters += tensors.find(name)->elements();
  }
  for (const fs::path& file : in.files) {
    const fs::path to = dir / file.filename();
    if (fs::exists(to)) continue;
    fs::copy_file(file, to);
    r.copied_files.push_back(to.filename().string());
  }
  return r;
}

}  // namespace

// Written into a temporary directory and renamed to `output_dir` at the end: a failure
// half-way (a full disk, a kill) never leaves a partial model under the name asked for.
ConversionReport convert_model(const std::string& input_dir, const std::string& output_dir, const std::string& compute_type) {
  if (fs::exists(output_dir) && !fs::is_directory(output_dir))
    throw error_of(output_dir, ": exists and is not a directory (the converted model is a directory)");
  if (fs::exists(output_dir) && !fs::is_empty(output_dir)) throw error_of(output_dir, ": exists and is not empty");
  const ConversionInput in = read_input(input_dir, compute_type);
  const std::shared_ptr<const TensorSource> tensors = typed(in.tensors, compute_type);
  fs::path target = fs::path(output_dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();  // "out/" names "out"
  const fs::path temporary = temporary_beside(target);
  try {
    ConversionReport r = write_converted(in, *tensors, temporary);
    fs::rename(temporary, target);  // replaces an empty directory of that name
    return r;
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(temporary);
    throw error_of(output_dir, ": cannot write the converted model (", e.code().message(), ")");
  } catch (...) {
    fs::remove_all(temporary);
    throw;
  }
}

}  // namespace attend::runtime
