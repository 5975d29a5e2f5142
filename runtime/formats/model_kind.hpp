// What a model directory holds, decided in one place from the files it has, before any
// reader opens it. Every face — attend translate / embed / classify / inspect / plan /
// bench, the server, the C and C++ APIs, Python — asks here, then hands the directory
// to that kind's reader:
//
//   modules.json                                  sentence_transformers  formats/hf/encoder.hpp
//   config.json, model_type of an encoder family  hf_encoder             formats/hf/encoder.hpp
//   config.json, model_type of a seq2seq family   hf_seq2seq             formats/hf/seq2seq.hpp
//   model.safetensors (config.json without model_type)  attend           formats/model_io.hpp
//   model.bin, spec TransformerEncoderSpec        ct2_encoder            formats/ct2_encoder.hpp
//   model.bin, any other spec                     ct2_translator         formats/ct2_model.hpp
//
// A config.json with a model_type no family reads, or a directory with none of these
// files, is an error naming what was looked for. docs/model-format.md: "How a directory
// is recognised".
#pragma once

#include <string>

#include "formats/model_files.hpp"

namespace attend::runtime {

enum class ModelKind { attend, ct2_translator, ct2_encoder, hf_seq2seq, hf_encoder, sentence_transformers };

// Throws attend::Error naming the directory (and the files looked for) when nothing
// matches, or naming config.json's model_type when no family reads it.
ModelKind detect_model(const ModelFiles& files);
ModelKind detect_model(const std::string& dir);

// Encoder-only kinds (attend::Encoder, attend embed / classify) against encoder-decoders
// (attend::Translator, attend translate).
bool is_encoder_kind(ModelKind kind);

// For messages: "a Hugging Face encoder-decoder (config.json)", …
const char* model_kind_name(ModelKind kind);

// Throws attend::Error, naming the directory and what it holds instead, unless it holds
// an encoder-decoder (`encoder` false) or an encoder-only model (`encoder` true).
void require_model_kind(const ModelFiles& files, ModelKind kind, bool encoder);

}  // namespace attend::runtime
