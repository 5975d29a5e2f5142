// Validation of the decoding options: each option against its range (from the one
// description list, attend/options.h), then the combinations and the plan's limits.
#include <cmath>
#include <sstream>
#include <string>

#include "decoding/decoding.hpp"
#include "model/model_config.hpp"
#include "plan/execution_plan.hpp"

namespace attend::runtime {
namespace {

template <class T>
std::string text(T value) {
  std::ostringstream s;
  if constexpr (std::is_same_v<T, bool>) s << (value ? "true" : "false");
  else s << value;
  return s.str();
}

[[noreturn]] void fail(std::string_view option, const std::string& value, const std::string& requirement) {
  throw OptionError(std::string(option), value, requirement);
}

void check_ranges(const TranslationOptions& o) {
#define ATTEND_CHECK_OPTION(kind, name, def, flag, lo, lo_open, hi, hi_open, help)               \
  if (const OptionSpec& spec = option_spec(#name); !spec.accepts(static_cast<double>(o.name))) \
    fail(#name, text(o.name), "must be " + spec.range());
  ATTEND_TRANSLATION_OPTIONS(ATTEND_CHECK_OPTION)
#undef ATTEND_CHECK_OPTION
}

void check_ids(const char* option, std::span<const std::int32_t> ids, std::int64_t vocab) {
  for (std::int32_t id : ids)
    if (id < 0 || id >= vocab)
      fail(option, text(id), "ids must be in the target vocabulary [0, " + std::to_string(vocab) + ")");
}

}  // namespace

std::int64_t DecodeOptions::max_length_within(const PlanLimits& l) const {
  return max_length > 0 ? max_length : l.max_target_length;
}

void DecodeOptions::validate(const PlanLimits& l, const ModelConfig& model) const {
  check_ranges(*this);
  const std::string limit = std::to_string(l.beam_size);
  if (beam_size > l.beam_size) fail("beam_size", text(beam_size), "must be ≤ the translator's max_beam_size " + limit);
  if (max_length > l.max_target_length)
    fail("max_length", text(max_length),
         "must be in [0, " + std::to_string(l.max_target_length) + "] (the translator's max_target_length; 0: that limit)");
  const std::int64_t max = max_length_within(l);
  if (min_length > max)
    fail("min_length", text(min_length), "must be ≤ max_length (" + std::to_string(max) + ")");

  if (on_token && (beam_size > 1 || prefix_bias_beta > 0 || return_alternatives))
    fail("on_token", "a callback",
         "streaming tokens needs greedy search or sampling: beam_size 1, no prefix_bias_beta, no return_alternatives");
  if (sampling && beam_size > 1)
    fail("beam_size", text(beam_size),
         "sampling draws one token at a time: use beam_size 1 (CTranslate2's random beam search is not implemented)");
  if (prefix_bias_beta > 0 && sampling)
    fail("prefix_bias_beta", text(prefix_bias_beta), "biased decoding is a beam search: it cannot be combined with sampling");
  if (prefix_bias_beta > 0 && return_alternatives)
    fail("prefix_bias_beta", text(prefix_bias_beta), "biased decoding is not compatible with return_alternatives");

  // As CTranslate2: beam search returns at most round(beam_size × patience) hypotheses;
  // sampling draws num_hypotheses independent outputs and return_alternatives expands
  // num_hypotheses first tokens, each taking a row of the plan.
  if (return_alternatives || sampling) {
    if (num_hypotheses > l.beam_size)
      fail("num_hypotheses", text(num_hypotheses),
           std::string("with ") + (return_alternatives ? "return_alternatives" : "sampling") +
               ", must be ≤ the translator's max_beam_size " + limit);
  } else {
    const auto candidates = static_cast<std::int64_t>(std::round(static_cast<float>(beam_size) * patience));
    if (num_hypotheses > candidates)
      fail("num_hypotheses", text(num_hypotheses),
           "must be ≤ beam_size × patience = " + std::to_string(candidates) + (beam_size == 1 ? " (greedy search)" : ""));
  }
  if (use_vmap && !candidates)
    fail("use_vmap", "true", "the model has no vocabulary map (vmap.txt in its directory) to restrict the outputs with");
  if (end_ids) check_ids("end_token", *end_ids, model.tgt_vocab_size);
  for (const auto& s : suppress_ids) check_ids("suppress_sequences", s, model.tgt_vocab_size);
}

}  // namespace attend::runtime
