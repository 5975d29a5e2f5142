// Translator::score_ids / score_tokens: the log-probabilities a model gives known
// targets, by teacher forcing through the ordinary decode loop. The target followed by
// end-of-sequence is the forced prefix of a greedy decode of exactly that length, so
// every step's token is the target's and the hypothesis records log p of each one
// (forced tokens count in token_log_probs, not in the score).
//
// This costs one decoder step per target token (the loop is sequential) where a
// dedicated pass could run the decoder once over the whole target; it needs nothing
// from the runtime beyond what translation uses, and gives the same numbers.
#include <algorithm>

#include "attend/attend.hpp"

namespace attend {
namespace {

std::vector<ScoringResult> score_forced(const Translator& translator, const std::vector<std::vector<std::int32_t>>& sources,
                                        std::vector<std::vector<std::int32_t>> targets, std::int64_t max_input_length) {
  if (sources.size() != targets.size())
    throw error_of("score: ", targets.size(), " targets for ", sources.size(), " sources");
  if (max_input_length < 0) throw OptionError("max_input_length", std::to_string(max_input_length), "must be ≥ 0");
  // CTranslate2 cuts the target with its end-of-sequence to max_input_length tokens.
  if (max_input_length > 0)
    for (auto& t : targets)
      if (static_cast<std::int64_t>(t.size()) > max_input_length - 1) t.resize(static_cast<std::size_t>(max_input_length - 1));
  const std::int32_t eos = translator.model().special_ids().eos;
  const std::int64_t limit = std::min(translator.options().max_target_length, translator.model().max_positions());
  std::int64_t longest = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const std::int64_t n = static_cast<std::int64_t>(targets[i].size());
    if (n + 1 > limit)
      throw error_of("sentence ", i, ": target of ", n, " tokens is longer than the ", limit - 1,
                     " this translator scores (max_target_length ", limit, " includes end-of-sequence)");
    if (std::find(targets[i].begin(), targets[i].end(), eos) != targets[i].end())
      throw error_of("sentence ", i, ": target contains the end-of-sequence id ", eos,
                     " (it is scored after the last token; leave it out)");
    targets[i].push_back(eos);  // forced too, so that the hypothesis ends exactly there
    longest = std::max(longest, n + 1);
  }
  TranslationOptions options;
  options.max_length = std::max<std::int64_t>(longest, 1);  // the forced end token included
  options.min_length = 0;  // an end token forbidden early would score −∞
  options.max_input_length = max_input_length;  // sources cut as translate_ids cuts them
  std::vector<ScoringResult> out;
  out.reserve(sources.size());
  const auto results = translator.translate_ids(sources, options, targets);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Hypothesis& h = results[i].hypotheses.at(0);
    ScoringResult s;
    // A forced end token does not end a hypothesis: decoding goes on to the batch's
    // max_length after it, and the tokens past the target are not the target's.
    s.ids.assign(targets[i].begin(), targets[i].end() - 1);
    if (h.token_log_probs.size() < targets[i].size())
      throw error_of("sentence ", i, ": scored ", h.token_log_probs.size(), " tokens of ", targets[i].size());
    s.log_probs.assign(h.token_log_probs.begin(), h.token_log_probs.begin() + static_cast<std::ptrdiff_t>(targets[i].size()));
    for (float lp : s.log_probs) s.log_prob += lp;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::vector<ScoringResult> Translator::score_ids(const std::vector<std::vector<std::int32_t>>& sources,
                                                 const std::vector<std::vector<std::int32_t>>& targets,
                                                 std::int64_t max_input_length) const {
  return score_forced(*this, sources, targets, max_input_length);
}

std::vector<ScoringResult> Translator::score_tokens(const std::vector<std::vector<std::string>>& sources,
                                                    const std::vector<std::vector<std::string>>& targets,
                                                    std::int64_t max_input_length) const {
  std::vector<std::vector<std::int32_t>> source_ids, target_ids;
  for (const auto& s : sources) source_ids.push_back(model().encode_tokens(s, Model::Side::source));
  for (const auto& t : targets) target_ids.push_back(model().encode_tokens(t, Model::Side::target));
  auto out = score_forced(*this, source_ids, std::move(target_ids), max_input_length);
  for (auto& s : out) s.tokens = model().decode_tokens(s.ids);
  return out;
}

}  // namespace attend
