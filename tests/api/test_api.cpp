// The public API as an embedding program sees it: libattend.so through
// include/attend/attend.hpp and attend.h only.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "api_fixture.hpp"
#include "attend/attend.h"
#include "attend/attend.hpp"

namespace {

using Catch::Matchers::Contains;
using attend::api_test::corpus;
using attend::api_test::kModel;

attend::TranslationOptions short_output() {
  attend::TranslationOptions o;
  o.max_length = 10;
  return o;
}

}  // namespace

TEST_CASE("C++ API: text in, text out, the same as ids through encode/decode", "[api]") {
  const attend::Model model = attend::Model::load(kModel);
  REQUIRE(model.has_text_tokenizer());
  REQUIRE(model.has_vocabulary());
  CHECK(model.max_positions() == 64);
  CHECK(model.source_vocabulary_size() == 150);
  CHECK(model.target_vocabulary_size() == 120);
  const auto special = model.special_ids();
  CHECK(special.eos == 2);

  const attend::Translator translator(model, {.threads = 2, .max_batch_size = 4});
  const auto lines = corpus(9);
  const auto text = translator.translate_text(lines, short_output());
  REQUIRE(text.size() == lines.size());

  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& l : lines) {
    ids.push_back(model.encode_text(l));
    CHECK(ids.back().back() == special.eos);  // the model's config adds EOS to sources
  }
  const auto by_ids = translator.translate_ids(ids, short_output());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    REQUIRE(text[i].hypotheses.size() == 1);
    const auto& h = text[i].hypotheses[0];
    CHECK(h.ids == by_ids[i].hypotheses[0].ids);
    CHECK(h.text == model.decode_text(h.ids));
    CHECK(h.score == by_ids[i].hypotheses[0].score);
    CHECK(h.log_prob < 0);
    CHECK(h.token_log_probs.size() >= h.ids.size());
    CHECK(h.ids.size() <= 10);
  }

  // The same ids read in place: views into one flat buffer, a prefix as a view too.
  std::vector<std::int32_t> flat;
  for (const auto& i : ids) flat.insert(flat.end(), i.begin(), i.end());
  std::vector<attend::IdsView> views;
  for (std::size_t i = 0, at = 0; i < ids.size(); at += ids[i].size(), ++i) views.emplace_back(flat.data() + at, ids[i].size());
  const auto by_views = translator.translate_id_views(views, short_output());
  REQUIRE(by_views.size() == by_ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) CHECK(by_views[i].hypotheses[0].ids == by_ids[i].hypotheses[0].ids);
  const std::vector<std::int32_t> prefix = {by_ids[0].hypotheses[0].ids.at(0)};
  CHECK(translator.translate_id_views({views[1]}, short_output(), {prefix})[0].hypotheses[0].ids.at(0) == prefix[0]);

  // Tokens: SentencePiece pieces serve as the vocabulary.
  const auto tokens = translator.translate_tokens({{"▁The", "▁quick", "▁fox", "."}}, short_output());
  REQUIRE(tokens.size() == 1);
  CHECK(tokens[0].hypotheses[0].tokens == model.decode_tokens(tokens[0].hypotheses[0].ids));
}

TEST_CASE("C++ API: results by callback, n-best, truncation", "[api]") {
  const attend::Model model = attend::Model::load(kModel);
  const attend::Translator translator(model, {.threads = 1, .max_batch_size = 3, .max_beam_size = 3});
  const auto lines = corpus(7);
  const auto expected = translator.translate_text(lines, short_output());

  std::set<std::size_t> seen;
  const auto none = translator.translate_text(lines, short_output(), {},
                                              [&](std::size_t i, attend::TranslationResult&& r) {
                                                CHECK(seen.insert(i).second);
                                                REQUIRE(i >= 100);
                                                CHECK(r.hypotheses[0].text == expected[i - 100].hypotheses[0].text);
                                              },
                                              100);
  CHECK(none.empty());
  CHECK(seen.size() == lines.size());

  attend::TranslationOptions beam = short_output();
  beam.beam_size = 3, beam.num_hypotheses = 3;
  const auto nbest = translator.translate_text({lines[0]}, beam);
  REQUIRE(nbest[0].hypotheses.size() == 3);
  CHECK(nbest[0].hypotheses[0].score >= nbest[0].hypotheses[1].score);
  CHECK(nbest[0].hypotheses[1].score >= nbest[0].hypotheses[2].score);

  std::vector<std::int32_t> ids = model.encode_text(lines[0] + " " + lines[1] + " " + lines[2]);
  REQUIRE(ids.size() > 8);
  CHECK(model.truncate_source(ids, 8));
  CHECK(ids.size() == 8);
  CHECK(ids.back() == model.special_ids().eos);
  CHECK_FALSE(model.truncate_source(ids, 8));
}

