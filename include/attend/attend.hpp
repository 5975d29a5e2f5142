// attend — encoder-decoder transformer inference. The C++ API.
//
//   auto model = attend::Model::load("models/en-de");          // once; share it freely
//   attend::Translator translator(model, {.threads = 4});      // thread-safe
//   auto results = translator.translate_text({"Hello world."});
//   std::cout << results[0].hypotheses[0].text << "\n";
//
// Every failure is an attend::Error whose message names what and where (the file and
// tensor of a bad model, the sentence and token of a bad input, the option at fault).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attend/error.hpp"
#include "attend/options.hpp"

namespace attend {

namespace runtime {
class Model;
class ModelFiles;
class Translator;
}  // namespace runtime

struct LoadOptions {
  std::string isa;  // "avx512", "avx2", "sse2"; empty: the best this CPU has (or $ATTEND_ISA)
  // The arithmetic of the GEMMs, with CTranslate2's names: "default" (the type the model
  // is stored in: int8 models compute in int8, the others in float32), "auto" (the
  // fastest this CPU supports), "float32", "int8" (alias "int8_float32": int8 weights and
  // activations, int32 accumulation, float32 elsewhere), "bfloat16", "int8_bfloat16".
  std::string compute_type = "default";
  // The decoder's attention caches (the keys and values every decoding step reads):
  // "default" (bfloat16 when compute_type is int8 or bfloat16 — half the bytes each step
  // streams — else float32), "float32", "bfloat16". Attention itself computes in float32
  // either way; CTranslate2 keeps float32 caches, so "float32" is its arithmetic
  // (docs/model-format.md#compute-types says how close that comes to its int8 results).
  std::string kv_cache_type = "default";
  // Which decoding semantics apply: "auto" (transformers' generate() for a Hugging Face
  // directory, CTranslate2's for the others), "transformers" or "ctranslate2"
  // (docs/model-format.md: the differences).
  std::string decoding_rules = "auto";
};

struct TensorInfo {
  std::string name, dtype, shape;
  std::int64_t elements = 0;
};

struct ModelInfo {
  std::string directory, format;   // "attend (config.json + safetensors)", "CTranslate2 model.bin v2 …"
  std::uint64_t file_bytes = 0;
  std::int64_t parameters = 0;
  std::string config_json;         // the architecture, as attend's config.json
  std::vector<TensorInfo> tensors;
  std::vector<std::string> checks; // what loading verified
  std::string text_tokenizer;      // "SentencePiece (source.spm, target.spm)", or empty
  std::string vocabulary;          // "source_vocabulary.txt, target_vocabulary.txt", or empty
  std::string isa;                 // kernels the weights are packed for
  std::string compute_type;        // "float32", "int8", "bfloat16", … (the one chosen)
  std::string compute_type_reason; // why: asked for, the model's stored type, the CPU's best
  std::string kv_cache_type;       // "float32" or "bfloat16": the attention caches chosen
  std::string decoding_rules;      // "transformers generate()" or "CTranslate2", and why
  std::vector<std::string> generation_defaults;  // what generation_config.json gave, field by field
  std::string vocabulary_map;      // "vmap.txt (N rules)" when the model has one (use_vmap), or empty
};

// A loaded model: weights packed for the kernels, tokenizers if the directory has them.
// Immutable; copies share it; safe to use from many threads.
class ATTEND_API Model {
 public:
  // A directory in attend's format or CTranslate2's (docs/model-format.md).
  static Model load(const std::string& directory, const LoadOptions& options = {});
  // The same files held in memory, by file name ("model.bin", "source_vocabulary.txt",
  // "vmap.txt", … as the directory would hold them): nothing is read from disk
  // (CTranslate2's Translator(files=…)). `name` stands for the directory in messages
  // and ModelInfo. The model keeps the bytes it reads in place for its lifetime.
  static Model load_from_memory(const std::string& name, std::map<std::string, std::string> files,
                                const LoadOptions& options = {});
  // Deterministic random weights in a named shape: "tiny", "base" (Transformer-base),
  // "big". For benchmarks and tests; no tokenizer.
  static Model preset(const std::string& name, std::uint64_t seed = 1, const LoadOptions& options = {});

