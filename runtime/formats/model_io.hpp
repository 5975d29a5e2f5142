// Reading and writing encoder-decoder model directories; which kind a directory holds is
// decided by formats/model_kind.hpp:
//
//   attend format:  config.json + model.safetensors (+ tokenizer files)
//   CTranslate2:    model.bin (+ vocabulary files), read directly (ct2_model.hpp)
//   Hugging Face:   config.json of an encoder-decoder family + its weights and tokenizer
//                   files, read directly (hf/seq2seq.hpp)
#pragma once

#include <memory>
#include <string>

#include "formats/model_files.hpp"
#include "model/model.hpp"

namespace attend::runtime {

// Throws attend::Error unless `dir` is a directory, saying what it is instead: a file
// ("not a directory", naming it) or nothing ("does not exist"). Every model loader
// starts here, so the CLI, the C/C++ API and Python say the same.
void require_model_directory(const std::string& dir);

// An encoder-decoder of any kind; an encoder-only directory is named as one.
std::shared_ptr<const Model> load_model(const std::string& dir, const LoadOptions& options = {});
std::shared_ptr<const Model> load_model(const ModelFiles& files, const LoadOptions& options = {});

// An attend-format directory read and validated, not yet built (the converter rewrites it).
struct AttendModelFiles {
  ModelConfig config;
  std::shared_ptr<const TensorSource> tensors;
  LoadReport report;
};
AttendModelFiles read_attend_model(const std::string& dir);
AttendModelFiles read_attend_model(const ModelFiles& files);

// Writes `tensors` (all of them, in names() order) to a safetensors file: F32 (F16
// converted to it), BF16 as is, I8 followed by its per-row scales as 'name_scale' (F32);
// the data section starts 64-byte aligned so F32 tensors can be read in place.
void write_safetensors(const std::string& path, const TensorSource& tensors);

// Writes config.json and model.safetensors into `dir` (created if needed).
void save_model(const std::string& dir, const ModelConfig& config, const TensorSource& tensors);

// Reads a whole text file; errors name the path.
std::string read_text_file(const std::string& path);

}  // namespace attend::runtime