TEST_CASE("C++ API: errors are attend::Error naming what is wrong", "[api]") {
  CHECK_THROWS_WITH(attend::Model::load("/nonexistent/model"), Contains("/nonexistent/model"));
  CHECK_THROWS_AS(attend::Model::load("/nonexistent/model"), attend::Error);
  CHECK_THROWS_WITH(attend::Model::preset("huge"), Contains("unknown preset 'huge'"));

  const attend::Model model = attend::Model::preset("tiny");
  CHECK_FALSE(model.has_text_tokenizer());
  CHECK_THROWS_WITH(model.encode_text("hello"), Contains("no SentencePiece model"));
  const attend::Translator translator(model, {.threads = 1, .max_source_length = 16});
  CHECK(translator.max_source_length() == 16);
  CHECK_THROWS_WITH(translator.translate_ids({{5, 6}, {5, 1000}}), Contains("sentence 1: source token 1 has id 1000"));
  CHECK_THROWS_WITH(translator.translate_ids({{5, 1000}}, {}, {}, {}, 40), Contains("sentence 40: source token 1"));
  attend::TranslationOptions no_truncation;  // (by default, longer sources are truncated)
  no_truncation.max_input_length = 0;
  CHECK_THROWS_WITH(translator.translate_ids(std::vector<std::vector<std::int32_t>>(2, std::vector<std::int32_t>(17, 5)), no_truncation),
                    Contains("sentence 0: source has 17 tokens, more than max_source_length 16"));
  attend::TranslationOptions too_wide;
  too_wide.beam_size = 5;
  CHECK_THROWS_WITH(translator.translate_ids({{5}}, too_wide), Contains("beam_size"));
  CHECK_FALSE(translator.plan_description().empty());
  CHECK(translator.arena_bytes() > 0);
}

TEST_CASE("C++ API: default options suit a model with fewer positions than 256", "[api]") {
  const attend::Model model = attend::Model::load(kModel);  // max_positions 64
  REQUIRE(model.max_positions() < 256);
  const attend::Translator translator(model, {.threads = 1});
  attend::TranslationOptions defaults;
  CHECK(defaults.max_length == 0);  // the translator's limit
  attend::TranslationOptions force_long;
  force_long.min_length = force_long.max_length = model.max_positions();
  const auto results = translator.translate_text(corpus(2), defaults);
  REQUIRE(results.size() == 2);
  for (const auto& r : results) {
    REQUIRE(r.hypotheses.size() == 1);
    CHECK(static_cast<std::int64_t>(r.hypotheses[0].ids.size()) <= model.max_positions());
  }
  const auto longest = translator.translate_text(corpus(1), force_long);
  CHECK(static_cast<std::int64_t>(longest[0].hypotheses[0].ids.size()) == model.max_positions());
  attend::TranslationOptions negative;
  negative.max_length = -1;
  CHECK_THROWS_WITH(translator.translate_text(corpus(1), negative), Contains("max_length = -1: must be an integer ≥ 0"));
  attend::TranslationOptions too_long;
  too_long.max_length = model.max_positions() + 1;
  CHECK_THROWS_WITH(translator.translate_text(corpus(1), too_long), Contains("max_length = 65: must be in [0, 64] (the translator's max_target_length"));
}

