// The architecture of an encoder-only transformer (the BERT family): what a Hugging Face
// directory's config.json (and sentence-transformers' module files) or a CTranslate2
// TransformerEncoderSpec says, in attend's terms. formats/hf/encoder.hpp and
// formats/ct2_encoder.hpp fill it; docs/model-format.md maps every field.
//
// The layers are the encoder-decoder's encoder layers (model.hpp: EncoderLayer):
//   post-LN (BERT): x = LN(x + attention(x)); x = LN(x + fc2(act(fc1(x))))
//   pre-LN:         x += attention(LN(x));    x += fc2(act(fc1(LN(x))))
// after the embeddings: token + position + token type, LayerNorm'd.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attend/ops/types.hpp"
#include "model/model_config.hpp"

namespace attend::runtime {

// How a sentence's token states become one vector (sentence-transformers' Pooling).
enum class Pooling { cls, max, mean, mean_sqrt_len, weighted_mean, last_token };
const char* pooling_name(Pooling p);  // sentence-transformers' names: "cls", "mean", "weightedmean", "lasttoken", …
// Parses those names; throws attend::Error listing them.
Pooling parse_pooling(const std::string& name);

// A sequence-classification head on top of the encoder (Hugging Face's
// *ForSequenceClassification), by family:
enum class ClassifierHead {
  none,
  pooled,      // BERT: logits = out_proj(pooler_output)
  dense_tanh,  // RoBERTa, XLM-R: logits = out_proj(tanh(dense(h[first token])))
  dense_relu,  // DistilBERT: logits = out_proj(relu(dense(h[first token])))
};

// How logits become scores: softmax (single-label), sigmoid (multi-label, and one
// logit: a cross-encoder's relevance, as sentence-transformers' CrossEncoder scores
// it), or none (regression).
enum class ScoreFunction { softmax, sigmoid, none };

// How sentence-transformers compares embeddings (its similarity_fn_name): cosine, dot
// product, and the negated euclidean and manhattan distances (larger: more similar).
enum class Similarity { cosine, dot, euclidean, manhattan };
const char* similarity_name(Similarity s);  // "cosine", "dot", "euclidean", "manhattan"
// sentence-transformers' names ("dot_product" too); false for another.
bool parse_similarity(const std::string& name, Similarity& out);

// "query" and "document": the prompt names sentence-transformers knows for every model
// (encode_query, encode_document); one the model does not define is no prompt.
bool is_standard_prompt_name(const std::string& name);

// A sentence-transformers Dense module: y = act(W·x + b), act tanh (its default) or
// the identity.
struct DenseModuleConfig {
  std::int64_t in_features = 0, out_features = 0;
  bool bias = true;
  bool tanh = true;
};

// The largest sizes attend accepts (its kernels' and tables' limits): the readers refuse
// a config.json field past them naming it, and EncoderConfig::validate checks them again.
struct EncoderSizeLimits {
  std::int64_t d_model = 1 << 16, num_heads = 1 << 10, ffn_dim = 1 << 18, layers = 1 << 10, vocab_size = 1 << 24,
               position_rows = 1 << 20, type_vocab_size = 1 << 16, num_labels = 1 << 20, dense_features = 1 << 20;
};

struct EncoderConfig {
  std::string architecture;  // "BertModel", "XLMRobertaForSequenceClassification", "TransformerEncoderSpec", …
  std::string family;        // "bert", "roberta", "xlm-roberta", "distilbert", "ctranslate2"
  std::int64_t d_model = 0, num_heads = 0, ffn_dim = 0, layers = 0;
  std::int64_t vocab_size = 0;
  std::int64_t position_rows = 0;    // rows of the position table
  std::int64_t position_offset = 0;  // the first token's position (RoBERTa: padding_idx + 1)
  // RoBERTa's create_position_ids_from_input_ids: a pad_id token inside a sequence takes
  // position pad_id and does not advance the positions of the tokens after it.
  bool pad_positions = false;
  std::int64_t type_vocab_size = 0;  // token types (0: none, DistilBERT)
  ops::Activation activation = ops::Activation::gelu;
  NormPlacement norm_placement = NormPlacement::post;
  float layer_norm_epsilon = 1e-12f;
  bool final_norm = false;           // pre-LN stacks: a LayerNorm after the last layer
  std::int32_t pad_id = 0;

  bool pooler = false;               // BERT's pooler: tanh(dense(h[first token]))
  ClassifierHead classifier = ClassifierHead::none;
  std::int64_t num_labels = 0;
  std::vector<std::string> labels;   // id2label, by id (or "LABEL_i")
  ScoreFunction scores = ScoreFunction::softmax;

  // sentence-transformers (modules.json) or its defaults for a plain model: mean pooling.
  std::vector<Pooling> pooling = {Pooling::mean};  // several: concatenated, in sentence-transformers' order
  std::vector<DenseModuleConfig> dense;
  bool normalize = false;            // a Normalize module: unit L2 norm
  std::int64_t max_seq_length = 0;   // tokens a text is truncated to, specials included (0: the positions')
  bool sentence_transformers = false;  // modules.json was read
  // config_sentence_transformers.json: prompts (name, text) in the file's order, the one
  // embed puts before texts when none is asked for ("": none), the similarity.
  std::vector<std::pair<std::string, std::string>> prompts;
  std::string default_prompt_name;
  Similarity similarity = Similarity::cosine;

  std::string name;

  std::int64_t head_dim() const { return d_model / num_heads; }
  // The text of the prompt called `name`, or null.
  const std::string* prompt(const std::string& name) const;
  // The longest sequence the position table holds.
  std::int64_t max_positions() const { return position_rows - position_offset; }
  // The tokens a text is cut to: max_seq_length within the positions.
  std::int64_t max_length() const;
  std::int64_t pooled_dim() const { return d_model * static_cast<std::int64_t>(pooling.size()); }
  // The embedding's dimension: the last Dense module's, else the pooled one.
  std::int64_t embedding_dim() const { return dense.empty() ? pooled_dim() : dense.back().out_features; }

  // Throws attend::Error naming `origin` and the field at fault (config.json's name for
  // the family: DistilBERT's n_layers, BERT's num_hidden_layers).
  void validate(const std::string& origin) const;
  // attend's view of it, as JSON (`attend inspect`).
  std::string to_json() const;
};

// attend's tensor names for an encoder-only model (docs/model-format.md), with the
// shape each must have.
std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected_encoder_tensors(const EncoderConfig& c);

}  // namespace attend::runtime
