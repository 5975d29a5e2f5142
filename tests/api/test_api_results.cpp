// What every result of the API guarantees, as the CLI's "one line per input line" does:
// a hypothesis always (so hypotheses[0] exists), an empty hypothesis for an
// empty source, a flag instead of garbage when the model's scores are not finite, and
// over-long sources truncated rather than refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "attend/attend.h"
#include "attend/attend.hpp"

namespace {

using Catch::Matchers::Contains;

const std::string kFixture = ATTEND_CLI_FIXTURE;
const std::string kModel = kFixture + "/model";                   // max_positions 64, target EOS 2
const std::string kOverflowModel = kFixture + "/model-overflow";  // NaN logits
const std::string kLateOverflowModel = kFixture + "/model-late-overflow";  // NaN logits from the second step on

std::vector<std::string> corpus(std::size_t n) {
  std::ifstream in(kFixture + "/corpus.txt");
  std::vector<std::string> out;
  for (std::string line; out.size() < n && std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("API results: never without a hypothesis, never more than num_hypotheses, whatever the search finds", "[api][results]") {
  const attend::Model model = attend::Model::load(kModel);
  const attend::Translator translator(model, {.threads = 1, .max_beam_size = 64});
  const std::vector<std::string> sources = {corpus(1)[0], "", "   ", "\xC2\xA0", "\xE2\x81\xA0", "A cat."};
  struct Case {
    std::string what;
    attend::TranslationOptions options;
    std::vector<std::vector<std::int32_t>> prefixes;
  };
  std::vector<Case> cases;
  for (std::int64_t beam : {1, 2, 64}) {
    attend::TranslationOptions o;
    o.beam_size = beam, o.num_hypotheses = beam, o.max_length = beam == 64 ? 1 : 6;
    cases.push_back({"beam " + std::to_string(beam), o, {}});
    o.min_length = 1;  // the forced end-of-sequence is impossible: nothing ends normally
    cases.push_back({"beam " + std::to_string(beam) + ", prefix </s>, min_length 1", o,
                     std::vector<std::vector<std::int32_t>>(sources.size(), {2})});
  }
  attend::TranslationOptions sampling;
  sampling.sampling = true, sampling.sampling_topk = 5, sampling.max_length = 6;
  cases.push_back({"sampling", sampling, {}});
  for (const Case& c : cases) {
    INFO(c.what);
    std::vector<std::vector<std::int32_t>> ids;
    for (const auto& s : sources) ids.push_back(model.encode_text(s));
    const auto results = translator.translate_ids(ids, c.options, c.prefixes);
    REQUIRE(results.size() == sources.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      INFO("source " << i);
      CHECK(results[i].hypotheses.size() >= 1);
      CHECK(static_cast<std::int64_t>(results[i].hypotheses.size()) <= c.options.num_hypotheses);
      CHECK_FALSE(results[i].non_finite);
      for (std::size_t k = 1; k < results[i].hypotheses.size(); ++k)
        CHECK(results[i].hypotheses[k - 1].score >= results[i].hypotheses[k].score);
    }
  }
}

TEST_CASE("API results: an empty or blank source is an empty hypothesis, as the CLI's empty line", "[api][results]") {
  const attend::Model model = attend::Model::load(kModel);
  const attend::Translator translator(model, {.threads = 1});
  for (const std::string blank : {"", " ", "\t", "\xC2\xA0\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\x8B", "\xE2\x81\xA0", "\xEF\xBB\xBF"}) {
    INFO("source '" << blank << "'");
    CHECK(attend::is_blank_text(blank));
    CHECK(model.is_empty_source(model.encode_text(blank)));
    const auto r = translator.translate_text({blank});
    REQUIRE(r.size() == 1);
    REQUIRE(r[0].hypotheses.size() == 1);
    CHECK(r[0].hypotheses[0].ids.empty());
    CHECK(r[0].hypotheses[0].text.empty());
    CHECK(r[0].hypotheses[0].score == 0);
  }
  CHECK_FALSE(attend::is_blank_text("a\xC2\xA0"));
  CHECK_FALSE(attend::is_blank_text("\xff"));
  CHECK(translator.translate_ids({{}})[0].hypotheses[0].ids.empty());
  CHECK(translator.translate_tokens({{}})[0].hypotheses[0].tokens.empty());
  // Through the callback too, and among other sentences.
  std::size_t calls = 0;
  translator.translate_text({"", "The fox.", ""}, {}, {}, [&](std::size_t, attend::TranslationResult&& r) {
    ++calls;
    CHECK(r.hypotheses.size() == 1);
  });
  CHECK(calls == 3);
}

TEST_CASE("API results: non-finite scores are flagged, never returned as a translation", "[api][results]") {
  for (const std::string& path : {kOverflowModel, kLateOverflowModel}) {
    const attend::Model model = attend::Model::load(path);
    const attend::Translator translator(model, {.threads = 1, .max_beam_size = 3});
    for (const bool alternatives : {false, true})
      for (std::int64_t beam : {1, 3}) {
        INFO(path << ", beam " << beam << (alternatives ? ", return_alternatives" : ""));
        attend::TranslationOptions o;
        o.beam_size = beam, o.num_hypotheses = beam, o.max_length = 5, o.return_alternatives = alternatives;
        const auto r = translator.translate_text({"The quick fox.", "", "A cat."}, o);
        REQUIRE(r.size() == 3);
        for (std::size_t i : {0, 2}) {
          CHECK(r[i].non_finite);
          REQUIRE(r[i].hypotheses.size() == 1);
          CHECK(r[i].hypotheses[0].ids.empty());
          CHECK(std::isinf(r[i].hypotheses[0].score));
        }
        CHECK_FALSE(r[1].non_finite);  // the empty source never ran the model
      }
  }
  attend_model* m = nullptr;
  attend_translator* t = nullptr;
  attend_result* result = nullptr;
  REQUIRE(attend_model_load(kOverflowModel.c_str(), nullptr, &m) == ATTEND_OK);
  REQUIRE(attend_translator_create(m, nullptr, &t) == ATTEND_OK);
  const char* lines[2] = {"The fox.", ""};
  REQUIRE(attend_translate_text(t, lines, 2, nullptr, &result) == ATTEND_OK);
  CHECK(attend_result_non_finite(result, 0) == 1);
  CHECK(attend_result_non_finite(result, 1) == 0);
  CHECK(attend_result_non_finite(result, 7) == 0);
  CHECK(attend_result_hypotheses(result, 0) == 1);
  CHECK(std::string(attend_result_text(result, 0, 0)).empty());
  attend_result_free(result);
  attend_translator_free(t);
  attend_model_free(m);
}

TEST_CASE("API: sources longer than max_input_length, or the model's limit, are truncated as the CLI does", "[api][results]") {
  const attend::Model model = attend::Model::load(kModel);
  const attend::Translator translator(model, {.threads = 1});
  std::string long_line;
  for (int i = 0; i < 60; ++i) long_line += "The quick brown fox. ";
  std::vector<std::int32_t> ids = model.encode_text(long_line);
  REQUIRE(static_cast<std::int64_t>(ids.size()) > translator.max_source_length());

  attend::TranslationOptions defaults;
  defaults.max_length = 6;
  const auto r = translator.translate_text({long_line}, defaults);  // default max_input_length: cut to the model's 64
  REQUIRE(r[0].hypotheses.size() == 1);
  std::vector<std::int32_t> cut = ids;
  model.truncate_source(cut, translator.max_source_length());
  CHECK(translator.translate_ids({cut}, defaults)[0].hypotheses[0].ids == r[0].hypotheses[0].ids);

  attend::TranslationOptions shorter = defaults;
  shorter.max_input_length = 10;
  std::vector<std::int32_t> ten = ids;
  model.truncate_source(ten, 10);
  CHECK(translator.translate_text({long_line}, shorter)[0].hypotheses[0].ids ==
        translator.translate_ids({ten}, defaults)[0].hypotheses[0].ids);

  attend::TranslationOptions no_limit = defaults;
  no_limit.max_input_length = 0;  // no cut: over the translator's limit is an error
  CHECK_THROWS_WITH(translator.translate_text({long_line}, no_limit), Contains("more than max_source_length 64"));
  attend::TranslationOptions negative = defaults;
  negative.max_input_length = -1;
  CHECK_THROWS_WITH(translator.translate_text({"x"}, negative), Contains("max_input_length = -1"));
}