TEST_CASE("C++ API: one translator from many threads gives each the single-threaded answer", "[api]") {
  const attend::Model model = attend::Model::load(kModel);
  const attend::Translator translator(model, {.threads = 1});
  const auto lines = corpus(12);
  const auto expected = translator.translate_text(lines, short_output());
  std::vector<std::vector<attend::TranslationResult>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { got[t] = translator.translate_text(lines, short_output()); });
  for (auto& t : threads) t.join();
  for (const auto& g : got)
    for (std::size_t i = 0; i < lines.size(); ++i) CHECK(g[i].hypotheses[0].text == expected[i].hypotheses[0].text);
}

TEST_CASE("C++ API: several batches at once (inter_threads) give the one-batch-at-a-time results", "[api]") {
  const attend::Model model = attend::Model::load(kModel);
  const auto lines = corpus(40);
  const attend::Translator serial(model, {.threads = 1, .max_batch_size = 4});
  const attend::Translator parallel(model, {.inter_threads = 3, .intra_threads = 1, .max_batch_size = 4});
  CHECK(parallel.inter_threads() == 3);
  CHECK(parallel.intra_threads() == 1);
  attend::TranslationOptions greedy = short_output(), beam = short_output(), sampling = short_output();
  beam.beam_size = 3, beam.num_hypotheses = 2;
  sampling.sampling = true, sampling.sampling_topk = 5, sampling.seed = 7;
  for (const auto& options : {greedy, beam, sampling}) {
    const auto expected = serial.translate_text(lines, options);
    const auto got = parallel.translate_text(lines, options);
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      REQUIRE(got[i].hypotheses.size() == expected[i].hypotheses.size());
      for (std::size_t k = 0; k < got[i].hypotheses.size(); ++k) {
        CHECK(got[i].hypotheses[k].ids == expected[i].hypotheses[k].ids);
        CHECK(got[i].hypotheses[k].score == expected[i].hypotheses[k].score);
      }
    }
  }
  // The callback sees every sentence once, and never two at a time.
  std::atomic<int> inside{0};
  bool overlapped = false;
  std::vector<int> seen(lines.size(), 0);
  const auto none = parallel.translate_text(lines, greedy, {}, [&](std::size_t i, attend::TranslationResult&& r) {
    if (inside.fetch_add(1) != 0) overlapped = true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    ++seen.at(i);
    CHECK(!r.hypotheses.empty());
    inside.fetch_sub(1);
  });
  CHECK(none.empty());
  CHECK_FALSE(overlapped);
  CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(lines.size()));
  // A failing batch fails the call, and the translator still works afterwards.
  std::vector<std::vector<std::int32_t>> bad(9, {5, 6, 7});
  bad[6] = {5, -1};
  CHECK_THROWS_AS(parallel.translate_ids(bad, greedy), attend::Error);
  CHECK(parallel.translate_text(lines, greedy).size() == lines.size());
}

TEST_CASE("C++ API: profiling and model information", "[api]") {
  const attend::Model model = attend::Model::load(kModel);
  const auto info = model.info();
  CHECK(info.directory == kModel);
  CHECK(info.parameters > 0);
  CHECK(info.file_bytes > 0);
  CHECK_THAT(info.text_tokenizer, Contains("source.spm"));
  CHECK_THAT(info.config_json, Contains("\"max_positions\": 64"));
  CHECK_FALSE(info.tensors.empty());
  CHECK_FALSE(info.checks.empty());
  const attend::Translator translator(model);
  translator.set_profiling(true);
  translator.translate_text(corpus(3), short_output());
  double total = 0;
  std::set<std::string> kinds;
  for (const auto& p : translator.profile()) total += p.seconds, kinds.insert(p.kind);
  CHECK(total > 0);
  CHECK(kinds.count("gemm"));
  CHECK(kinds.count("self_attention"));
  translator.reset_profile();
  for (const auto& p : translator.profile()) CHECK(p.seconds == 0);
  CHECK(std::string(attend::version()) == std::string(attend_version()));
}

