/* attend — encoder-decoder transformer inference. The C API.
 *
 * Handles are opaque. Every function that can fail returns an attend_status; on failure
 * attend_last_error() gives the message (per thread, valid until the thread's next
 * failing call). No exception crosses this boundary.
 *
 * Memory: the library owns everything it returns. A model, translator or result lives
 * until its attend_*_free; pointers into a result (ids, text, tokens) stay valid until
 * attend_result_free. Inputs are read during the call only. A model can be freed while
 * translators created from it are alive (they keep what they need).
 *
 *   attend_model* model;
 *   if (attend_model_load("models/en-de", NULL, &model) != ATTEND_OK) {
 *     fprintf(stderr, "%s\n", attend_last_error());
 *     return 1;
 *   }
 */
#ifndef ATTEND_ATTEND_H
#define ATTEND_ATTEND_H

#include <stddef.h>
#include <stdint.h>

#include "attend/limits.h"
#include "attend/options.h"

#if defined(_WIN32)
#define ATTEND_C_API
#else
#define ATTEND_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum attend_status {
  ATTEND_OK = 0,
  ATTEND_ERROR = 1,                 /* the model or the input is at fault: see attend_last_error() */
  ATTEND_ERROR_INVALID_ARGUMENT = 2, /* a NULL handle or pointer (an array's entry too), an index out of range,
                                        an option out of its range (limits.h, options.h) or one the model or
                                        translator cannot take: the message names the field */
  ATTEND_ERROR_OUT_OF_MEMORY = 3
} attend_status;

typedef struct attend_model attend_model;
typedef struct attend_translator attend_translator;
typedef struct attend_result attend_result;

/* Each field's range is in limits.h; a value outside it is ATTEND_ERROR_INVALID_ARGUMENT. */
typedef struct attend_translator_options {
  int threads;                 /* all compute threads; 0: one per core */
  int inter_threads;           /* batches translated at once; 0: chosen for the cores */
  int intra_threads;           /* compute threads per batch; 0: threads / inter_threads */
  int64_t max_batch_size;      /* sentences per batch (default 32) */
  int64_t max_batch_tokens;    /* padded source tokens per batch (default 4096; 0: no cap) */
  int64_t max_source_length;   /* at most the model's positions; 0: the model's positions */
  int64_t max_target_length;   /* default 256; more than the model's max_positions is cut to them */
  int64_t max_beam_size;       /* default 4 */
} attend_translator_options;

/* The decoding options: one field per line of ATTEND_TRANSLATION_OPTIONS (options.h,
 * which documents each), with the same names and defaults as attend::TranslationOptions
 * and CTranslate2's translate_batch. attend_options_init fills the defaults. */
typedef struct attend_options {
#define ATTEND_C_OPTION_FIELD(kind, name, def, flag, lo, lo_open, hi, hi_open, help) ATTEND_OPTION_C_TYPE_##kind name;
  ATTEND_TRANSLATION_OPTIONS(ATTEND_C_OPTION_FIELD)
#undef ATTEND_C_OPTION_FIELD
  const char* const* end_token;          /* end_token_count tokens that end a hypothesis; NULL: the model's
                                            end-of-sequence; not NULL with end_token_count 0: no end token
                                            (CTranslate2's end_token=[]) */
  size_t end_token_count;
  const char* const* suppress_sequences; /* suppress_sequences_count sequences, tokens separated by spaces */
  size_t suppress_sequences_count;
  const char* source_lang;               /* Hugging Face models with language codes, the model's own (eng_Latn,
                                            en, en_XX): the source's language token (attend_translate_text);
                                            NULL or "": none (the tokenizer's default) */
  const char* target_lang;               /* the target language (fra_Latn, fr, fr_XX, >>fra<<): the forced
                                            first target token, or Marian's >>fra<< source token; NULL: none */
} attend_options;

ATTEND_C_API const char* attend_version(void);
ATTEND_C_API const char* attend_last_error(void);

/* The compute types this CPU runs natively, CTranslate2's names separated by commas
   ("float32,int8,int8_float32", then ",bfloat16,int8_bfloat16" with AVX512_BF16). */
ATTEND_C_API const char* attend_supported_compute_types(void);

/* The library's log on standard error (what loading a model found and chose, at
   ATTEND_LOG_INFO). Default ATTEND_LOG_WARNING, or $ATTEND_LOG_LEVEL (off, critical,
   error, warning, info, debug, trace). */
