// CTranslate2 model directories: model.bin (+ config.json from format version 5) and
// vocabularies (shared_vocabulary.{txt,json}, or source_/target_vocabulary.{txt,json}).
//
// Read directly: the variables are presented under attend's tensor names (int8 weights
// as they are, with their per-row scales; int16 with its global scale dequantized to
// fp32 at load; float16/bfloat16 converted by the model builder), and the configuration is derived
// from the spec name and revision, the attribute variables, the aliases (shared or tied
// embeddings) and config.json. docs/model-format.md lists the mapping.
#pragma once

#include <memory>
#include <string>

#include "formats/model_files.hpp"
#include "formats/tensor_source.hpp"
#include "model/model.hpp"

namespace attend::runtime {

struct Ct2Model {
  ModelConfig config;
  std::shared_ptr<const TensorSource> tensors;  // attend names
  LoadReport report;
  std::string source_vocabulary, target_vocabulary;  // file paths, as ModelFiles::path names them (equal when shared)
  std::string unk_token;
};

// Reads and validates a CTranslate2 directory without building the model (the
// converter writes it out as attend's format; load_ct2_model builds it).
Ct2Model read_ct2_model(const std::string& dir);
Ct2Model read_ct2_model(const ModelFiles& files);

std::shared_ptr<const Model> load_ct2_model(const std::string& dir, const LoadOptions& options);
std::shared_ptr<const Model> load_ct2_model(const ModelFiles& files, const LoadOptions& options);

// CTranslate2's activation ids (common_spec.Activation); throws attend::Error naming
// `origin` for one attend does not implement.
ops::Activation activation_from_ct2(std::int64_t id, const std::string& origin);

}  // namespace attend::runtime