TEST_CASE("C API: status codes, messages, library-owned results", "[api]") {
  attend_model* model = nullptr;
  CHECK(attend_model_load("/nonexistent/model", nullptr, &model) == ATTEND_ERROR);
  CHECK(model == nullptr);
  CHECK_THAT(std::string(attend_last_error()), Contains("/nonexistent/model"));
  CHECK(attend_model_load(nullptr, nullptr, &model) == ATTEND_ERROR_INVALID_ARGUMENT);
  CHECK(attend_model_load(kModel.c_str(), "pentium", &model) == ATTEND_ERROR_INVALID_ARGUMENT);  // an option value: named
  CHECK_THAT(std::string(attend_last_error()), Contains("pentium"));

  REQUIRE(attend_model_load(kModel.c_str(), nullptr, &model) == ATTEND_OK);
  CHECK(attend_model_has_text_tokenizer(model) == 1);
  attend_translator_options topt;
  attend_translator_options_init(&topt);
  CHECK(topt.max_batch_size == 32);
  topt.threads = 1;
  attend_translator* translator = nullptr;
  REQUIRE(attend_translator_create(model, &topt, &translator) == ATTEND_OK);
  attend_model_free(model);  // the translator keeps what it needs

  attend_options options;
  attend_options_init(&options);
  CHECK(options.beam_size == 1);
  options.max_length = 10;
  const auto lines = corpus(3);
  const char* text[3] = {lines[0].c_str(), lines[1].c_str(), lines[2].c_str()};
  attend_result* result = nullptr;
  REQUIRE(attend_translate_text(translator, text, 3, &options, &result) == ATTEND_OK);
  REQUIRE(attend_result_sentences(result) == 3);
  CHECK(attend_result_hypotheses(result, 0) == 1);
  CHECK(attend_result_text(result, 0, 0) != nullptr);
  CHECK(attend_result_score(result, 0, 0) < 0);
  CHECK(attend_result_log_prob(result, 0, 0) < 0);
  std::size_t length = 0;
  const int32_t* ids = attend_result_ids(result, 1, 0, &length);
  CHECK(ids != nullptr);
  CHECK((length >= 1 && length <= 10));
  // Out of range: NULL, 0, NaN — never a crash.
  CHECK(attend_result_text(result, 3, 0) == nullptr);
  std::size_t no_length = 7;
  CHECK(attend_result_ids(result, 0, 1, &no_length) == nullptr);
  CHECK(no_length == 0);
  CHECK(std::isnan(attend_result_score(result, 7, 0)));
  CHECK(attend_result_hypotheses(result, 9) == 0);

  // The ids path agrees with the text path.
  const attend::Model cpp = attend::Model::load(kModel);
  const std::vector<std::int32_t> encoded = cpp.encode_text(lines[1]);
  const int32_t* sources[1] = {encoded.data()};
  const std::size_t lengths[1] = {encoded.size()};
  attend_result* by_ids = nullptr;
  REQUIRE(attend_translate_ids(translator, sources, lengths, 1, &options, &by_ids) == ATTEND_OK);
  std::size_t by_ids_length = 0;
  const int32_t* got = attend_result_ids(by_ids, 0, 0, &by_ids_length);
  CHECK(std::vector<int32_t>(got, got + by_ids_length) == std::vector<int32_t>(ids, ids + length));
  attend_result_free(by_ids);

  // Bad input: a status and a message, and the result stays NULL.
  const int32_t bad[2] = {5, 100000};
  const int32_t* bad_sources[1] = {bad};
  const std::size_t bad_lengths[1] = {2};
  attend_result* none = nullptr;
  CHECK(attend_translate_ids(translator, bad_sources, bad_lengths, 1, &options, &none) == ATTEND_ERROR);
  CHECK(none == nullptr);
  CHECK_THAT(std::string(attend_last_error()), Contains("id 100000"));
  CHECK(attend_translate_ids(translator, nullptr, bad_lengths, 1, &options, &none) == ATTEND_ERROR_INVALID_ARGUMENT);
  const char* null_line[1] = {nullptr};
  CHECK(attend_translate_text(translator, null_line, 1, &options, &none) == ATTEND_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(attend_last_error()), Contains("lines[0] is NULL"));
  options.beam_size = 0;
  CHECK(attend_translate_text(translator, text, 1, &options, &none) == ATTEND_ERROR_INVALID_ARGUMENT);  // names beam_size
  CHECK_THAT(std::string(attend_last_error()), Contains("beam_size"));

  attend_result_free(result);
  attend_translator_free(translator);
  attend_result_free(nullptr);  // freeing NULL is allowed
  attend_translator_free(nullptr);
  attend_model_free(nullptr);
}

