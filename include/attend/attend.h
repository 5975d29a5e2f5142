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
  ATTEND_ERROR = 1,                 /* the model, the input or an option is at fault: see attend_last_error() */
  ATTEND_ERROR_INVALID_ARGUMENT = 2, /* a NULL handle or pointer, an index out of range */
  ATTEND_ERROR_OUT_OF_MEMORY = 3
} attend_status;

typedef struct attend_model attend_model;
typedef struct attend_translator attend_translator;
typedef struct attend_result attend_result;

typedef struct attend_translator_options {
  int threads;                 /* 0: one per core */
  int64_t max_batch_size;      /* sentences per batch (default 32) */
  int64_t max_batch_tokens;    /* padded source tokens per batch (default 4096; 0: no cap) */
  int64_t max_source_length;   /* 0: the model's maximum */
  int64_t max_target_length;   /* default 256, at most the model's max_positions */
  int64_t max_beam_size;       /* default 4 */
} attend_translator_options;

typedef struct attend_options {
  int64_t beam_size;           /* default 1 (greedy) */
  int64_t num_hypotheses;      /* n-best, <= beam_size (default 1) */
  float length_penalty;        /* default 1 */
  int64_t max_length;          /* default 0: the translator's max_target_length */
  int64_t min_length;          /* default 0 */
  int sampling;                /* nonzero: sample instead of search */
  int64_t sampling_topk;       /* 0: all tokens */
  float sampling_topp;         /* default 1 */
  float temperature;           /* default 1 */
  uint64_t seed;
} attend_options;

ATTEND_C_API const char* attend_version(void);
ATTEND_C_API const char* attend_last_error(void);

ATTEND_C_API void attend_translator_options_init(attend_translator_options* options);
ATTEND_C_API void attend_options_init(attend_options* options);

/* A model directory (attend's format or CTranslate2's). isa: NULL for the best. */
ATTEND_C_API attend_status attend_model_load(const char* directory, const char* isa, attend_model** model);
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
/* Always the num_hypotheses asked for (empty ones of score -INFINITY when fewer ended). */
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
ATTEND_C_API void attend_result_free(attend_result* result);

#ifdef __cplusplus
}
#endif

#endif /* ATTEND_ATTEND_H */
