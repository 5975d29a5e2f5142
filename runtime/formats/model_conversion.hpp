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

// Writes the model in `input_dir` (a CTranslate2 directory: model.bin + vocabularies; or,
// to change its weight type, one in attend's format) to `output_dir` in attend's format:
// config.json, model.safetensors and the vocabulary/tokenizer files.
//
// `compute_type` chooses the type of the GEMM weights and token embedding tables in the
// file (the other tensors keep theirs; float16 becomes F32): "default" keeps what the input stores (CTranslate2's
// int8 stays I8 with its scales, so the model decodes exactly like the original),
// "int8" (alias "int8_float32") quantizes per row as CTranslate2 does, "bfloat16"
// rounds, "float32" dequantizes. Throws attend::Error for an attend-format input with
// "default" (nothing to convert) or an unknown compute type.
ConversionReport convert_model(const std::string& input_dir, const std::string& output_dir,
                               const std::string& compute_type = "default");

}  // namespace attend::runtime
