// generate()'s defaults for a Hugging Face directory: generation_config.json, or (as
// transformers' GenerationConfig.from_model_config does when it is absent) the
// generation fields config.json carries, over transformers' own defaults (max_length 20,
// num_beams 1, …). Mapped onto attend's options, which count generated tokens: max_length
// N (it counts the decoder start token) is max_length N − 1, max_new_tokens is
// max_length; likewise min_length and min_new_tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attend/options.hpp"

namespace attend::runtime {

struct GenerationDefaults {
  TranslationOptions options;                            // beam_size, max_length, …
  std::vector<std::vector<std::int32_t>> bad_words_ids;  // never generated
  std::int32_t forced_bos_id = -1;                       // the first generated token, or -1
  std::int32_t forced_eos_id = -1;                       // the token forced at the length cap, or -1
  std::int32_t decoder_start_id = -1;                    // overrides config.json's, or -1
  std::string source;                                    // the file read
  std::vector<std::string> fields;                       // "num_beams = 4", … what was read, for `attend inspect`
};

// Throws attend::Error naming the file and the field for a value of the wrong type or
// range, or a setting attend does not run (e.g. constrained or contrastive search).
GenerationDefaults read_generation_defaults(const std::string& dir, std::int64_t vocab_size);

}  // namespace attend::runtime
