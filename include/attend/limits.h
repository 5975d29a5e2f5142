/* attend — the limits of a translator's and an encoder's settings, named once. The C
 * API (attend_translator_options, attend_encoder_options), the C++ API
 * (attend::TranslatorOptions, attend::EncoderOptions), the Python package and the
 * CLI's flags (their --help shows each range) accept exactly these ranges; a value
 * outside is refused with a message naming the field (C: ATTEND_ERROR_INVALID_ARGUMENT;
 * C++: attend::OptionError; Python: ValueError; CLI: exit 2 naming the flag).
 *
 *   threads            [0, ATTEND_MAX_THREADS]          0: one per core
 *   inter_threads      [0, ATTEND_MAX_THREADS_EACH]     0: chosen
 *   intra_threads      [0, ATTEND_MAX_THREADS_EACH]     0: threads / inter_threads
 *                      inter x intra at most ATTEND_MAX_THREADS
 *   max_batch_size     [1, ATTEND_MAX_BATCH_SIZE]
 *   max_batch_tokens   translator: [0, ATTEND_MAX_BATCH_TOKENS] (0: no cap);
 *                      encoder: [1, ATTEND_MAX_BATCH_TOKENS] (raised to max_length when lower)
 *   max_source_length  translator: [0, the model's positions] (0: the model's positions)
 *   max_target_length  translator: [1, ATTEND_MAX_TARGET_LENGTH] (and cut to the model's positions)
 *   max_beam_size      translator: [1, ATTEND_MAX_BEAM_SIZE]
 *   max_length         encoder: [0, the model's positions] (0: sentence-transformers'
 *                      max_seq_length, else the model's positions)
 */
#ifndef ATTEND_LIMITS_H
#define ATTEND_LIMITS_H

#define ATTEND_MAX_THREADS 4096
#define ATTEND_MAX_THREADS_EACH 1024
#define ATTEND_MAX_BATCH_SIZE 65536
#define ATTEND_MAX_BATCH_TOKENS 16777216
#define ATTEND_MAX_TARGET_LENGTH 1048576
#define ATTEND_MAX_BEAM_SIZE 256

#endif /* ATTEND_LIMITS_H */
