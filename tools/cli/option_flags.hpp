// `attend translate`'s decoding flags, made from the one description of the options
// (attend/options.h): each option with a flag gets it, with its help and its accepted
// range checked at parse time (a bad value is a usage error naming the flag and the
// range: exit 2). Errors the library finds later (combinations, the model's limits)
// come back as attend::OptionError and are told in the same terms.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "attend/attend.hpp"

namespace attend::cli {

struct DecodingFlags {
  attend::TranslationOptions options;
  std::vector<std::string> suppress_sequences;  // each: target tokens separated by spaces
  std::vector<std::string> end_tokens;

  // Adds every decoding flag to `app`, bound to `options`.
  void add_to(CLI::App& app);
  // After parsing: the list flags into `options` (UsageError for an empty one);
  // --sample-topk/-topp/--temperature imply --sampling.
  void finish_parsing(const CLI::App& app);
  // The options given on the command line over `defaults` (a Hugging Face model's
  // generation_config.json): every flag given explicitly wins.
  attend::TranslationOptions over(const attend::TranslationOptions& defaults) const;

 private:
  std::vector<std::string> given_;  // the options whose flags were given
};

// The flag of an option name ("beam_size" → "--beam"), or the name if it has none.
std::string flag_of(const std::string& option);
// An OptionError in the CLI's terms: "--min-length 300: must be ≤ --max-length (256)".
std::string usage_message(const attend::OptionError& e);

}  // namespace attend::cli
