// Streaming tokens (TranslationOptions::on_token) and teacher-forced scoring
// (Translator::score_ids / score_tokens), through libattend.so as a program links it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "api_fixture.hpp"
#include "attend/attend.hpp"

namespace {

using Catch::Matchers::Contains;
using attend::api_test::kModel;
const auto first_lines = attend::api_test::corpus;

}  // namespace

TEST_CASE("C++ API: on_token streams each sentence's tokens as the result has them", "[api][streaming]") {
  const attend::Model model = attend::Model::load(kModel);
  const attend::Translator translator(model, {.threads = 1, .max_batch_size = 3});
  const auto lines = first_lines(7);
  attend::TranslationOptions options;
  options.max_length = 12;
  const auto expected = translator.translate_text(lines, options);

  std::map<std::size_t, std::vector<attend::TokenStep>> streamed;
  options.on_token = [&](const attend::TokenStep& s) {
    streamed[s.index].push_back(s);
    return false;
  };
  const auto results = translator.translate_text(lines, options, {}, {}, 50);
  REQUIRE(streamed.size() == lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& h = expected[i].hypotheses[0];
    CHECK(results[i].hypotheses[0].ids == h.ids);
    const auto& steps = streamed.at(50 + i);
    // Every generated id, then end-of-sequence if the hypothesis finished.
    REQUIRE(steps.size() == h.ids.size() + (h.finished ? 1 : 0));
    for (std::size_t k = 0; k < steps.size(); ++k) {
      CHECK(steps[k].step == static_cast<std::int64_t>(k));
      CHECK(steps[k].id == (k < h.ids.size() ? h.ids[k] : model.special_ids().eos));
      CHECK(steps[k].log_prob == h.token_log_probs[k]);
      CHECK(steps[k].is_last == (k + 1 == steps.size()));
    }
  }
}

// As CTranslate2's callback: true stops the row that token belongs to — one sentence,
// or one draw of a sampled sentence — and nothing else, in every streaming search, in
// any batch or thread split.
TEST_CASE("C++ API: on_token returning true stops that sentence (that draw) only, in every streaming mode", "[api][streaming]") {
  const attend::Model model = attend::Model::load(kModel);
  const auto lines = first_lines(6);
  struct Mode {
    const char* name;
    attend::TranslationOptions options;
    attend::TranslatorOptions translator;
  };
  attend::TranslationOptions greedy;
  greedy.min_length = greedy.max_length = 10;  // nothing ends before the stop
  attend::TranslationOptions sampled = greedy;
  sampled.sampling = true, sampled.sampling_topk = 5, sampled.seed = 4, sampled.num_hypotheses = 3;
  const std::vector<Mode> modes = {
      {"greedy, one batch", greedy, {.threads = 1}},
      {"greedy, batches of 2 on 2 workers", greedy, {.threads = 2, .inter_threads = 2, .intra_threads = 1, .max_batch_size = 2}},
      {"sampling, 3 draws", sampled, {.threads = 1, .max_beam_size = 3}},
  };
  for (const Mode& mode : modes) {
    INFO(mode.name);
    const attend::Translator translator(model, mode.translator);
    const auto expected = translator.translate_text(lines, mode.options);
    attend::TranslationOptions o = mode.options;
    // (sentence, draw) → tokens streamed after it: a plain map, no lock, because calls
    // come one at a time even from 2 workers (options.hpp). `inside` checks that, and the
    // ThreadSanitizer build would report the map besides.
    std::map<std::pair<std::size_t, std::int64_t>, int> after_stop;
    std::atomic<int> inside{0}, overlaps{0};
    o.on_token = [&](const attend::TokenStep& s) {
      if (++inside > 1) ++overlaps;
      std::this_thread::sleep_for(std::chrono::microseconds(50));  // widens any overlap
      --inside;
      const auto key = std::make_pair(s.index, s.hypothesis);
      if (after_stop.count(key)) ++after_stop[key];
      const bool stop = s.index == 2 && s.hypothesis == (mode.options.sampling ? 1 : 0) && s.step == 2;
      if (stop) after_stop[key] = 0;
      return stop;
    };
    const auto results = translator.translate_text(lines, o);
    CHECK(overlaps.load() == 0);
    REQUIRE(after_stop.size() == 1);
    CHECK(after_stop.begin()->second == 0);  // nothing more of the stopped row
    for (std::size_t i = 0; i < lines.size(); ++i) {
      INFO("sentence " << i);
      REQUIRE(results[i].hypotheses.size() == expected[i].hypotheses.size());
      std::vector<std::vector<std::int32_t>> got, want;
      for (const auto& h : results[i].hypotheses) got.push_back(h.ids);
      for (const auto& h : expected[i].hypotheses) want.push_back(h.ids);
      if (i != 2) {
        CHECK(got == want);  // every other sentence goes on to its end
        continue;
      }
      // The stopped row: its first 3 tokens, unfinished, scored over them (length 3).
      const auto stopped = std::find_if(results[i].hypotheses.begin(), results[i].hypotheses.end(),
                                        [](const attend::Hypothesis& h) { return h.ids.size() == 3; });
      REQUIRE(stopped != results[i].hypotheses.end());
      CHECK_FALSE(stopped->finished);
      float sum = 0;
      for (float lp : stopped->token_log_probs) sum += lp;
      CHECK(stopped->score == Approx(sum / 3).margin(1e-5));
      // With several draws, the others of the same sentence are untouched.
      std::size_t full = 0;
      for (const auto& h : results[i].hypotheses) full += h.ids.size() == 10 ? 1 : 0;
      CHECK(full == results[i].hypotheses.size() - 1);
    }
  }

  attend::TranslationOptions beam;
  beam.beam_size = 2;
  beam.on_token = [](const attend::TokenStep&) { return false; };
  const attend::Translator translator(model, {.threads = 1});
  CHECK_THROWS_WITH(translator.translate_text(first_lines(1), beam), Contains("on_token") && Contains("beam_size 1"));
}

