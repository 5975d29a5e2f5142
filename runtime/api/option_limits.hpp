// The ranges of include/attend/limits.h, checked where a translator or an encoder is
// made, so that every face — C, C++, Python, the CLI — refuses the same values with an
// OptionError naming the field (never a clamp, never a message about an engine field
// the caller did not set).
#pragma once

#include <cstdint>
#include <string>

#include "attend/attend.hpp"
#include "attend/limits.h"

namespace attend::limits {

// `value` in [lowest, highest], or OptionError(field, value, "must be in […]" + note).
inline void check(const char* field, std::int64_t value, std::int64_t lowest, std::int64_t highest,
                  const std::string& note = "") {
  if (value < lowest || value > highest)
    throw OptionError(field, std::to_string(value),
                      "must be in [" + std::to_string(lowest) + ", " + std::to_string(highest) + "]" + note);
}

inline void check_threads(int threads, int inter_threads, int intra_threads) {
  check("threads", threads, 0, ATTEND_MAX_THREADS, " (0: one per core)");
  check("inter_threads", inter_threads, 0, ATTEND_MAX_THREADS_EACH, " (0: chosen)");
  check("intra_threads", intra_threads, 0, ATTEND_MAX_THREADS_EACH, " (0: threads / inter_threads)");
  if (std::int64_t{inter_threads} * intra_threads > ATTEND_MAX_THREADS)
    throw OptionError("inter_threads", std::to_string(inter_threads),
                      "× intra_threads " + std::to_string(intra_threads) + " = " +
                          std::to_string(std::int64_t{inter_threads} * intra_threads) + ": at most " +
                          std::to_string(ATTEND_MAX_THREADS) + " in all");
}

// `positions`: the model's.
inline void check_translator(const TranslatorOptions& o, std::int64_t positions) {
  check_threads(o.threads, o.inter_threads, o.intra_threads);
  check("max_batch_size", o.max_batch_size, 1, ATTEND_MAX_BATCH_SIZE);
  check("max_batch_tokens", o.max_batch_tokens, 0, ATTEND_MAX_BATCH_TOKENS, " (0: no cap)");
  check("max_source_length", o.max_source_length, 0, positions,
        " (the model's positions; 0: " + std::to_string(positions) + ")");
  check("max_target_length", o.max_target_length, 1, ATTEND_MAX_TARGET_LENGTH);
  check("max_beam_size", o.max_beam_size, 1, ATTEND_MAX_BEAM_SIZE);
}

// `positions`: the model's.
inline void check_encoder(const EncoderOptions& o, std::int64_t positions) {
  check_threads(o.threads, o.inter_threads, o.intra_threads);
  check("max_batch_size", o.max_batch_size, 1, ATTEND_MAX_BATCH_SIZE);
  check("max_batch_tokens", o.max_batch_tokens, 1, ATTEND_MAX_BATCH_TOKENS);
  check("max_length", o.max_length, 0, positions,
        " (the model's positions; 0: sentence-transformers' max_seq_length, else " + std::to_string(positions) + ")");
}

}  // namespace attend::limits
