// What one Hugging Face encoder family's reader provides (formats/hf/bert.cpp,
// roberta.cpp, distilbert.cpp): its names, the config.json fields it spells its own way
// (a function) and its layers' tensor names (data). Everything the families share (vocab_size,
// max_position_embeddings, pad_token_id, embeddings, pooler, classifier heads, id2label,
// sentence-transformers' modules) is read once by formats/hf/encoder.cpp.
//
// Adding a family: one file defining its EncoderFamily (reusing the BERT-shaped pieces
// below where its checkpoints use BERT's names), its declaration here, its entry in
// encoder.cpp's families(), and a fixture made with transformers' own class in
// tests/data/encoders/make_fixtures.py (docs/model-format.md: "Adding a family").
#pragma once

#include <cstdint>
#include <string>

#include "formats/hf/encoder_tensors.hpp"
#include "formats/json_file.hpp"
#include "model/encoder_config.hpp"
#include "model/model.hpp"  // tensor_names

namespace attend::runtime {

// One layer's stored names, each after `<prefix><layers><N>.`: the attention's query, key,
// value and output projections and its norm, the feed-forward's two linears and its norm.
struct EncoderLayerNames {
  const char* layers;  // "encoder.layer."
  const char *query, *key, *value, *attention_out, *attention_norm, *fc1, *fc2, *output_norm;
};

struct EncoderFamily {
  const char* model_type;  // config.json's: "bert"
  // Architectures <base>Model, <base>ForSequenceClassification, and the encoder of
  // <base>ForMaskedLM / <base>ForPreTraining are read; any other head is refused by name.
  const char* base;
  const char* prefix;         // the base model's stored names in a head's checkpoint: "bert."
  ClassifierHead classifier;  // what <base>ForSequenceClassification puts on top
  std::int64_t pad_fallback;  // pad_token_id when config.json has none
  bool positions_after_pad;   // positions numbered from pad + 1, pads at pad (RoBERTa)
  // config.json's sizes, activation, norm epsilon and token types onto `c`.
  void (*read_config)(const JsonFile& config, EncoderConfig& c);
  const EncoderLayerNames& layer;
};

const EncoderFamily& bert_family();
const EncoderFamily& roberta_family();
const EncoderFamily& xlm_roberta_family();
const EncoderFamily& camembert_family();
const EncoderFamily& distilbert_family();

// The BERT-shaped pieces (bert.cpp), which RoBERTa, XLM-R and CamemBERT share:
// hidden_size, num_attention_heads, intermediate_size, num_hidden_layers, hidden_act,
// layer_norm_eps, type_vocab_size…
void read_bert_config(const JsonFile& config, EncoderConfig& c);
// …and encoder.layer.N.{attention.self.{query,key,value}, attention.output.{dense,LayerNorm},
// intermediate.dense, output.{dense,LayerNorm}}.
extern const EncoderLayerNames bert_layer_names;

}  // namespace attend::runtime