TEST_CASE("C++ API: score_ids gives a translation's own log-probabilities back", "[api][scoring]") {
  const attend::Model model = attend::Model::load(kModel);
  const attend::Translator translator(model, {.threads = 1, .max_batch_size = 4});
  const auto lines = first_lines(9);
  std::vector<std::vector<std::int32_t>> sources, targets;
  for (const auto& l : lines) sources.push_back(model.encode_text(l));
  attend::TranslationOptions options;
  options.max_length = 20;
  options.min_length = 0;  // no renormalisation at the first step: raw log p's, as scoring gives
  const auto translated = translator.translate_ids(sources, options);
  for (const auto& r : translated) targets.push_back(r.hypotheses[0].ids);

  const auto scores = translator.score_ids(sources, targets);
  REQUIRE(scores.size() == sources.size());
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const auto& h = translated[i].hypotheses[0];
    CHECK(scores[i].ids == targets[i]);
    REQUIRE(scores[i].log_probs.size() == targets[i].size() + 1);  // + end-of-sequence
    for (std::size_t k = 0; k < targets[i].size(); ++k) CHECK(scores[i].log_probs[k] == Approx(h.token_log_probs[k]).margin(1e-5));
    if (h.finished) CHECK(scores[i].log_probs.back() == Approx(h.token_log_probs.back()).margin(1e-5));
    float sum = 0;
    for (float lp : scores[i].log_probs) {
      CHECK(lp <= 0);
      sum += lp;
    }
    CHECK(scores[i].log_prob == Approx(sum).margin(1e-4));
  }

  // A target the model would not choose scores lower than its own choice.
  auto other = targets[0];
  other[0] = other[0] == 5 ? 6 : 5;
  const auto worse = translator.score_ids({sources[0]}, {other});
  CHECK(worse[0].log_probs[0] < scores[0].log_probs[0]);

  // Tokens in and out.
  const auto tokens = translator.score_tokens({{"▁The", "▁quick", "."}}, {model.decode_tokens(targets[0])});
  CHECK(tokens[0].tokens == model.decode_tokens(targets[0]));
  CHECK(tokens[0].log_probs.size() == targets[0].size() + 1);

  // max_input_length (CTranslate2's score_batch): the target cut to max_input_length - 1
  // tokens before its end-of-sequence, the source cut as translation cuts it; 0: no cut.
  REQUIRE(targets[0].size() >= 3);
  const auto cut = translator.score_ids({sources[0]}, {targets[0]}, 3);
  CHECK(cut[0].ids == std::vector<std::int32_t>(targets[0].begin(), targets[0].begin() + 2));
  CHECK(cut[0].log_probs.size() == 3);
  std::vector<std::int32_t> cut_source = sources[0];  // as translation cuts: an end-of-sequence kept last
  REQUIRE(cut_source.size() > 3);
  const bool ends = cut_source.back() == model.special_ids().eos;
  cut_source.resize(ends ? 2 : 3);
  if (ends) cut_source.push_back(model.special_ids().eos);
  const auto by_hand = translator.score_ids({cut_source}, {cut[0].ids}, 0);
  CHECK(by_hand[0].log_probs == cut[0].log_probs);
  // (the same batch of one on both sides: batch shapes change the GEMMs' low bits)
  CHECK(translator.score_ids({sources[0]}, {targets[0]}, 0)[0].log_probs ==
        translator.score_ids({sources[0]}, {targets[0]})[0].log_probs);
  CHECK_THROWS_AS(translator.score_ids({sources[0]}, {targets[0]}, -1), attend::OptionError);

  const auto empty = translator.score_ids({sources[0]}, {{}});
  CHECK(empty[0].log_probs.size() == 1);  // end-of-sequence alone

  // In one batch with a longer target, a short target scores as it does alone.
  const auto mixed = translator.score_ids({sources[0], sources[1]}, {{targets[0][0]}, targets[1]});
  REQUIRE(mixed[0].log_probs.size() == 2);
  const auto alone = translator.score_ids({sources[0]}, {{targets[0][0]}});
  CHECK(mixed[0].log_probs[0] == Approx(alone[0].log_probs[0]).margin(1e-5));
  CHECK(mixed[0].log_probs[1] == Approx(alone[0].log_probs[1]).margin(1e-5));
}

TEST_CASE("C++ API: score_ids names the target at fault", "[api][scoring]") {
  const attend::Model model = attend::Model::load(kModel);  // max_positions 64
  const attend::Translator translator(model, {.threads = 1});
  const std::vector<std::int32_t> source = model.encode_text("hello");
  CHECK_THROWS_WITH(translator.score_ids({source}, {}), Contains("0 targets for 1 sources"));
  CHECK_THROWS_WITH(translator.score_ids({source, source}, {{5}, std::vector<std::int32_t>(64, 5)}),
                    Contains("sentence 1: target of 64 tokens") && Contains("63"));
  CHECK_THROWS_WITH(translator.score_ids({source}, {{5, model.special_ids().eos, 6}}),
                    Contains("sentence 0: target contains the end-of-sequence id"));
  CHECK_THROWS_WITH(translator.score_ids({source}, {{5, 100000}}), Contains("target prefix token 1 has id 100000"));
}