enum {
  ATTEND_LOG_OFF = 0,
  ATTEND_LOG_CRITICAL = 1,
  ATTEND_LOG_ERROR = 2,
  ATTEND_LOG_WARNING = 3,
  ATTEND_LOG_INFO = 4,
  ATTEND_LOG_DEBUG = 5,
  ATTEND_LOG_TRACE = 6
};
ATTEND_C_API attend_status attend_set_log_level(int level);
ATTEND_C_API int attend_get_log_level(void);

ATTEND_C_API void attend_translator_options_init(attend_translator_options* options);
ATTEND_C_API void attend_options_init(attend_options* options);
/* The options a translation with this model starts from: attend_options_init's, then a
   Hugging Face directory's generation_config.json defaults (num_beams, max_length,
   bad_words_ids as suppress_sequences, …; strings owned by the model). */
ATTEND_C_API attend_status attend_options_init_for_model(const attend_model* model, attend_options* options);

/* A model directory (attend's format or CTranslate2's). isa: NULL for the best. */
ATTEND_C_API attend_status attend_model_load(const char* directory, const char* isa, attend_model** model);
/* The same with the GEMMs' arithmetic, CTranslate2's names: "default" (the model's stored
   type), "auto" (the fastest here), "float32", "int8", "bfloat16", "int8_bfloat16".
   compute_type NULL: "default". */
ATTEND_C_API attend_status attend_model_load_typed(const char* directory, const char* isa, const char* compute_type,
                                                   attend_model** model);
/* Everything loading can be told; attend_load_options_init gives the defaults (all NULL).
   kv_cache_type: the decoder's attention caches, "default" (bfloat16 when the compute
   type is int8 or bfloat16, else float32), "float32" (as CTranslate2 keeps them),
   "bfloat16". */
typedef struct attend_load_options {
  const char* isa;           /* NULL: the best this CPU runs */
  const char* compute_type;  /* NULL: "default" */
  const char* kv_cache_type; /* NULL: "default" */
  const char* decoding_rules; /* NULL: "auto" (transformers' generate() for a Hugging Face directory,
                                 CTranslate2's for the others), "transformers", "ctranslate2" */
} attend_load_options;
ATTEND_C_API void attend_load_options_init(attend_load_options* options);
/* options: NULL for the defaults. */
ATTEND_C_API attend_status attend_model_load_with(const char* directory, const attend_load_options* options,
                                                  attend_model** model);
/* A model from files held in memory (CTranslate2's Translator(files=…)): count files,
   file_names[i] (plain names as a model directory holds them: "model.bin",
   "source_vocabulary.txt", "vmap.txt", …) with file_sizes[i] bytes at file_contents[i].
   Nothing is read from disk; the bytes are copied, so the arrays may be freed after the
   call. name stands for the directory in messages. options: NULL for the defaults. */
ATTEND_C_API attend_status attend_model_load_from_memory(const char* name, size_t count, const char* const* file_names,
                                                         const void* const* file_contents, const size_t* file_sizes,
                                                         const attend_load_options* options, attend_model** model);
/* The compute type chosen at load ("float32", "int8", "bfloat16") and why, and the
   attention caches' type ("float32", "bfloat16"); owned by the model. */
ATTEND_C_API const char* attend_model_compute_type(const attend_model* model);
ATTEND_C_API const char* attend_model_compute_type_reason(const attend_model* model);
ATTEND_C_API const char* attend_model_kv_cache_type(const attend_model* model);

/* Writes the model in input_directory (a CTranslate2 directory, or an attend one to
   retype) in attend's format to output_directory, as `attend convert` does. compute_type:
   the type of the GEMM weights and token embedding tables in the file, "default" (as
   stored), "int8", "bfloat16", "float32"; NULL: "default". */
ATTEND_C_API attend_status attend_convert_model(const char* input_directory, const char* output_directory,
                                                const char* compute_type);
ATTEND_C_API void attend_model_free(attend_model* model);
ATTEND_C_API int attend_model_has_text_tokenizer(const attend_model* model);

/* options: NULL for the defaults. */
ATTEND_C_API attend_status attend_translator_create(const attend_model* model, const attend_translator_options* options,
                                                    attend_translator** translator);
ATTEND_C_API void attend_translator_free(attend_translator* translator);

/* count sources of lengths[i] ids each; options: NULL for the defaults. Thread-safe. */
ATTEND_C_API attend_status attend_translate_ids(const attend_translator* translator, const int32_t* const* sources,
                                                const size_t* lengths, size_t count, const attend_options* options,
                                                attend_result** result);
/* count NUL-terminated UTF-8 lines, through the model's SentencePiece models. */
ATTEND_C_API attend_status attend_translate_text(const attend_translator* translator, const char* const* lines,
                                                 size_t count, const attend_options* options, attend_result** result);

