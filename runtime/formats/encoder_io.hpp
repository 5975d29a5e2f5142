// Encoder-only model directories, whichever form they take: a Hugging Face /
// sentence-transformers directory (hf_encoder.hpp) or a CTranslate2 converted encoder
// (ct2_encoder.hpp).
#pragma once

#include <memory>
#include <string>

#include "formats/hf_encoder.hpp"
#include "model/encoder_model.hpp"

namespace attend::runtime {

// Whether `dir` holds an encoder-only model (and not an encoder-decoder).
bool is_encoder_directory(const std::string& dir);

// Reads and validates, not yet built; throws attend::Error naming the file and field.
HfEncoderFiles read_encoder(const std::string& dir);

std::shared_ptr<const EncoderModel> load_encoder(const std::string& dir, const LoadOptions& options = {});

}  // namespace attend::runtime
