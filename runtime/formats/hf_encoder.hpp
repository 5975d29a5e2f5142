// Hugging Face model directories of the BERT family, as `save_pretrained` and
// sentence-transformers write them, read with no conversion step:
//
//   config.json              the architecture (BertModel, RobertaModel, XLMRobertaModel,
//                            DistilBertModel, their *ForSequenceClassification, …)
//   model.safetensors        the weights (F32, F16, BF16), memory-mapped
//   tokenizer.json           the tokenizer (text/hf_tokenizer.hpp)
//   modules.json             sentence-transformers' pipeline: Transformer, Pooling
//   1_Pooling/config.json    (its modes), Dense (2_Dense/config.json + model.safetensors),
//   sentence_bert_config.json  Normalize; max_seq_length
//
// Their tensor names (with or without the bert./roberta./distilbert. prefix, LayerNorm
// gamma/beta or weight/bias) are presented under attend's encoder names
// (model/encoder_config.hpp: expected_encoder_tensors), the query, key and value
// projections fused into one QKV weight as the model reads it. What attend does not run
// is refused naming the file and the field. docs/model-format.md has the mapping.
#pragma once

#include <memory>
#include <string>

#include "formats/tensor_source.hpp"
#include "model/encoder_config.hpp"
#include "model/model.hpp"

namespace attend::runtime {

struct HfEncoderFiles {
  EncoderConfig config;
  std::shared_ptr<const TensorSource> tensors;  // attend names
  LoadReport report;
  std::string tokenizer;  // tokenizer.json's path (else vocab.txt's or sentencepiece.bpe.model's), or empty if none
  std::string vocabulary; // CTranslate2: vocabulary.{json,txt} (tokens for forward_batch), or empty
};

// Whether `dir` holds a Hugging Face encoder: a config.json with a model_type and a
// model.safetensors (or sentence-transformers' modules.json).
bool is_hf_encoder_directory(const std::string& dir);

// Reads and validates; throws attend::Error naming the file and the field or tensor.
HfEncoderFiles read_hf_encoder(const std::string& dir);

}  // namespace attend::runtime