ATTEND_C_API size_t attend_result_sentences(const attend_result* result);
/* At least 1 for every sentence (an empty one of score -INFINITY when nothing was found),
   at most the num_hypotheses asked for. */
ATTEND_C_API size_t attend_result_hypotheses(const attend_result* result, size_t sentence);
/* 1 if the model produced NaN or infinite logits for this sentence (its hypotheses are
   empty, score -INFINITY), else 0. */
ATTEND_C_API int attend_result_non_finite(const attend_result* result, size_t sentence);
/* hypothesis 0 is the best. Out-of-range indices: NULL / 0 / NaN. */
ATTEND_C_API const int32_t* attend_result_ids(const attend_result* result, size_t sentence, size_t hypothesis,
                                              size_t* length);
ATTEND_C_API const char* attend_result_text(const attend_result* result, size_t sentence, size_t hypothesis);
ATTEND_C_API float attend_result_score(const attend_result* result, size_t sentence, size_t hypothesis);
ATTEND_C_API float attend_result_log_prob(const attend_result* result, size_t sentence, size_t hypothesis);
/* return_attention: target_length x source_length floats, row-major (one row per id); NULL
 * (lengths 0) without attention or for an index out of range. */
ATTEND_C_API const float* attend_result_attention(const attend_result* result, size_t sentence, size_t hypothesis,
                                                  size_t* target_length, size_t* source_length);
/* return_attention_heads: one kind of attention of a sentence along its best hypothesis,
 * kind "encoder_self" (source x source), "decoder_self" (target x target, causal) or
 * "cross" (target x source), as layers x heads x rows x columns floats, row-major
 * (attend::AttentionMaps; decoder row t: the step that read decoder input t and produced
 * target token t). NULL, every dimension 0, when not asked, for another kind or an
 * index out of range; an empty source has layers and heads but 0 rows. */
ATTEND_C_API const float* attend_result_attention_heads(const attend_result* result, size_t sentence, const char* kind,
                                                        size_t* layers, size_t* heads, size_t* rows, size_t* columns);
/* The tokens along those maps' axes: which "source" (as the encoder saw them, BOS/EOS
 * included), "target" (one per decoder step, its end token included) or "decoder_input"
 * (the token each step read); count of them, NULL when not asked. */
ATTEND_C_API const char* const* attend_result_attention_tokens(const attend_result* result, size_t sentence,
                                                               const char* which, size_t* count);
/* Writes a sentence's attention heads to path as a NumPy .npz (attend::save_attention_npz:
 * arrays encoder_self, decoder_self, cross, the ids and the tokens). */
ATTEND_C_API attend_status attend_result_save_attention(const attend_result* result, size_t sentence, const char* path);
/* Every layer and head's attention along a given target (attend::Translator::
 * attention_heads): the source through the encoder, the decoder teacher-forced over
 * target (end it with the end token to see the step that ends it). The result has one
 * sentence whose hypothesis 0 holds target's ids; read it with the two functions above. */
ATTEND_C_API attend_status attend_attention_heads_ids(const attend_translator* translator, const int32_t* source,
                                                      size_t source_length, const int32_t* target, size_t target_length,
                                                      attend_result** result);
ATTEND_C_API void attend_result_free(attend_result* result);


/* ---- Encoder-only models (the BERT family): embeddings, classification, forward ----
 * A Hugging Face / sentence-transformers directory or a CTranslate2 converted encoder.
 * Outputs are written to memory the caller provides: count x attend_encoder_embedding_dim
 * floats for embeddings, sum(lengths) x attend_encoder_hidden_size for hidden states,
 * count x attend_encoder_num_labels for scores. Thread-safe. */
typedef struct attend_encoder attend_encoder;
typedef struct attend_encoder_options {
  const char* isa;            /* NULL: the best this CPU runs */
  const char* compute_type;   /* NULL: "default"; "float32", "int8", "bfloat16", "auto" */
  const char* pooling;        /* NULL: the model's; "cls", "mean", "max", "mean_sqrt_len", "weightedmean", "lasttoken" */
  int threads, inter_threads, intra_threads;  /* 0: chosen */
  int64_t max_batch_size;     /* sequences per batch (default 32) */
  int64_t max_batch_tokens;   /* tokens per batch, packed (default 8192; raised to max_length when lower) */
  int64_t max_length;         /* tokens a text is cut to, at most the model's positions; 0: the model's
                                 (sentence-transformers' max_seq_length). Ranges: limits.h */
} attend_encoder_options;
ATTEND_C_API void attend_encoder_options_init(attend_encoder_options* options);
/* options: NULL for the defaults. */
ATTEND_C_API attend_status attend_encoder_load(const char* directory, const attend_encoder_options* options,
                                               attend_encoder** encoder);