// Every pointer argument of the C API, and every pointer inside an array argument, NULL
// in turn: ATTEND_ERROR_INVALID_ARGUMENT with a message naming it, never ATTEND_ERROR
// (which means a bad model, input or option) and never a crash.
TEST_CASE("C API: a NULL anywhere in an argument, an array's entry included, is ATTEND_ERROR_INVALID_ARGUMENT", "[api]") {
  attend_model* model = nullptr;
  REQUIRE(attend_model_load(kModel.c_str(), nullptr, &model) == ATTEND_OK);
  attend_translator* translator = nullptr;
  REQUIRE(attend_translator_create(model, nullptr, &translator) == ATTEND_OK);
  const std::vector<std::int32_t> ids = {5, 6, 7};
  const int32_t* sources[2] = {ids.data(), ids.data()};
  const std::size_t lengths[2] = {ids.size(), ids.size()};
  const char* lines[2] = {"A small cat.", "A red fox."};
  const char* tokens[2] = {"A", "FOX"};
  attend_result* result = nullptr;

  // Each case: the call with one pointer NULL, and the name the message must hold.
  struct Case {
    const char* name;
    std::function<attend_status()> call;
  };
  auto with_options = [&](const std::function<void(attend_options&)>& edit) {
    return [&, edit] {
      attend_options o;
      attend_options_init(&o);
      edit(o);
      return attend_translate_text(translator, lines, 2, &o, &result);
    };
  };
  const std::vector<Case> cases = {
      {"attend_model_load", [&] { return attend_model_load(nullptr, nullptr, &model); }},
      {"attend_model_load", [&] { return attend_model_load(kModel.c_str(), nullptr, nullptr); }},
      {"attend_translator_create", [&] { return attend_translator_create(nullptr, nullptr, &translator); }},
      {"attend_convert_model", [&] { return attend_convert_model(nullptr, "out", nullptr); }},
      {"attend_translate_ids", [&] { return attend_translate_ids(nullptr, sources, lengths, 2, nullptr, &result); }},
      {"attend_translate_ids", [&] { return attend_translate_ids(translator, nullptr, lengths, 2, nullptr, &result); }},
      {"attend_translate_ids", [&] { return attend_translate_ids(translator, sources, nullptr, 2, nullptr, &result); }},
      {"attend_translate_ids", [&] { return attend_translate_ids(translator, sources, lengths, 2, nullptr, nullptr); }},
      {"sources[1] is NULL", [&] {
         const int32_t* holed[2] = {ids.data(), nullptr};
         return attend_translate_ids(translator, holed, lengths, 2, nullptr, &result);
       }},
      {"attend_translate_text", [&] { return attend_translate_text(translator, nullptr, 2, nullptr, &result); }},
      {"lines[1] is NULL", [&] {
         const char* holed[2] = {lines[0], nullptr};
         return attend_translate_text(translator, holed, 2, nullptr, &result);
       }},
      {"options->end_token is NULL", with_options([](attend_options& o) { o.end_token_count = 1; })},
      {"options->end_token[1] is NULL", with_options([&](attend_options& o) {
         static const char* holed[2] = {"FOX", nullptr};
         o.end_token = holed, o.end_token_count = 2;
       })},
      {"options->suppress_sequences is NULL", with_options([](attend_options& o) { o.suppress_sequences_count = 1; })},
      {"options->suppress_sequences[0] is NULL", with_options([&](attend_options& o) {
         static const char* holed[2] = {nullptr, "A"};
         o.suppress_sequences = holed, o.suppress_sequences_count = 2;
       })},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    result = nullptr;
    CHECK(c.call() == ATTEND_ERROR_INVALID_ARGUMENT);
    CHECK(result == nullptr);
    CHECK_THAT(std::string(attend_last_error()), Contains(c.name));
  }
  // The same arrays whole: accepted (the cases above differ from them by one NULL only).
  attend_options o;
  attend_options_init(&o);
  o.end_token = tokens, o.end_token_count = 2;
  o.suppress_sequences = tokens, o.suppress_sequences_count = 1;
  REQUIRE(attend_translate_text(translator, lines, 2, &o, &result) == ATTEND_OK);
  attend_result_free(result);
  REQUIRE(attend_translate_ids(translator, sources, lengths, 2, nullptr, &result) == ATTEND_OK);
  attend_result_free(result);
  // A NULL entry of length 0 is an empty source, as documented: not an error.
  const int32_t* empty_entry[1] = {nullptr};
  const std::size_t zero[1] = {0};
  REQUIRE(attend_translate_ids(translator, empty_entry, zero, 1, nullptr, &result) == ATTEND_OK);
  attend_result_free(result);
  attend_translator_free(translator);
  attend_model_free(model);
}

