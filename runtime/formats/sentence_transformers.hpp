// sentence-transformers' files around a Hugging Face encoder: modules.json (the
// pipeline: Transformer, Pooling, Dense…, Normalize), 1_Pooling/config.json,
// 2_Dense/config.json, sentence_bert_config.json (max_seq_length) and
// config_sentence_transformers.json (prompts, default_prompt_name, similarity_fn_name),
// read as sentence-transformers reads them into attend's EncoderConfig. The Dense
// modules' weights are read with the encoder's (hf/encoder.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/encoder_config.hpp"

namespace attend::runtime {

// modules.json: the Transformer's folder, then Pooling, Dense and Normalize in order.
struct SentenceTransformersModules {
  std::string transformer_path;  // relative to the directory ("" for the root)
  std::string pooling_path;
  std::vector<std::string> dense_paths;
  bool normalize = false;
  bool present = false;            // the directory has a modules.json
  std::vector<std::string> names;  // for the report
};

// An empty (not present) result without modules.json; throws attend::Error naming the
// file and the module for anything attend does not run.
SentenceTransformersModules read_modules(const std::filesystem::path& dir);

// The modules' configuration into `config` (whose d_model is set): pooling, Dense
// modules, Normalize, max_seq_length, prompts and similarity. Returns each Dense
// module's model.safetensors path, in order. Throws attend::Error naming the file and
// the field.
std::vector<std::string> read_sentence_transformers(const std::filesystem::path& dir,
                                                    const SentenceTransformersModules& modules, EncoderConfig& config);

}  // namespace attend::runtime
