#include "option_flags.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <regex>

#include "commands.hpp"
#include "source_lines.hpp"

namespace attend::cli {
namespace {

// The options given as lists, which the scalar description leaves out, and the
// translator's and encoder's settings (include/attend/limits.h), with the flags that
// set them in every command.
constexpr std::pair<const char*, const char*> kOtherFlags[] = {
    {"end_token", "--end-token"},         {"suppress_sequences", "--suppress-sequences"},
    {"threads", "--threads"},             {"inter_threads", "--inter-threads"},
    {"intra_threads", "--intra-threads"}, {"max_batch_size", "--max-batch-size"},
    {"max_batch_tokens", "--max-batch-tokens"}};

// Checks a flag's text against the option's range; CLI11 prefixes the flag's name.
CLI::Validator range_of(const attend::OptionSpec& spec) {
  const std::string range = spec.range();
  const bool integer = spec.kind != attend::OptionSpec::Kind::real;
  return CLI::Validator(
      [spec, range, integer](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        if (integer) {
          long long v = 0;
          const auto [at, error] = std::from_chars(text.data(), end, v);
          if (error != std::errc() || at != end) return "'" + text + "' is not " + range;
          value = static_cast<double>(v);
        } else {
          const auto [at, error] = std::from_chars(text.data(), end, value);
          if (error != std::errc() || at != end) return "'" + text + "' is not " + range;
        }
        if (!spec.accepts(value)) return "must be " + range + ", got " + text;
        return {};
      },
      range, std::string(spec.name));
}

void add_flag(CLI::App& app, const attend::OptionSpec& spec, std::int64_t& field) {
  app.add_option(std::string(spec.flag), field, std::string(spec.help))->check(range_of(spec))->capture_default_str();
}
void add_flag(CLI::App& app, const attend::OptionSpec& spec, float& field) {
  app.add_option(std::string(spec.flag), field, std::string(spec.help))->check(range_of(spec))->capture_default_str();
}
void add_flag(CLI::App& app, const attend::OptionSpec& spec, bool& field) {
  app.add_flag(std::string(spec.flag), field, std::string(spec.help));
}
void add_flag(CLI::App&, const attend::OptionSpec&, std::uint64_t&) {}  // the seed: --seed (model_choice.cpp)

}  // namespace

void DecodingFlags::add_to(CLI::App& app) {
#define ATTEND_ADD_FLAG(kind, name, ...) \
  if (const auto& spec = attend::option_spec(#name); !spec.flag.empty()) add_flag(app, spec, options.name);
  ATTEND_TRANSLATION_OPTIONS(ATTEND_ADD_FLAG)
#undef ATTEND_ADD_FLAG
  app.add_option("--end-token", end_tokens,
                 "A target token that ends a hypothesis (repeatable; given, they replace the model's end-of-sequence)");
  app.add_option("--source-lang", options.source_lang,
                 "The source language, in the model's own codes (eng_Latn, en, en_XX): the source's language token, "
                 "placed as the model's transformers tokenizer places it (Hugging Face M2M100, NLLB, mBART-50)");
  app.add_option("--target-lang", options.target_lang,
                 "The target language, in the model's own codes (fra_Latn, fr, fr_XX, fra or >>fra<<): the forced first "
                 "target token, or Marian's >>fra<< source token");
  app.add_option("--suppress-sequences", suppress_sequences,
                 "Target tokens, separated by spaces, never generated in that order (repeatable; one token: never at all)");
}

void DecodingFlags::finish_parsing(const CLI::App& app) {
  given_.clear();
  for (const auto& spec : attend::kTranslationOptionSpecs)
    if (!spec.flag.empty() && app.count(std::string(spec.flag)) > 0) given_.emplace_back(spec.name);
  if (app.count("--suppress-sequences") > 0) given_.emplace_back("suppress_sequences");
  for (const auto& [flag, code] : {std::pair{"--source-lang", &options.source_lang}, std::pair{"--target-lang", &options.target_lang}})
    if (app.count(flag) > 0 && code->empty()) throw UsageError(std::string(flag) + ": an empty language code (an unset shell variable?)");
  for (const char* implies : {"--sample-topk", "--sample-topp", "--temperature"})
    if (app.count(implies) > 0) options.sampling = true;
  // An empty value is a slip (an unset shell variable), never "the model's end token"
  // or "suppress nothing": refused, as every other bad flag value is.
  for (const std::string& t : end_tokens)
    if (split_tokens(t).size() != 1)
      throw UsageError("--end-token '" + t + "': must be one target token" + (t.empty() ? " (it is empty)" : ""));
  if (!end_tokens.empty()) options.end_token = end_tokens;
  options.suppress_sequences.clear();
  for (const std::string& s : suppress_sequences) {
    options.suppress_sequences.push_back(split_tokens(s));
    if (options.suppress_sequences.back().empty())
      throw UsageError("--suppress-sequences '" + s + "': must be target tokens separated by spaces (it is empty)");
  }
}

attend::TranslationOptions DecodingFlags::over(const attend::TranslationOptions& defaults) const {
  attend::TranslationOptions o = defaults;
  auto given = [&](const char* name) { return std::find(given_.begin(), given_.end(), name) != given_.end(); };
#define ATTEND_TAKE_GIVEN(kind, name, ...) \
  if (given(#name)) o.name = options.name;
  ATTEND_TRANSLATION_OPTIONS(ATTEND_TAKE_GIVEN)
#undef ATTEND_TAKE_GIVEN
  if (options.sampling) o.sampling = true;  // implied by --sample-topk, --sample-topp, --temperature
  if (given("suppress_sequences")) o.suppress_sequences = options.suppress_sequences;
  o.end_token = options.end_token;
  o.source_lang = options.source_lang;
  o.target_lang = options.target_lang;
  o.on_token = options.on_token;
  return o;
}

std::string flag_of(const std::string& option) {
  for (const auto& spec : attend::kTranslationOptionSpecs)
    if (spec.name == option && !spec.flag.empty()) return std::string(spec.flag);
  for (const auto& [name, flag] : kOtherFlags)
    if (option == name) return flag;
  return option;
}

std::string usage_message(const attend::OptionError& e) {
  // Option names in the requirement become flags too: "must be ≤ max_length (256)".
  std::string requirement = e.requirement();
  auto to_flag = [&](const std::string& name, const std::string& flag) {
    requirement = std::regex_replace(requirement, std::regex("\\b" + name + "\\b"), flag);
  };
  for (const auto& spec : attend::kTranslationOptionSpecs)
    if (!spec.flag.empty()) to_flag(std::string(spec.name), std::string(spec.flag));
  for (const auto& [name, flag] : kOtherFlags) to_flag(name, flag);
  return flag_of(e.option()) + " " + e.value() + ": " + requirement;
}

}  // namespace attend::cli