// end_token as CTranslate2's: unset, the model's end-of-sequence; an empty list, none —
// every hypothesis runs to max_length; an empty token, an error naming the option.
TEST_CASE("end_token: unset is the model's, an empty list is none (CTranslate2's end_token=[]), '' is refused", "[api]") {
  const std::string aren = std::string(ATTEND_SOURCE_DIR) + "/tests/data/models/ct2-aren-transliteration";
  const attend::Model model = attend::Model::load(aren);
  const attend::Translator translator(model, {.threads = 1});
  const std::vector<std::vector<std::string>> name = {{"آ", "ت", "ز", "م", "و", "ن"}};
  attend::TranslationOptions o;
  o.max_length = 10;
  const auto ended = translator.translate_tokens(name, o)[0].hypotheses[0];
  REQUIRE(ended.finished);
  CHECK(ended.tokens == std::vector<std::string>{"a", "t", "z", "m", "o", "n"});
  o.end_token = std::vector<std::string>{};
  const auto endless = translator.translate_tokens(name, o)[0].hypotheses[0];
  CHECK_FALSE(endless.finished);
  // CTranslate2 4.8.1 gives the same: the name, then </s> as an ordinary token.
  CHECK(endless.tokens == std::vector<std::string>{"a", "t", "z", "m", "o", "n", "</s>", "</s>", "</s>", "</s>"});
  o.end_token = std::vector<std::string>{""};
  CHECK_THROWS_AS(translator.translate_tokens(name, o), attend::OptionError);
  CHECK_THROWS_WITH(translator.translate_tokens(name, o), Contains("end_token = ''"));
  o.end_token.reset();
  o.suppress_sequences = {{"a", ""}};
  CHECK_THROWS_WITH(translator.translate_tokens(name, o), Contains("suppress_sequences = ''"));
  o.suppress_sequences = {{}};  // an empty sequence suppresses nothing, as in CTranslate2
  CHECK(translator.translate_tokens(name, o)[0].hypotheses[0].tokens == ended.tokens);

  // The C API: end_token not NULL with a count of 0 is the empty list.
  attend_model* c_model = nullptr;
  REQUIRE(attend_model_load(aren.c_str(), nullptr, &c_model) == ATTEND_OK);
  attend_translator* c_translator = nullptr;
  REQUIRE(attend_translator_create(c_model, nullptr, &c_translator) == ATTEND_OK);
  const std::vector<std::int32_t> ids = model.encode_tokens(name[0]);
  const int32_t* sources[1] = {ids.data()};
  const std::size_t lengths[1] = {ids.size()};
  attend_options c;
  attend_options_init(&c);
  c.max_length = 10;
  const char* none[1] = {nullptr};
  for (const std::size_t want : {std::size_t{6}, std::size_t{10}}) {  // NULL: the model's; {} : none
    c.end_token = want == 6 ? nullptr : none, c.end_token_count = 0;
    attend_result* result = nullptr;
    REQUIRE(attend_translate_ids(c_translator, sources, lengths, 1, &c, &result) == ATTEND_OK);
    std::size_t length = 0;
    attend_result_ids(result, 0, 0, &length);
    CHECK(length == want);
    attend_result_free(result);
  }
  attend_translator_free(c_translator);
  attend_model_free(c_model);
}
