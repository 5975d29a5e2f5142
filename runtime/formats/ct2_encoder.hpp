// CTranslate2's converted encoders (spec TransformerEncoderSpec: BERT, DistilBERT,
// RoBERTa, XLM-R written by ct2-transformers-converter): model.bin + config.json +
// vocabulary.{json,txt}, read directly under attend's encoder names, so a
// ctranslate2.Encoder user can switch with the same directory. docs/model-format.md
// lists the mapping.
#pragma once

#include <string>

#include "formats/hf/encoder.hpp"

namespace attend::runtime {

// The spec of the model.bin files read here (formats/model_kind.hpp tells them by it).
inline constexpr const char* kCt2EncoderSpec = "TransformerEncoderSpec";

// Throws attend::Error naming the file and the variable at fault.
HfEncoderFiles read_ct2_encoder(const std::string& dir);

}  // namespace attend::runtime
