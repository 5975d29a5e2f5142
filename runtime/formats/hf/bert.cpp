// BertModel and its heads, as transformers' modeling_bert runs them: post-norm layers,
// token-type embeddings, positions from 0, pad 0, a pooler (tanh of a dense layer on the
// first token) that BertForSequenceClassification's classifier reads. Its layer names
// and config.json fields are shared by RoBERTa, XLM-R and CamemBERT (roberta.cpp).
#include "formats/hf/activation.hpp"
#include "formats/hf/encoder_family.hpp"

namespace attend::runtime {

void read_bert_config(const JsonFile& config, EncoderConfig& c) {
  constexpr EncoderSizeLimits limit;
  c.d_model = config.integer_in("hidden_size", 1, limit.d_model);
  c.num_heads = config.integer_in("num_attention_heads", 1, limit.num_heads);
  c.ffn_dim = config.integer_in("intermediate_size", 1, limit.ffn_dim);
  c.layers = config.integer_in("num_hidden_layers", 1, limit.layers);
  c.activation = hf_activation(config, "hidden_act", config.text_or("hidden_act", "gelu"));
  const double eps = config.number_or("layer_norm_eps", 1e-12);
  if (!(eps > 0 && eps < 1)) config.bad("layer_norm_eps", "must be in (0, 1)");
  c.layer_norm_epsilon = static_cast<float>(eps);
  c.type_vocab_size = config.integer_in_or("type_vocab_size", 2, 0, limit.type_vocab_size);
}

const EncoderLayerNames bert_layer_names = {.layers = "encoder.layer.",
                                            .query = "attention.self.query",
                                            .key = "attention.self.key",
                                            .value = "attention.self.value",
                                            .attention_out = "attention.output.dense",
                                            .attention_norm = "attention.output.LayerNorm",
                                            .fc1 = "intermediate.dense",
                                            .fc2 = "output.dense",
                                            .output_norm = "output.LayerNorm"};

const EncoderFamily& bert_family() {
  static const EncoderFamily f{.model_type = "bert",
                               .base = "Bert",
                               .prefix = "bert.",
                               .classifier = ClassifierHead::pooled,
                               .pad_fallback = 0,
                               .positions_after_pad = false,
                               .read_config = read_bert_config,
                               .layer = bert_layer_names};
  return f;
}

}  // namespace attend::runtime
