#include "formats/hf/generation_config.hpp"

#include <filesystem>

#include "attend/error.hpp"
#include "formats/json_file.hpp"

namespace attend::runtime {
namespace fs = std::filesystem;

GenerationDefaults read_generation_defaults(const std::string& dir, std::int64_t vocab_size) {
  const fs::path d(dir);
  const bool own = fs::exists(d / "generation_config.json");
  const JsonFile file(((own ? d / "generation_config.json" : d / "config.json")).string());
  GenerationDefaults g;
  g.source = fs::path(file.path()).filename().string() + (own ? "" : " (its generation fields; no generation_config.json)");
  TranslationOptions& o = g.options;
  o.min_length = 0;  // transformers' defaults, in attend's terms
  o.max_length = 19;
  o.max_input_length = 0;
  auto note = [&](const std::string& key) { g.fields.push_back(key + " = " + file.value()[key].dump()); };
  auto id = [&](const char* key) {
    const std::int64_t v = file.integer_or(key, -1);
    if (file.has(key) && (v < 0 || v >= vocab_size)) file.bad(key, "is " + std::to_string(v) + ", outside the vocabulary");
    if (file.has(key)) note(key);
    return static_cast<std::int32_t>(v);
  };
  auto count = [&](const char* key, std::int64_t lowest) {
    const std::int64_t v = file.integer_or(key, lowest);
    if (v < lowest) file.bad(key, "must be ≥ " + std::to_string(lowest));
    if (file.has(key)) note(key);
    return v;
  };
  if (file.has("max_new_tokens")) o.max_length = count("max_new_tokens", 1);
  else if (file.has("max_length")) o.max_length = count("max_length", 2) - 1;
  if (file.has("min_new_tokens")) o.min_length = count("min_new_tokens", 0);
  else if (file.has("min_length")) o.min_length = std::max<std::int64_t>(0, count("min_length", 0) - 1);
  o.beam_size = count("num_beams", 1);
  o.num_hypotheses = count("num_return_sequences", 1);
  if (o.num_hypotheses > o.beam_size && o.beam_size > 1) file.bad("num_return_sequences", "exceeds num_beams");
  o.no_repeat_ngram_size = count("no_repeat_ngram_size", 0);
  if (file.has("length_penalty")) o.length_penalty = static_cast<float>(file.number_or("length_penalty", 1.0)), note("length_penalty");
  if (file.has("repetition_penalty")) {
    const double p = file.number_or("repetition_penalty", 1.0);
    if (!(p > 0)) file.bad("repetition_penalty", "must be > 0");
    o.repetition_penalty = static_cast<float>(p), note("repetition_penalty");
  }
  if (file.has("early_stopping")) {
    const auto& v = file.value()["early_stopping"];
    if (v.is_boolean()) o.early_stopping = v.get<bool>() ? 1 : 0;
    else if (v.is_string() && v.get<std::string>() == "never") o.early_stopping = 2;
    else file.bad("early_stopping", "must be true, false or \"never\", got " + v.dump());
    note("early_stopping");
  }
  if (file.flag_or("do_sample", false)) {
    note("do_sample");
    o.sampling = true;
    o.sampling_topk = count("top_k", 0);
    if (!file.has("top_k")) o.sampling_topk = 50;  // transformers' default
    if (file.has("top_p")) o.sampling_topp = static_cast<float>(file.number_or("top_p", 1.0)), note("top_p");
    if (file.has("temperature")) o.temperature = static_cast<float>(file.number_or("temperature", 1.0)), note("temperature");
  }
  for (const char* unsupported : {"constraints", "force_words_ids", "penalty_alpha", "num_beam_groups", "diversity_penalty",
                                  "exponential_decay_length_penalty", "sequence_bias", "suppress_tokens", "begin_suppress_tokens",
                                  "typical_p", "epsilon_cutoff", "eta_cutoff", "encoder_repetition_penalty", "guidance_scale"}) {
    if (!file.has(unsupported)) continue;
    const auto& v = file.value()[unsupported];
    const bool neutral = (v.is_number() && (v.get<double>() == 0 || v.get<double>() == 1)) || (v.is_array() && v.empty());
    if (!neutral) file.bad(unsupported, "is " + v.dump() + " — attend does not implement this generate() setting");
  }
  if (file.has("bad_words_ids")) {
    const auto& v = file.value()["bad_words_ids"];
    if (!v.is_array()) file.bad("bad_words_ids", "must be a list of token-id lists");
    for (const auto& word : v) {
      if (!word.is_array() || word.empty()) file.bad("bad_words_ids", "must be a list of non-empty token-id lists");
      std::vector<std::int32_t> ids;
      for (const auto& t : word) {
        if (!t.is_number_integer() || t.get<std::int64_t>() < 0 || t.get<std::int64_t>() >= vocab_size)
          file.bad("bad_words_ids", "holds " + t.dump() + ", not a token id of the vocabulary");
        ids.push_back(static_cast<std::int32_t>(t.get<std::int64_t>()));
      }
      g.bad_words_ids.push_back(std::move(ids));
    }
    note("bad_words_ids");
  }
  g.forced_bos_id = id("forced_bos_token_id");
  g.forced_eos_id = id("forced_eos_token_id");
  g.decoder_start_id = id("decoder_start_token_id");
  return g;
}

}  // namespace attend::runtime
