// Reading and writing model directories.
//
//   attend format:  config.json + model.safetensors (+ tokenizer files)
//   CTranslate2:    model.bin (+ vocabulary files), read directly (ct2_model.hpp)
#pragma once

#include <memory>
#include <string>

#include "model/model.hpp"

namespace attend::runtime {

enum class ModelFormat { attend, ctranslate2 };

// Which format `dir` holds; throws attend::Error naming the directory if neither.
ModelFormat detect_model_format(const std::string& dir);

std::shared_ptr<const Model> load_model(const std::string& dir, const LoadOptions& options = {});

// Writes `tensors` (all of them, in names() order, F16/BF16 converted) to a safetensors
// file of F32 tensors; the data section starts 64-byte aligned so they can be read in place.
void write_safetensors(const std::string& path, const TensorSource& tensors);

// Writes config.json and model.safetensors into `dir` (created if needed).
void save_model(const std::string& dir, const ModelConfig& config, const TensorSource& tensors);

// Reads a whole text file; errors name the path.
std::string read_text_file(const std::string& path);

}  // namespace attend::runtime
