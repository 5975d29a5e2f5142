/* attend — the decoding options, described once.
 *
 * Every scalar option of a translation is one line of ATTEND_TRANSLATION_OPTIONS: its
 * kind, its name (CTranslate2's, where CTranslate2 has it), its default, the
 * `attend translate` flag that sets it ("" for none), the accepted range and a line of
 * help. The C struct attend_options (attend.h), the C++ struct
 * attend::TranslationOptions (options.hpp), the C API's conversion, the validation
 * messages and the CLI's flags are all generated from this list, so adding an option
 * here adds it everywhere. Options that are lists (end tokens, suppressed sequences)
 * are declared by hand beside it.
 *
 * X(KIND, name, default, flag, lowest, lowest_open, highest, highest_open, help)
 *   KIND: INT (int64_t), FLOAT (float), BOOL (int in C, bool in C++), U64 (uint64_t).
 *   Range: [lowest, highest], an end excluded when its _open is 1; ATTEND_UNBOUNDED for
 *   none. Limits that depend on other options or on the translator (max_length ≤ the
 *   translator's max_target_length, num_hypotheses ≤ beam_size × patience) are checked
 *   with the options together and named in the same messages.
 */
#ifndef ATTEND_OPTIONS_H
#define ATTEND_OPTIONS_H

#define ATTEND_UNBOUNDED 1e300

/* clang-format off */
#define ATTEND_TRANSLATION_OPTIONS(X) \
  X(INT,   beam_size,            1,    "--beam",                 1, 0, 256, 0, \
    "Beam size (1: greedy search, or sampling)") \
  X(INT,   num_hypotheses,       1,    "--n-best",               1, 0, 256, 0, \
    "Hypotheses per input: at most beam_size x patience (beam search), at most the beam limit (sampling: independent draws; alternatives)") \
  X(FLOAT, length_penalty,       1.0f, "--length-penalty",       -ATTEND_UNBOUNDED, 1, ATTEND_UNBOUNDED, 1, \
    "Scores are log_prob / length^penalty (length: generated tokens, the end token included; greedy and sampling too)") \
  X(FLOAT, coverage_penalty,     0.0f, "--coverage-penalty",     -ATTEND_UNBOUNDED, 1, ATTEND_UNBOUNDED, 1, \
    "Adds penalty x sum over source tokens of log(min(attention received, 1)) to each score (Wu et al. 2016)") \
  X(FLOAT, patience,             1.0f, "--patience",             0, 1, ATTEND_UNBOUNDED, 1, \
    "Beam search stops once round(beam x patience) hypotheses have finished") \
  X(FLOAT, repetition_penalty,   1.0f, "--repetition-penalty",   0, 1, ATTEND_UNBOUNDED, 1, \
    "Logits of tokens already generated are divided by this (multiplied when negative); > 1 discourages repeats") \
  X(INT,   no_repeat_ngram_size, 0,    "--no-repeat-ngram-size", 0, 0, ATTEND_UNBOUNDED, 0, \
    "Never generate an n-gram of this size twice (0: off)") \
  X(BOOL,  disable_unk,          0,    "--disable-unk",          0, 0, 1, 0, \
    "Never generate the unknown token") \
  X(FLOAT, prefix_bias_beta,     0.0f, "--prefix-bias-beta",     0, 0, 1, 1, \
    "With a target prefix: > 0 biases decoding towards the prefix instead of forcing it (beam search)") \
  X(BOOL,  return_end_token,     0,    "--return-end-token",     0, 0, 1, 0, \
    "Keep the end token at the end of finished outputs") \
  X(INT,   max_input_length,     1024, "--max-input-length",     0, 0, ATTEND_UNBOUNDED, 0, \
    "Sources are cut to this many tokens, special tokens included, keeping the end-of-sequence (0: no cut)") \
  X(INT,   max_length,           0,    "--max-length",           0, 0, ATTEND_UNBOUNDED, 0, \
    "Most generated tokens per output, the end token and a target prefix included (0: the translator's max_target_length)") \
  X(INT,   min_length,           1,    "--min-length",           0, 0, ATTEND_UNBOUNDED, 0, \
    "End tokens are impossible before this many generated tokens (a target prefix included)") \
  X(BOOL,  sampling,             0,    "--sampling",             0, 0, 1, 0, \
    "Draw tokens at random instead of searching (implied by --sample-topk, --sample-topp, --temperature)") \
  X(INT,   sampling_topk,        0,    "--sample-topk",          0, 0, ATTEND_UNBOUNDED, 0, \
    "Sample among the k most likely tokens (0: all)") \
  X(FLOAT, sampling_topp,        1.0f, "--sample-topp",          0, 1, 1, 0, \
    "Sample among the most likely tokens whose probabilities sum to p") \
  X(FLOAT, temperature,          1.0f, "--temperature",          0, 0, ATTEND_UNBOUNDED, 1, \
    "Sampling temperature: probabilities ~ p^(1/temperature) (0: always the most likely token)") \
  X(U64,   seed,                 0,    "",                       0, 0, ATTEND_UNBOUNDED, 0, \
    "With the sentence's index, fixes every draw") \
  X(BOOL,  return_attention,     0,    "",                       0, 0, 1, 0, \
    "Fill each hypothesis' attention: [target token][source token]") \
  X(BOOL,  return_alternatives,  0,    "--return-alternatives",  0, 0, 1, 0, \
    "Return num_hypotheses alternatives at the first position after the target prefix, each completed") \
  X(FLOAT, min_alternative_expansion_prob, 0.0f, "--min-alternative-expansion-prob", 0, 0, 1, 0, \
    "Alternatives whose first token has a lower probability are left out") \
  X(BOOL,  replace_unknowns,     0,    "--replace-unknowns",     0, 0, 1, 0, \
    "Replace each generated unknown token by the source token it attends to most") \
  X(BOOL,  return_attention_heads, 0,  "",                       0, 0, 1, 0, \
    "Fill each result's attention_heads: every layer and head's encoder self-, decoder self- and cross-attention along the best hypothesis (recomputed after decoding)") \
  X(INT,   early_stopping,       0,    "--early-stopping",       0, 0, 2, 0, \
    "Beam search under transformers' rules: 0 (false: go on while a running beam may beat the worst finished one), 1 (true: stop once beam_size have finished), 2 (never)") \
  X(BOOL,  use_vmap,             0,    "--use-vmap",             0, 0, 1, 0, \
    "Restrict each output to the target tokens the model's vocabulary map (vmap.txt) gives for its source, per sentence (CTranslate2's use_vmap)")
/* clang-format on */

#define ATTEND_OPTION_C_TYPE_INT int64_t
#define ATTEND_OPTION_C_TYPE_FLOAT float
#define ATTEND_OPTION_C_TYPE_BOOL int
#define ATTEND_OPTION_C_TYPE_U64 uint64_t

#endif /* ATTEND_OPTIONS_H */
