// attend — encoder-only transformers (the BERT family): sentence embeddings,
// classification and reranking, straight from Hugging Face / sentence-transformers
// directories or CTranslate2's converted encoders. Included by attend/attend.hpp.
//
//   attend::Encoder encoder("all-MiniLM-L6-v2/");                 // once; thread-safe
//   auto vectors = encoder.embed({"Hello world.", "How are you?"}); // as sentence-transformers
//   auto out = encoder.forward_ids({{101, 7592, 102}});             // as ctranslate2.Encoder
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attend/error.hpp"

namespace attend {

struct ModelInfo;
struct AttentionHeads;

struct EncoderOptions {
  std::string isa;                       // "avx512", "avx2", "sse2"; empty: the best here (or $ATTEND_ISA)
  std::string compute_type = "default";  // CTranslate2's names: default, auto, float32, int8, bfloat16
  int threads = 0;                       // all compute threads (0: one per core)
  int inter_threads = 0;                 // batches run at once (0: chosen)
  int intra_threads = 0;                 // compute threads per batch (0: threads / inter_threads)
  std::int64_t max_batch_size = 32;      // sequences per batch
  std::int64_t max_batch_tokens = 8192;  // tokens per batch, packed (no padding); batches are
                                         // cut further to 512 per compute thread (memory
                                         // stays flat, the GEMMs run on chunks that size)
  // Tokens a text is cut to, special tokens included (0: sentence-transformers'
  // max_seq_length, else the model's positions). Sequences given as ids may be as long
  // as max_length when it is set, else as the model's positions (as CTranslate2's
  // forward_batch: max_seq_length is about texts).
  std::int64_t max_length = 0;
  // The pooling of the embeddings, sentence-transformers' names (cls, mean, max,
  // mean_sqrt_len, weightedmean, lasttoken); empty: the model's (1_Pooling), mean
  // without one.
  std::string pooling;
};

struct EmbedOptions {
  // L2 normalisation of the embeddings: -1 as the model (a Normalize module), 0 never,
  // 1 always (sentence-transformers' normalize_embeddings=True).
  int normalize = -1;
  // sentence-transformers' prompts (config_sentence_transformers.json), put before every
  // text as its encode(prompt=, prompt_name=) does: `prompt` itself when set; else the
  // model's prompt named `prompt_name` (an unknown name is an attend::Error listing the
  // model's); else the model's default_prompt_name's, if it has one. embed() only: ids
  // are taken as they are.
  std::optional<std::string> prompt;
  std::string prompt_name;
};

// CTranslate2's EncoderForwardOutput for one sequence.
struct EncoderOutput {
  std::int64_t length = 0, hidden_size = 0;
  std::vector<float> last_hidden_state;  // [length, hidden_size], row-major
  std::vector<float> pooler_output;      // [hidden_size] (models with a pooler), else empty
};

// A text's (or pair's) class: the label of the largest logit.
struct Classification {
  std::vector<float> logits;
  std::vector<float> scores;  // softmax (single-label), sigmoid (multi-label; one logit: a
                              // cross-encoder's relevance), or the logits (regression)
  std::int32_t label = 0;
  std::string label_name;     // config.json's id2label
  float score = 0;            // scores[label]
};

// How embed() tokenized a text: ids with the model's special tokens, truncated as embed
// truncates.
struct TokenizedText {
  std::vector<std::int32_t> ids, type_ids;
  std::vector<std::string> tokens;
  // The text each token came from: 0 the text (a pair's first), 1 a pair's second, -1 a
  // special token the tokenizer added (Hugging Face's Encoding.sequence_ids).
  std::vector<std::int32_t> sequence_ids;
  bool truncated = false;
  bool invalid_utf8 = false;  // invalid UTF-8 was replaced by U+FFFD
};

struct EncoderInfo {
  std::string architecture;         // "BertModel", "XLMRobertaForSequenceClassification", …
  std::int64_t hidden_size = 0, embedding_dim = 0, max_length = 0, vocabulary_size = 0;
  std::string pooling;              // "mean", "cls+max", …
  bool normalize = false;           // the model normalises its embeddings
  bool has_pooler = false, has_tokenizer = false;
  std::vector<std::string> labels;  // a classifier's labels, by id
  // sentence-transformers' config_sentence_transformers.json: the prompts (name, text),
  // the one embed uses by default ("": none), and similarity_fn_name ("cosine", "dot",
  // "euclidean", "manhattan"; cosine without one).
  std::vector<std::pair<std::string, std::string>> prompts;
  std::string default_prompt_name;
  std::string similarity = "cosine";
};

// One plan step's share of the profiled calls (summed over them; seconds over the
// batches that ran at once too).
struct EncoderStepProfile {
  std::string phase, kind, name;
  double seconds = 0;
  double quantize_seconds = 0;  // of `seconds`: an int8 linear step's quantizing of its input
  double multiply_adds = 0;     // a linear step's M·N·K, attention's QKᵀ and PV; else 0
};

// Loads an encoder-only model and runs it: thread-safe (concurrent calls each get their
// own workspace), batches formed by tokens and packed without padding.
class ATTEND_API Encoder {
 public:
  explicit Encoder(const std::string& directory, const EncoderOptions& options = {});
  ~Encoder();
  Encoder(Encoder&&) noexcept;
  Encoder& operator=(Encoder&&) noexcept;

