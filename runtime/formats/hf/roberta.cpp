// RobertaModel, XLMRobertaModel and CamembertModel: BERT's layers and config.json fields
// (bert.cpp) with RoBERTa's positions — numbered from padding_idx + 1, pads at padding_idx
// (transformers' create_position_ids_from_input_ids), pad 1 unless config.json says —
// and its classification head: dense + tanh on the first token, then out_proj (no pooler).
#include "formats/hf/encoder_family.hpp"

namespace attend::runtime {
namespace {

// RoBERTa's rules under a family's names.
EncoderFamily roberta_shaped(const char* model_type, const char* base) {
  return {.model_type = model_type,
          .base = base,
          .prefix = "roberta.",
          .classifier = ClassifierHead::dense_tanh,
          .pad_fallback = 1,
          .positions_after_pad = true,
          .read_config = read_bert_config,
          .layer = bert_layer_names};
}

}  // namespace

const EncoderFamily& roberta_family() {
  static const EncoderFamily f = roberta_shaped("roberta", "Roberta");
  return f;
}

const EncoderFamily& xlm_roberta_family() {
  static const EncoderFamily f = roberta_shaped("xlm-roberta", "XLMRoberta");
  return f;
}

const EncoderFamily& camembert_family() {
  static const EncoderFamily f = roberta_shaped("camembert", "Camembert");
  return f;
}

}  // namespace attend::runtime