  ModelInfo info() const;
  bool has_text_tokenizer() const;  // SentencePiece models: translate_text works
  bool has_vocabulary() const;      // token vocabularies: translate_tokens works
  bool has_vocabulary_map() const;  // vmap.txt: TranslationOptions::use_vmap works
  std::int64_t max_positions() const;
  std::int64_t source_vocabulary_size() const;
  std::int64_t target_vocabulary_size() const;

  struct SpecialIds {
    std::int32_t pad = 0, bos = 0, eos = 0, unk = 0, decoder_start = 0;  // unk: the target vocabulary's;
                                                                          // bos −1: none (a CTranslate2 Marian)
    std::int32_t source_unk = 0;  // the source vocabulary's unknown token (what bad source ids are read as)
  };
  SpecialIds special_ids() const;

  // The conversions the translator applies, for callers that pre-process (the CLI
  // truncates and validates between the two). Source-side results carry the BOS/EOS
  // the model adds to sources; target-side ones (forced prefixes) do not.
  enum class Side { source, target };
  std::vector<std::int32_t> encode_text(const std::string& line, Side side = Side::source) const;
  // A source line with the model's language tokens placed as its transformers tokenizer
  // places them (TranslationOptions::source_lang / target_lang; "" for none: the
  // tokenizer's own default, as encode_text). A code the model lacks is an attend::Error
  // listing its codes.
  std::vector<std::int32_t> encode_source(const std::string& line, const std::string& source_lang,
                                          const std::string& target_lang) const;
  // The target tokens every translation is forced to begin with: the target language's
  // code (M2M100, NLLB, mBART-50), else generation_config.json's forced_bos_token_id
  // under transformers' rules (BART's <s>); empty for none. The translate_* calls put
  // them before any prefix given.
  std::vector<std::int32_t> forced_target_prefix(const std::string& target_lang) const;
  std::vector<std::int32_t> encode_tokens(const std::vector<std::string>& tokens, Side side = Side::source) const;
  std::string decode_text(const std::vector<std::int32_t>& target_ids) const;
  std::vector<std::string> decode_tokens(const std::vector<std::int32_t>& ids, Side side = Side::target) const;
  std::string decode_pieces(const std::vector<std::string>& target_tokens) const;  // SentencePiece models: tokens as text
  // Cuts an encoded source to `max_length` ids, keeping the end-of-sequence the model
  // appends to sources (if it does) as the last id. Returns whether anything was cut.
  bool truncate_source(std::vector<std::int32_t>& ids, std::int64_t max_length) const;
  // A source line through the SentencePiece model (encode_text), cut to `max_length`
  // ids as truncate_source cuts it (0: not cut) — the same ids — tokenizing only as much
  // of a long line as the kept ids need: memory and time follow max_length, not the line.
  struct TruncatedSource {
    std::vector<std::int32_t> ids;
    std::int64_t length = 0;  // the ids of the whole line (BOS/EOS included), or a lower bound (more)
    bool more = false;        // only the start of the line was tokenized: it has more than `length` ids
    bool truncated = false;   // ids were cut to max_length
    bool exact = true;        // false only with `cut`: the kept ids reach the line's cut end, where
                              // they may differ from those of the line it was cut from
  };
  // `cut`: the line is the start of a longer one (read only in part, as `attend translate`
  // reads a line far longer than its limit). With language codes (encode_source's), or a
  // Hugging Face directory's own tokenizer, the line is tokenized whole, then cut.
  TruncatedSource encode_source_text(const std::string& line, std::int64_t max_length, bool cut = false,
                                     const std::string& source_lang = "", const std::string& target_lang = "") const;
  // A source with no token besides the BOS/EOS the model adds to every source (an empty
  // or blank line): translators give it an empty hypothesis without running the model,
  // as the CLI writes an empty line for an empty line.
  bool is_empty_source(const std::vector<std::int32_t>& ids) const;
  // The options a translation starts from: generate()'s defaults of a Hugging Face
  // directory (generation_config.json: num_beams, max_length, bad_words_ids, …, in
  // attend's terms), TranslationOptions{} for the others. Set a field to override it.
  TranslationOptions default_options() const;
  // default_options() are generate()'s (a Hugging Face directory), not TranslationOptions{}:
  // faces with defaults of their own (Python's CTranslate2 keywords) take these instead.
  bool has_generation_defaults() const;
  bool transformers_rules() const;  // decoding follows transformers' generate()

