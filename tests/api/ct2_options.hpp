// CTranslate2's translate_batch keyword arguments as attend's options, for the tests
// that replay CTranslate2's outputs (test_ct2_cases.cpp, test_ct2_families.cpp).
#pragma once

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attend/attend.hpp"

namespace attend::test {

// translate_batch's keyword arguments as attend's options; unknown ones fail the test.
inline attend::TranslationOptions options_from_ct2(const nlohmann::json& kwargs) {
  attend::TranslationOptions o;  // CTranslate2's defaults, but for its beam of 2
  o.beam_size = 2;
  for (const auto& [key, v] : kwargs.items()) {
    if (key == "beam_size") o.beam_size = v;
    else if (key == "num_hypotheses") o.num_hypotheses = v;
    else if (key == "length_penalty") o.length_penalty = v;
    else if (key == "coverage_penalty") o.coverage_penalty = v;
    else if (key == "patience") o.patience = v;
    else if (key == "repetition_penalty") o.repetition_penalty = v;
    else if (key == "no_repeat_ngram_size") o.no_repeat_ngram_size = v;
    else if (key == "disable_unk") o.disable_unk = v;
    else if (key == "suppress_sequences") o.suppress_sequences = v.get<std::vector<std::vector<std::string>>>();
    else if (key == "end_token") o.end_token = v.is_string() ? std::vector<std::string>{v} : v.get<std::vector<std::string>>();
    else if (key == "return_end_token") o.return_end_token = v;
    else if (key == "prefix_bias_beta") o.prefix_bias_beta = v;
    else if (key == "max_input_length") o.max_input_length = v;
    else if (key == "max_decoding_length") o.max_length = v;
    else if (key == "min_decoding_length") o.min_length = v;
    else if (key == "return_attention") o.return_attention = v;
    else if (key == "return_alternatives") o.return_alternatives = v;
    else if (key == "min_alternative_expansion_prob") o.min_alternative_expansion_prob = v;
    else if (key == "replace_unknowns") o.replace_unknowns = v;
    else if (key == "return_scores") continue;  // attend always returns scores
    else FAIL("a case uses the option " << key << ", which this test does not map");
  }
  return o;
}

}  // namespace attend::test
