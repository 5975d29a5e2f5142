// DistilBertModel, as transformers' modeling_distilbert runs it: BERT's post-norm layers
// under other names (transformer.layer.N.{attention.{q,k,v,out}_lin, sa_layer_norm,
// ffn.lin1, ffn.lin2, output_layer_norm}) and other config.json fields (dim, n_heads,
// hidden_dim, n_layers, activation), no token types, a LayerNorm epsilon fixed at 1e-12,
// and DistilBertForSequenceClassification's head: pre_classifier + ReLU, then classifier.
#include "formats/hf/activation.hpp"
#include "formats/hf/encoder_family.hpp"

namespace attend::runtime {
namespace {

void read_distilbert_config(const JsonFile& config, EncoderConfig& c) {
  constexpr EncoderSizeLimits limit;
  c.d_model = config.integer_in("dim", 1, limit.d_model);
  c.num_heads = config.integer_in("n_heads", 1, limit.num_heads);
  c.ffn_dim = config.integer_in("hidden_dim", 1, limit.ffn_dim);
  c.layers = config.integer_in("n_layers", 1, limit.layers);
  c.activation = hf_activation(config, "activation", config.text_or("activation", "gelu"));
  c.layer_norm_epsilon = 1e-12f;  // fixed in DistilBERT
  c.type_vocab_size = 0;
}

const EncoderLayerNames distilbert_layer_names = {.layers = "transformer.layer.",
                                                  .query = "attention.q_lin",
                                                  .key = "attention.k_lin",
                                                  .value = "attention.v_lin",
                                                  .attention_out = "attention.out_lin",
                                                  .attention_norm = "sa_layer_norm",
                                                  .fc1 = "ffn.lin1",
                                                  .fc2 = "ffn.lin2",
                                                  .output_norm = "output_layer_norm"};

}  // namespace

const EncoderFamily& distilbert_family() {
  static const EncoderFamily f{.model_type = "distilbert",
                               .base = "DistilBert",
                               .prefix = "distilbert.",
                               .classifier = ClassifierHead::dense_relu,
                               .pad_fallback = 0,
                               .positions_after_pad = false,
                               .read_config = read_distilbert_config,
                               .layer = distilbert_layer_names};
  return f;
}

}  // namespace attend::runtime