 private:
  friend class Translator;
  Model() = default;
  // load and load_from_memory alike; internal (runtime's type), so not exported.
  __attribute__((visibility("hidden"))) static Model load_files(const runtime::ModelFiles& files, const LoadOptions& options);
  struct State;
  std::shared_ptr<const State> state_;
};

struct TranslatorOptions {
  int threads = 0;                       // all compute threads (0: one per core), split into
                                         // inter × intra unless those are given
  int inter_threads = 0;                 // batches translated at once (0 with intra_threads 0: the
                                         // split follows each call's work — min(its batches,
                                         // threads) side by side, the threads shared among them;
                                         // a call's lone batch gets every thread)
  int intra_threads = 0;                 // compute threads per batch (0: threads / inter_threads)
  std::int64_t max_batch_size = 32;      // sentences per batch
  std::int64_t max_batch_tokens = 4096;  // padded source tokens per batch (0: no cap)
  std::int64_t max_source_length = 0;    // longer sources are rejected; 0: the model's max_positions
  std::int64_t max_target_length = 256;  // upper bound of TranslationOptions::max_length (and at
                                         // most the model's max_positions)
  std::int64_t max_beam_size = 4;        // upper bound of TranslationOptions::beam_size
};

struct Hypothesis {
  std::vector<std::int32_t> ids;       // target ids (a target prefix included); the end
                                       // token only with return_end_token
  std::string text;                    // translate_text only: the detokenized text
  std::vector<std::string> tokens;     // translate_tokens (and replace_unknowns): vocabulary
                                       // tokens, unknown ones replaced when asked
  // CTranslate2's score: Σ log p of the generated tokens (forced prefix tokens count 0),
  // divided by length^length_penalty (length: the tokens, prefix and end token
  // included), plus the coverage penalty — for greedy search and sampling too.
  float score = 0;
  float log_prob = 0;                  // Σ token_log_probs
  std::vector<float> token_log_probs;  // one per id, then the end token's if finished and left out
  bool finished = false;               // ended with an end token (not cut at max_length)
  std::int32_t end_id = -1;            // finished: the end token it ended with (also when ids leave it out)
  // return_attention: one row per id (and per end token returned), over the source
  // tokens — translate_text/tokens: the caller's tokens (the model's BOS/EOS left out,
  // 0 for tokens cut by max_input_length); translate_ids: the ids given. The alignment
  // layer's cross-attention (CTranslate2's alignment_layer, alignment_heads: by default
  // the last layer's first head).
  std::vector<std::vector<float>> attention;
};

// One kind of attention of one sentence: weights[((layer·heads + head)·rows + row)·columns
// + column], row-major [layers, heads, rows, columns]. Each row is a probability
// distribution over the columns it sees (sums to 1) and 0 at the others — the
// probabilities the fused kernels applied, recomputed only when asked.
struct AttentionMaps {
  std::int64_t layers = 0, heads = 0, rows = 0, columns = 0;
  std::vector<float> weights;
  float at(std::int64_t layer, std::int64_t head, std::int64_t row, std::int64_t column) const {
    return weights[static_cast<std::size_t>(((layer * heads + head) * rows + row) * columns + column)];
  }
};

// What every layer and head attended to while a sentence was translated
// (TranslationOptions::return_attention_heads, Translator::attention_heads). Decoder row t
// is the decoding step that read decoder_input_ids[t] and produced target_ids[t].
struct AttentionHeads {
  std::vector<std::int32_t> source_ids;         // as the encoder saw them, the model's BOS/EOS included
  std::vector<std::int32_t> target_ids;         // one per decoding step: the output, a final end token included
  std::vector<std::int32_t> decoder_input_ids;  // the decoder start token, then target_ids but the last
  // The same as the model's own tokens: its tokenizer.json, SentencePiece model or
  // vocabulary files (decimal ids only for a model with none of them).
  std::vector<std::string> source_tokens, target_tokens, decoder_input_tokens;
  // Encoder-only models: the token type (segment) ids the encoder saw (empty: none given,
  // all 0), and — when the input was given as text — which text each source token came
  // from: 0 the text (a pair's first, sentence A), 1 a pair's second (sentence B), -1 a
  // special token the tokenizer added (Hugging Face's sequence_ids). Empty otherwise.
  std::vector<std::int32_t> source_type_ids, source_sequence_ids;
  // What the maps are of, for the files and pictures made from them: the model's
  // directory, and the input as text where it was given as text (a pair: two texts).
  std::string model;
  std::vector<std::string> source_texts;
  AttentionMaps encoder_self;  // [encoder layers, heads, source, source]
  AttentionMaps decoder_self;  // [decoder layers, heads, target, target]: causal, 0 above the diagonal
  AttentionMaps cross;         // [decoder layers, heads, target, source]
};

struct TranslationResult {
  // Best first, at most num_hypotheses (fewer when the search ends fewer, as
  // CTranslate2's), never none: hypotheses[0] always exists — empty with score −∞ when
  // nothing was found. An empty source gives empty hypotheses of score 0 without running
  // the model.
  std::vector<Hypothesis> hypotheses;
  // The model produced NaN or infinite logits for this sentence (an overflow in its
  // weights or activations): its hypotheses are empty, score −∞. Never a silent garbage.
  bool non_finite = false;
  // return_attention_heads: every layer and head along hypotheses[0] (its end token
  // included), recomputed after decoding by teacher-forcing that output through the same
  // plan (Translator::attention_heads). Empty when not asked, when the scores were not
  // finite, and (0 rows) for an empty source, which is not run.
  AttentionHeads attention_heads;
};

// Token ids the caller keeps (Translator::translate_id_views): `size` ids from `data`.
// (C++17's stand-in for std::span<const std::int32_t>: the public API stays C++17.)
struct IdsView {
  const std::int32_t* data = nullptr;
  std::size_t size = 0;
  IdsView() = default;
  IdsView(const std::int32_t* ids, std::size_t count) : data(ids), size(count) {}
  IdsView(const std::vector<std::int32_t>& ids) : data(ids.data()), size(ids.size()) {}  // NOLINT: a view of it
  const std::int32_t* begin() const { return data; }
  const std::int32_t* end() const { return data + size; }
};

// The log-probabilities a model gives a known target (Translator::score_ids).
struct ScoringResult {
  std::vector<std::int32_t> ids;     // the target as scored, end-of-sequence excluded
  std::vector<std::string> tokens;   // score_tokens only: the target's vocabulary tokens
  std::vector<float> log_probs;      // log p of each target id given the ones before, then of end-of-sequence
  float log_prob = 0;                // their sum
};

struct StepProfile {
  std::string phase;  // "encoder", "decoder", "search"
  std::string kind;   // "gemm", "attention", "layer_norm", …
  std::string name;   // "decoder.layers.3.fc1"
  double seconds = 0;
};

// Compiles the model into a static execution plan for the given limits and translates
// batches with it. Thread-safe: concurrent calls each get their own workspace (arena,
// KV caches), allocated once and reused.
class ATTEND_API Translator {
 public:
  explicit Translator(const Model& model, const TranslatorOptions& options = {});
  ~Translator();
  Translator(Translator&&) noexcept;
  Translator& operator=(Translator&&) noexcept;