ATTEND_C_API void attend_encoder_free(attend_encoder* encoder);
ATTEND_C_API size_t attend_encoder_embedding_dim(const attend_encoder* encoder);
ATTEND_C_API size_t attend_encoder_hidden_size(const attend_encoder* encoder);
ATTEND_C_API size_t attend_encoder_max_length(const attend_encoder* encoder);
ATTEND_C_API size_t attend_encoder_num_labels(const attend_encoder* encoder);  /* 0 without a classification head */
ATTEND_C_API const char* attend_encoder_label(const attend_encoder* encoder, size_t label);  /* NULL out of range */
/* Sentence embeddings as sentence-transformers' encode; normalize: -1 as the model, 0 no, 1 yes. */
ATTEND_C_API attend_status attend_encoder_embed_text(const attend_encoder* encoder, const char* const* texts, size_t count,
                                                     int normalize, float* embeddings);
ATTEND_C_API attend_status attend_encoder_embed_ids(const attend_encoder* encoder, const int32_t* const* ids,
                                                    const size_t* lengths, size_t count, int normalize, float* embeddings);
/* sentence-transformers' prompts (config_sentence_transformers.json), put before every
   text: `prompt` itself if not NULL, else the model's prompt named `prompt_name` if not
   NULL (an unknown name is an error listing the model's), else the model's default
   prompt, if it has one — which attend_encoder_embed_text applies too. */
ATTEND_C_API attend_status attend_encoder_embed_text_with_prompt(const attend_encoder* encoder, const char* const* texts,
                                                                 size_t count, int normalize, const char* prompt_name,
                                                                 const char* prompt, float* embeddings);
/* The model's prompts, by index (NULL out of range); the default prompt's name ("" for
   none); similarity_fn_name ("cosine", "dot", "euclidean" or "manhattan"). */
ATTEND_C_API size_t attend_encoder_num_prompts(const attend_encoder* encoder);
ATTEND_C_API const char* attend_encoder_prompt_name(const attend_encoder* encoder, size_t index);
ATTEND_C_API const char* attend_encoder_prompt_text(const attend_encoder* encoder, size_t index);
ATTEND_C_API const char* attend_encoder_default_prompt_name(const attend_encoder* encoder);
ATTEND_C_API const char* attend_encoder_similarity(const attend_encoder* encoder);
/* CTranslate2's Encoder.forward_batch: type_ids NULL (all 0) or one list per sequence;
   pooler_output NULL, or count x hidden_size floats (models with a pooler). */
/* Every layer and head's self-attention of one sequence of ids (attend::Encoder::
 * attention_heads): layers x heads x length x length floats, row-major, into `weights`.
 * With weights NULL, *layers and *heads are set and nothing is written: the buffer then
 * needs layers x heads x length x length floats. */
ATTEND_C_API attend_status attend_encoder_attention_heads(const attend_encoder* encoder, const int32_t* ids, size_t length,
                                                          float* weights, size_t* layers, size_t* heads);
/* The same written to path as the .npz `attend embed --attention-all` writes. */
ATTEND_C_API attend_status attend_encoder_save_attention(const attend_encoder* encoder, const int32_t* ids, size_t length,
                                                         const char* path);
/* The same for a text, or a sentence pair (second non-NULL; a cross-encoder's query and
 * passage), through the model's tokenizer.json as embed and classify tokenize it: the
 * file also holds the text(s) and which sentence (A or B) each token came from
 * (attend::Encoder::text_attention_heads). */
ATTEND_C_API attend_status attend_encoder_save_text_attention(const attend_encoder* encoder, const char* text,
                                                              const char* second, const char* path);
ATTEND_C_API attend_status attend_encoder_forward_ids(const attend_encoder* encoder, const int32_t* const* ids,
                                                      const int32_t* const* type_ids, const size_t* lengths, size_t count,
                                                      float* last_hidden_state, float* pooler_output);
/* A classifier's scores (softmax, or sigmoid for one logit or multi-label) and labels
   (NULL: not wanted); second_texts NULL, or the second text of each pair (cross-encoders). */
ATTEND_C_API attend_status attend_encoder_classify_text(const attend_encoder* encoder, const char* const* texts,
                                                        const char* const* second_texts, size_t count, float* scores,
                                                        int32_t* labels);

#ifdef __cplusplus
}
#endif

#endif /* ATTEND_ATTEND_H */
