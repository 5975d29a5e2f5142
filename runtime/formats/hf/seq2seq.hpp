// Hugging Face encoder-decoder directories, as save_pretrained writes them and the hub
// serves them, read with no conversion step:
//
//   config.json             the architecture: MarianMTModel, BartForConditionalGeneration,
//                           MBartForConditionalGeneration, M2M100ForConditionalGeneration
//                           (M2M100 and NLLB-200), T5ForConditionalGeneration,
//                           MT5ForConditionalGeneration
//   model.safetensors …     the weights (formats/hf/stored_weights.hpp)
//   generation_config.json  generate()'s defaults (formats/hf/generation_config.hpp)
//   tokenizer files         text/seq2seq/
//
// One reader per family (formats/hf/{marian,bart,m2m100,t5}.cpp) maps config.json onto
// attend's model description (model/model_config.hpp) and the stored tensor names onto
// attend's (formats/hf/tensor_map.hpp); what attend does not run is refused naming the
// file and the field or tensor. docs/model-format.md lists each family's fields.
#pragma once

#include <memory>
#include <string>

#include "formats/json_file.hpp"
#include "formats/hf/tensor_map.hpp"
#include "model/model.hpp"

namespace attend::runtime {

struct HfSeq2SeqFiles {
  ModelConfig config;
  std::shared_ptr<const TensorSource> tensors;  // attend names
  LoadReport report;
  std::string family;        // "marian", "bart", "mbart", "m2m100", "t5"
  std::string architecture;  // config.json's
};

// A family's reader: config.json onto `c` (every field it needs, checked), the stored
// tensors onto attend's names in `map`. Stored tensors it leaves unmapped must be ones
// `ignorable` accepts.
struct Seq2SeqFamily {
  const char* model_type;
  const char* architectures;  // the architectures accepted, comma-separated
  void (*read)(const JsonFile& config, TensorMap& map, ModelConfig& c);
  bool (*ignorable)(const std::string& stored);
};
const Seq2SeqFamily& marian_family();
const Seq2SeqFamily& bart_family();
const Seq2SeqFamily& mbart_family();
const Seq2SeqFamily& m2m100_family();
const Seq2SeqFamily& t5_family();
const Seq2SeqFamily& mt5_family();

// Whether config.json names a model_type one of the families reads.
bool is_hf_seq2seq_config(const JsonFile& config);
// The model_types read here, for messages: "marian, m2m100, …".
std::string hf_seq2seq_model_types();

// Reads and validates; throws attend::Error naming the file and the field or tensor.
HfSeq2SeqFiles read_hf_seq2seq(const std::string& dir);

}  // namespace attend::runtime