  // Batches sorted by length, results in input order. `on_result`, if given, receives
  // each sentence as soon as its batch finishes (any order) and the returned vector is
  // empty; `first_index` offsets the indices it receives and the sampling seeds.
  using ResultCallback = std::function<void(std::size_t index, TranslationResult&& result)>;

  std::vector<TranslationResult> translate_ids(const std::vector<std::vector<std::int32_t>>& sources,
                                               const TranslationOptions& options = {},
                                               const std::vector<std::vector<std::int32_t>>& target_prefixes = {},
                                               const ResultCallback& on_result = {}, std::size_t first_index = 0) const;
  // translate_ids over ids that stay where the caller has them (the rows of a NumPy
  // array, a memory-mapped corpus): read in place, copied only into the engine's own
  // batches. The views must stay valid until the call returns.
  std::vector<TranslationResult> translate_id_views(const std::vector<IdsView>& sources,
                                                    const TranslationOptions& options = {},
                                                    const std::vector<IdsView>& target_prefixes = {},
                                                    const ResultCallback& on_result = {},
                                                    std::size_t first_index = 0) const;
  // Text through the model's SentencePiece models (sources get BOS/EOS as the model asks).
  std::vector<TranslationResult> translate_text(const std::vector<std::string>& sources,
                                                const TranslationOptions& options = {},
                                                const std::vector<std::string>& target_prefixes = {},
                                                const ResultCallback& on_result = {}, std::size_t first_index = 0) const;
  // Pre-tokenized input through the model's vocabularies (unknown tokens map to <unk>).
  std::vector<TranslationResult> translate_tokens(const std::vector<std::vector<std::string>>& sources,
                                                  const TranslationOptions& options = {},
                                                  const std::vector<std::vector<std::string>>& target_prefixes = {},
                                                  const ResultCallback& on_result = {}, std::size_t first_index = 0) const;

