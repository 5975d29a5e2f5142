// Encoder-only model directories, whichever form they take (formats/model_kind.hpp tells
// them apart): a Hugging Face / sentence-transformers directory (hf/encoder.hpp) or a
// CTranslate2 converted encoder (ct2_encoder.hpp).
#pragma once

#include <memory>
#include <string>

#include "formats/hf/encoder.hpp"
#include "model/encoder_model.hpp"

namespace attend::runtime {

// Whether `dir` holds an encoder-only model (false for an encoder-decoder, and for a
// directory detect_model refuses: the translator's loader then names what is wrong).
bool is_encoder_directory(const std::string& dir);

// Reads and validates, not yet built; throws attend::Error naming the file and field (an
// encoder-decoder is named as one).
HfEncoderFiles read_encoder(const std::string& dir);

std::shared_ptr<const EncoderModel> load_encoder(const std::string& dir, const LoadOptions& options = {});

}  // namespace attend::runtime
