// return_alternatives, as CTranslate2's decode_alternatives (src/decoding.cc): after each
// sentence's target prefix, the num_hypotheses most likely next tokens (end tokens
// excluded; those less likely than min_alternative_expansion_prob left out), each then
// completed on its own by the search the options ask for. A result's score is its first
// token's log p plus the completion's own score (normalised over the completion only);
// results come in the order of their first tokens' probabilities.
//
// Two passes over the translator: one decoder step after the prefix (a beam of
// num_hypotheses), then the completions, with prefix + first token as context. A
// sentence whose scores were not finite in either pass is flagged and keeps no
// hypothesis, as one decoding pass leaves it (SentenceResult::non_finite).
#include <cmath>
#include <map>

#include "translator/translator.hpp"

namespace attend::runtime {

std::vector<SentenceResult> Translator::translate_alternatives(std::span<const std::vector<std::int32_t>> sources,
                                                               const DecodeOptions& options,
                                                               std::span<const std::vector<std::int32_t>> prefixes,
                                                               SentenceIds ids, const ResultSink& sink) const {
  const std::int64_t max_length = options.max_length_within(plan_->limits());
  const std::int64_t n = static_cast<std::int64_t>(sources.size());
  auto prefix_of = [&](std::int64_t i) { return prefixes.empty() ? std::vector<std::int32_t>{} : prefixes[i]; };
  std::vector<SentenceResult> results(n);

  // 1. The first free token of each sentence whose prefix leaves room for one.
  DecodeOptions first = options;
  first.return_alternatives = false, first.prefix_is_context = true, first.one_pass_prefix_tail = 0;
  first.beam_size = first.num_hypotheses = options.num_hypotheses;
  first.length_penalty = 0, first.coverage_penalty = 0, first.patience = 1, first.sampling = false;
  first.max_length = 1, first.min_length = 1;
  std::vector<std::vector<std::int32_t>> expand_sources, expand_prefixes;
  std::vector<std::int64_t> expand_index;
  std::vector<std::uint64_t> expand_ids;  // each pass keeps its sentences' ids: draws never depend on the grouping
  for (std::int64_t i = 0; i < n; ++i) {
    const auto prefix = prefix_of(i);
    if (is_empty_source(sources[i], model().config())) {  // as translate(): not run, the prefix as it is
      results[i] = empty_result(options.num_hypotheses, prefix, max_length, options.return_attention);
      continue;
    }
    if (static_cast<std::int64_t>(prefix.size()) >= max_length) {  // no room: the prefix itself, score 0
      for (std::int64_t k = 0; k < options.num_hypotheses; ++k) {
        Hypothesis h;
        h.tokens.assign(prefix.begin(), prefix.begin() + std::min<std::int64_t>(max_length, prefix.size()));
        results[i].hypotheses.push_back(std::move(h));
      }
      continue;
    }
    expand_sources.push_back(sources[i]), expand_prefixes.push_back(prefix), expand_index.push_back(i);
    expand_ids.push_back(ids[static_cast<std::size_t>(i)]);
  }
  const auto expanded = translate(expand_sources, first, expand_prefixes, SentenceIds(expand_ids));

  // 2. Each alternative completed, grouped by prefix length (one max_length per call).
  struct Item {
    std::int64_t sentence;
    float first_score;
  };
  std::map<std::size_t, std::vector<std::pair<Item, std::vector<std::int32_t>>>> by_length;
  for (std::size_t e = 0; e < expanded.size(); ++e) {
    const std::int64_t i = expand_index[e];
    results[i].non_finite = expanded[e].non_finite;
    for (const Hypothesis& h : expanded[e].hypotheses) {
      if (std::exp(h.score) < options.min_alternative_expansion_prob) break;
      if (static_cast<std::int64_t>(h.tokens.size()) == max_length) {  // the first token was the last allowed
        results[i].hypotheses.push_back(h);
        continue;
      }
      by_length[h.tokens.size()].push_back({{i, h.score}, h.tokens});
    }
  }
  for (auto& [context, items] : by_length) {
    DecodeOptions rest = options;
    rest.return_alternatives = false, rest.prefix_is_context = true, rest.num_hypotheses = 1;
    rest.one_pass_prefix_tail = 1;  // the context ends with the alternative's first token
    rest.max_length = max_length - static_cast<std::int64_t>(context);
    rest.min_length = std::max<std::int64_t>(options.min_length - static_cast<std::int64_t>(context), 0);
    std::vector<std::vector<std::int32_t>> rest_sources, rest_prefixes;
    std::vector<std::uint64_t> rest_ids;
    for (const auto& [item, tokens] : items) {
      rest_sources.push_back(sources[item.sentence]), rest_prefixes.push_back(tokens);
      rest_ids.push_back(ids[static_cast<std::size_t>(item.sentence)]);
    }
    auto completed = translate(rest_sources, rest, rest_prefixes, SentenceIds(rest_ids));
    for (std::size_t k = 0; k < items.size(); ++k) {
      SentenceResult& result = results[items[k].first.sentence];
      if (completed[k].non_finite || completed[k].hypotheses.empty()) {
        result.non_finite = result.non_finite || completed[k].non_finite;
        continue;
      }
      Hypothesis h = std::move(completed[k].hypotheses.front());
      h.score += items[k].first.first_score;
      result.hypotheses.push_back(std::move(h));
    }
  }
  for (SentenceResult& r : results)
    if (r.non_finite) r.hypotheses.clear();  // whatever else completed is not to be trusted
  if (!sink) return results;
  for (std::int64_t i = 0; i < n; ++i) sink(static_cast<std::size_t>(i), std::move(results[i]));
  return {};
}

}  // namespace attend::runtime