  // Throws attend::OptionError, naming the option, if these options cannot be used with
  // this translator (translate_* check the same before any work).
  void validate(const TranslationOptions& options) const;

  // Teacher-forced scoring: the log-probability of each token of targets[i] (then of
  // end-of-sequence) given sources[i] and the target tokens before it. A target may
  // have at most options().max_target_length - 1 tokens. max_input_length > 0 (as
  // CTranslate2's score_batch) cuts each source as translation does and each target to
  // max_input_length - 1 tokens, so that with its end-of-sequence it has at most
  // max_input_length; 0 cuts nothing.
  std::vector<ScoringResult> score_ids(const std::vector<std::vector<std::int32_t>>& sources,
                                       const std::vector<std::vector<std::int32_t>>& targets,
                                       std::int64_t max_input_length = 1024) const;
  // Vocabulary tokens in and out (sources get BOS/EOS as the model asks; unknown tokens map to <unk>).
  std::vector<ScoringResult> score_tokens(const std::vector<std::vector<std::string>>& sources,
                                          const std::vector<std::vector<std::string>>& targets,
                                          std::int64_t max_input_length = 1024) const;

  // Every layer and head's attention along a given output: `source` (ids as the encoder
  // takes them) through the encoder, then the decoder teacher-forced over `target` — the
  // tokens it is to produce, one decoding step each (end with the end token to see the
  // step that ends it) — through the same plan and kernels as translation. A
  // translation's own output (a hypothesis' ids and end token) gives exactly what
  // return_attention_heads gives; any other target (a reference translation) shows what
  // the model attends to while producing it. Throws attend::Error for a source or target
  // over this translator's limits or outside the vocabularies.
  AttentionHeads attention_heads(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target) const;