  using EmbeddingCallback = std::function<void(std::size_t index, std::vector<float>&& embedding)>;

  // Sentence embeddings, as sentence-transformers' encode: texts tokenized by the
  // model's tokenizer.json (cut to max_length), the last hidden state pooled, Dense
  // modules, normalised as asked. One vector per text, in order (an empty text embeds
  // "[CLS] [SEP]" as the model does). With a callback, each goes there as soon as its
  // batch ends (any order) and the result is empty.
  std::vector<std::vector<float>> embed(const std::vector<std::string>& texts, const EmbedOptions& options = {},
                                        const EmbeddingCallback& on_embedding = {}) const;
  std::vector<std::vector<float>> embed_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                            const EmbedOptions& options = {},
                                            const EmbeddingCallback& on_embedding = {}) const;
  // CTranslate2's Encoder.forward_batch: the last hidden state (and pooler output) of
  // each sequence of ids; token_type_ids empty, or one list per sequence.
  std::vector<EncoderOutput> forward_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                         const std::vector<std::vector<std::int32_t>>& token_type_ids = {}) const;
  // A *ForSequenceClassification model's classes: of texts, of sentence pairs
  // (cross-encoders, with token types), or of ids.
  std::vector<Classification> classify(const std::vector<std::string>& texts) const;
  std::vector<Classification> classify_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) const;
  std::vector<Classification> classify_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                           const std::vector<std::vector<std::int32_t>>& token_type_ids = {}) const;
  // Every layer and head's self-attention of one sequence of ids (what embed_ids runs):
  // AttentionHeads::encoder_self [layers, heads, length, length], source_ids,
  // source_type_ids (as given) and source_tokens (the model's tokenizer.json or
  // vocabulary tokens, decimal ids without either); an encoder-only model has no
  // decoder, so decoder_self and cross stay empty (0 layers). Recomputed only when
  // asked, through the same plan and kernels. Throws as embed_ids does.
  AttentionHeads attention_heads(const std::vector<std::int32_t>& ids,
                                 const std::vector<std::int32_t>& token_type_ids = {}) const;
  // The same for a text, or a sentence pair (a cross-encoder's query and passage),
  // tokenized as embed and classify tokenize it: source_texts holds the text(s),
  // source_sequence_ids which text each token came from (sentence A or B). Throws as
  // tokenize does.
  AttentionHeads text_attention_heads(const std::string& text) const;
  AttentionHeads text_attention_heads(const std::string& first, const std::string& second) const;

  // Why embed_ids, forward_ids, classify_ids or attention_heads would refuse one
  // sequence (no tokens, more than max_length, an id or token type outside the model's),
  // or "" when they would not — for a caller that names the sequence its own way ("line
  // 7: id 40000 (token 3 of 5) is outside the vocabulary [0, 30522)"). A model without
  // token type embeddings (DistilBERT) ignores token types, as transformers does.
  std::string input_problem(const std::vector<std::int32_t>& ids,
                            const std::vector<std::int32_t>& token_type_ids = {}) const;

  // The text embed(texts, options) puts before every text ("" for none): options.prompt,
  // the model's prompt named options.prompt_name, or its default prompt. Throws
  // attend::Error for a prompt name the model does not have.
  std::string prompt_text(const EmbedOptions& options) const;

  // The model's tokenizer, as embed and classify use it.
  TokenizedText tokenize(const std::string& text) const;
  // Many texts, each as tokenize(prompt + text), on the encoder's threads (embed's own
  // first step). Throws the first failing text's attend::Error.
  std::vector<TokenizedText> tokenize(const std::vector<std::string>& texts, const std::string& prompt = "") const;
  TokenizedText tokenize_pair(const std::string& first, const std::string& second) const;
  std::int32_t token_to_id(const std::string& token) const;  // CTranslate2's tokens in: the vocabulary's id, or its unknown token's

  EncoderInfo encoder_info() const;
  ModelInfo info() const;                // `attend inspect`
  std::string plan_description() const;  // `attend plan`
  int inter_threads() const;
  int intra_threads() const;

  // Profiling (off by default): time per plan step, summed over calls.
  void set_profiling(bool on) const;
  std::vector<EncoderStepProfile> profile() const;
  void reset_profile() const;
  std::int64_t tokens_processed() const;  // since the last reset_profile

  struct State;  // opaque: the runtime's model, runner and tokenizer

 private:
  friend struct EncoderInternals;  // the library's own (the server reads the tokenizer)
  std::unique_ptr<State> state_;
};

// Whether `directory` holds an encoder-only model (Hugging Face / sentence-transformers
// BERT family, or CTranslate2's TransformerEncoderSpec) rather than an encoder-decoder.
ATTEND_API bool is_encoder_model(const std::string& directory);

}  // namespace attend
