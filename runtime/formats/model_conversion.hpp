// Converting a model directory to attend's format (`attend convert`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attend::runtime {

struct ConversionReport {
  std::string input_format;
  std::int64_t tensors = 0, parameters = 0;
  std::vector<std::string> copied_files;  // vocabularies, tokenizer models
};

// Reads a CTranslate2 directory (model.bin + vocabularies) and writes `output_dir`:
// config.json, model.safetensors (F32; quantized weights as their dequantized values,
// so the converted model decodes exactly like the original), and the vocabulary
// files. Throws attend::Error if `input_dir` is already in attend's format.
ConversionReport convert_model(const std::string& input_dir, const std::string& output_dir);

}  // namespace attend::runtime