  const Model& model() const;
  const TranslatorOptions& options() const;
  int inter_threads() const;  // batches translated at once (at most, when the split follows the work)
  int intra_threads() const;  // compute threads per batch (when they all run side by side)
  bool split_follows_work() const;  // inter/intra chosen per call from its batches
  std::int64_t max_source_length() const;  // the limit sources are checked against
  std::string plan_description() const;    // the plan: steps, shapes, arena offsets, FLOPs, bytes
  std::size_t arena_bytes() const;

  // Profiling (off by default): time per plan step, summed over calls.
  void set_profiling(bool on) const;
  std::vector<StepProfile> profile() const;
  void reset_profile() const;

 private:
  friend struct TranslatorInternals;  // the library's own (the server's lanes name a call's threads)
  static std::int32_t forced_eos_of(const Model& model);
  // translate_id_views with each batch on `threads` compute threads (0: the split).
  std::vector<TranslationResult> translate_id_views_on(const std::vector<IdsView>& sources, const TranslationOptions& options,
                                                       const std::vector<IdsView>& target_prefixes,
                                                       const ResultCallback& on_result, std::size_t first_index,
                                                       int threads) const;
  struct State;
  std::unique_ptr<State> state_;
};

// Whether `text` is blank: nothing but white space and invisible characters (ASCII and
// Unicode spaces, NBSP, U+3000, the zero-width U+200B, U+2060, U+FEFF…). Blank text
// encodes to no tokens and translates to an empty hypothesis, as an empty line does.
ATTEND_API bool is_blank_text(const std::string& text);

// Writes `input_directory` (a CTranslate2 model, or an attend model to retype) in
// attend's format to `output_directory`. compute_type: the type of the GEMM weights and
// token embedding tables in the file — "default" (as stored; CTranslate2's int8 stays int8), "int8", "bfloat16",
// "float32" — so a quantized model loads without quantizing.
ATTEND_API void convert_model(const std::string& input_directory, const std::string& output_directory,
                              const std::string& compute_type = "default");

// Writes one sentence's attention as a NumPy .npz file (uncompressed; np.load reads it):
// float32 arrays encoder_self, decoder_self, cross shaped [layers, heads, rows, columns]
// (a map with no layers is left out: an encoder-only model has no decoder), int32
// source_ids, target_ids, decoder_input_ids, unicode source_tokens, target_tokens,
// decoder_input_tokens, and int64 `line` when line ≥ 0; where the heads have them, int32
// source_type_ids and source_sequence_ids, unicode `model` (a 0-d string) and
// source_texts. Throws attend::Error naming the path when it cannot be written (a
// missing directory, a full disk).
ATTEND_API void save_attention_npz(const AttentionHeads& heads, const std::string& path, std::int64_t line = -1);

// The library's version, e.g. "0.1.0".
ATTEND_API const char* version();

// The compute types this CPU runs natively, with CTranslate2's names
// (ctranslate2.get_supported_compute_types("cpu")): float32, int8, int8_float32 always;
// bfloat16 and int8_bfloat16 where the CPU has AVX512_BF16 (elsewhere attend accepts
// them but widens bf16 to fp32, slower than float32).
ATTEND_API std::vector<std::string> supported_compute_types();

// The library's log, on standard error, one line per message ("[attend] [info] …"):
// loading a model says at level info what it loaded and chose (format, parameters,
// compute type and why, kernels). Levels as CTranslate2's; the default is warning, or
// $ATTEND_LOG_LEVEL (off, critical, error, warning, info, debug, trace) when set.
enum class LogLevel { off = 0, critical = 1, error = 2, warning = 3, info = 4, debug = 5, trace = 6 };
ATTEND_API void set_log_level(LogLevel level);
ATTEND_API LogLevel log_level();

}  // namespace attend

#include "attend/encoder.hpp"  // encoder-only models (the BERT family): attend::Encoder
