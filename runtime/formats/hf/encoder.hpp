// Hugging Face model directories of the BERT family, as `save_pretrained` and
// sentence-transformers write them, read with no conversion step:
//
//   config.json              the architecture (BertModel, RobertaModel, XLMRobertaModel,
//                            CamembertModel, DistilBertModel, their
//                            *ForSequenceClassification, the encoder of *ForMaskedLM)
//   model.safetensors        the weights (F32, F16, BF16), memory-mapped
//   tokenizer.json           the tokenizer (text/hf_tokenizer.hpp)
//   modules.json             sentence-transformers' pipeline: Transformer, Pooling
//   1_Pooling/config.json    (its modes), Dense (2_Dense/config.json + model.safetensors),
//   sentence_bert_config.json  Normalize; max_seq_length (formats/sentence_transformers.hpp)
//
// One reader per family (formats/hf/{bert,roberta,distilbert}.cpp, registered in
// encoder.cpp; encoder_family.hpp says what a family provides) reads the fields and the
// layer names it spells its own way; what they share — embeddings, pooler, classifier
// heads, id2label, sentence-transformers' modules, the report — is read here once. Their
// tensor names (with or without the bert./roberta./distilbert. prefix, LayerNorm
// gamma/beta or weight/bias) are presented under attend's encoder names
// (model/encoder_config.hpp: expected_encoder_tensors), the query, key and value
// projections fused into one QKV weight as the model reads it. What attend does not run
// is refused naming the file and the field. docs/model-format.md has the mapping.
#pragma once

#include <memory>
#include <string>

#include "formats/json_file.hpp"
#include "formats/tensor_source.hpp"
#include "model/encoder_config.hpp"
#include "model/model.hpp"

namespace attend::runtime {

// An encoder-only model read and validated, not yet built: from a Hugging Face directory
// (here) or a CTranslate2 converted encoder (formats/ct2_encoder.hpp).
struct HfEncoderFiles {
  EncoderConfig config;
  std::shared_ptr<const TensorSource> tensors;  // attend names
  LoadReport report;
  std::string tokenizer;  // tokenizer.json's path (else vocab.txt's or sentencepiece.bpe.model's), or empty if none
  std::string vocabulary; // CTranslate2: vocabulary.{json,txt} (tokens for forward_batch), or empty
};

// Whether config.json's model_type names a family read here (never throws).
bool is_hf_encoder_config(const JsonFile& config);
// The model_types read here, for messages: "bert, roberta, …".
std::string hf_encoder_model_types();

// Reads and validates; throws attend::Error naming the file and the field or tensor.
HfEncoderFiles read_hf_encoder(const std::string& dir);

}  // namespace attend::runtime
