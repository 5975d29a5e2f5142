// Every layer and head's attention through the public API (return_attention_heads,
// Translator::attention_heads, save_attention_npz, the C API): shapes, distributions,
// causality, the alignment head equal to return_attention's, translation unchanged, and
// the errors.
//
// Tolerance against return_attention: the alignment step sums its scores in float and
// runs inside the batched beam search; the trace sums in double for one sentence. The
// probabilities differ by float rounding of ~head_dim = 16 products of O(1) numbers
// (~1e-6 relative to the scores); 1e-5 absolute on probabilities ≤ 1 leaves margin.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "api_fixture.hpp"
#include "attend/attend.h"
#include "attend/attend.hpp"

namespace {

using Catch::Matchers::Contains;
using attend::api_test::corpus;
using attend::api_test::kModel;

// Every row of every (layer, head) sums to 1 (rows of an empty source: none), all ≥ 0.
void check_distributions(const attend::AttentionMaps& m, bool causal) {
  REQUIRE(m.weights.size() == static_cast<std::size_t>(m.layers * m.heads * m.rows * m.columns));
  for (std::int64_t l = 0; l < m.layers; ++l)
    for (std::int64_t h = 0; h < m.heads; ++h)
      for (std::int64_t r = 0; r < m.rows; ++r) {
        double total = 0;
        for (std::int64_t c = 0; c < m.columns; ++c) {
          const float w = m.at(l, h, r, c);
          REQUIRE(w >= 0.0f);
          if (causal && c > r) REQUIRE(w == 0.0f);  // a step never sees a later one
          total += w;
        }
        REQUIRE(total == Approx(1.0).margin(1e-5));
      }
}

std::vector<std::int32_t> with_end(const attend::Hypothesis& h, std::int32_t eos) {
  std::vector<std::int32_t> out = h.ids;
  if (h.finished) out.push_back(eos);
  return out;
}

}  // namespace

TEST_CASE("attention heads: every layer and head along the best hypothesis, its alignment head equal to return_attention",
          "[api][attention-heads]") {
  for (const char* compute_type : {"float32", "int8"}) {  // int8: bf16 attention caches, read by both
    INFO(compute_type);
    attend::LoadOptions load;
    load.compute_type = compute_type;
    const attend::Model model = attend::Model::load(kModel, load);
    const attend::Translator translator(model, {.threads = 2, .max_batch_size = 4});
    const auto special = model.special_ids();
    const auto lines = corpus(5);
    std::vector<std::vector<std::int32_t>> sources;
    for (const auto& l : lines) sources.push_back(model.encode_text(l));
    attend::TranslationOptions plain;
    plain.beam_size = 2, plain.max_length = 12;
    attend::TranslationOptions asked = plain;
    asked.return_attention = true, asked.return_attention_heads = true;
    const auto without = translator.translate_ids(sources, plain);
    const auto with = translator.translate_ids(sources, asked);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      INFO("sentence " << i);
      const attend::Hypothesis& best = with[i].hypotheses.at(0);
      // The translation itself is what it is without attention.
      CHECK(best.ids == without[i].hypotheses.at(0).ids);
      CHECK(best.score == without[i].hypotheses.at(0).score);
      CHECK(without[i].attention_heads.encoder_self.layers == 0);  // not asked, not computed

      const attend::AttentionHeads& a = with[i].attention_heads;
      const auto S = static_cast<std::int64_t>(sources[i].size());
      const std::vector<std::int32_t> target = with_end(best, special.eos);
      const auto T = static_cast<std::int64_t>(target.size());
      CHECK(a.source_ids == sources[i]);
      CHECK(a.target_ids == target);
      REQUIRE(a.decoder_input_ids.size() == target.size());
      CHECK(a.decoder_input_ids[0] == special.decoder_start);
      CHECK(std::equal(target.begin(), target.end() - 1, a.decoder_input_ids.begin() + 1));
      CHECK(a.source_tokens == model.decode_tokens(sources[i], attend::Model::Side::source));
      CHECK(a.target_tokens == model.decode_tokens(target));
      CHECK(a.source_tokens.back() == "</s>");

      const std::int64_t L = a.encoder_self.layers, H = a.encoder_self.heads;
      CHECK(L >= 1);
      CHECK(H >= 2);
      CHECK((a.encoder_self.rows == S && a.encoder_self.columns == S));
      CHECK((a.decoder_self.heads == H && a.decoder_self.rows == T && a.decoder_self.columns == T));
      CHECK((a.cross.layers == a.decoder_self.layers && a.cross.heads == H && a.cross.rows == T && a.cross.columns == S));
      check_distributions(a.encoder_self, false);
      check_distributions(a.decoder_self, true);
      check_distributions(a.cross, false);
      CHECK(a.decoder_self.at(0, 0, 0, 0) == 1.0f);  // the first step sees only itself

      // The alignment layer (the last) and head (the first) is return_attention's, row for row.
      REQUIRE(!best.attention.empty());
      REQUIRE(best.attention.size() <= static_cast<std::size_t>(T));
      for (std::size_t t = 0; t < best.attention.size(); ++t)
        for (std::int64_t s = 0; s < S; ++s)
          REQUIRE(a.cross.at(a.cross.layers - 1, 0, static_cast<std::int64_t>(t), s) ==
                  Approx(best.attention[t][static_cast<std::size_t>(s)]).margin(1e-5));
      // Heads differ (else "every head" would be one head repeated).
      bool differ = false;
      for (std::int64_t s = 0; s < S; ++s) differ = differ || a.cross.at(0, 0, 0, s) != a.cross.at(0, 1, 0, s);
      CHECK(differ);

      // Translator::attention_heads over the same output gives the same maps.
      const attend::AttentionHeads again = translator.attention_heads(sources[i], target);
      CHECK(again.cross.weights == a.cross.weights);
      CHECK(again.encoder_self.weights == a.encoder_self.weights);
      CHECK(again.decoder_self.weights == a.decoder_self.weights);
    }
  }
}

TEST_CASE("attention heads: every CTranslate2 family's layout — relative positions (Shaw, T5's bias), Marian's zero "
          "start, pre/post-norm — traced as it decodes", "[api][attention-heads]") {
  for (const char* family : {"t5", "onmt_relative", "marian", "bart", "nllb"}) {
    INFO(family);
    const attend::Model model = attend::Model::load(std::string(ATTEND_SOURCE_DIR) + "/tests/data/ct2-variants/" + family);
    const attend::Translator translator(model, {.threads = 2});
    attend::TranslationOptions o;
    o.return_attention = o.return_attention_heads = true, o.max_length = 10, o.beam_size = 2;
    const auto r = translator.translate_tokens({{"w18", "w74", "w17", "w17", "w79", "w80"}, {"w84", "w52", "w78"}}, o);
    for (const auto& result : r) {
      const attend::Hypothesis& best = result.hypotheses.at(0);
      const attend::AttentionHeads& a = result.attention_heads;
      CHECK(a.target_ids == with_end(best, best.end_id));
      check_distributions(a.encoder_self, false);
      check_distributions(a.decoder_self, true);
      check_distributions(a.cross, false);
      // return_attention leaves the model's BOS/EOS columns out for tokens: skip them here too.
      const auto leading = static_cast<std::int64_t>(a.source_ids.size() - best.attention.at(0).size()) -
                           (a.source_ids.back() == model.special_ids().eos ? 1 : 0);
      for (std::size_t t = 0; t < best.attention.size(); ++t)
        for (std::size_t s = 0; s < best.attention[t].size(); ++s)
          REQUIRE(a.cross.at(a.cross.layers - 1, 0, static_cast<std::int64_t>(t), leading + static_cast<std::int64_t>(s)) ==
                  Approx(best.attention[t][s]).margin(1e-5));
    }
  }
}

TEST_CASE("attention heads: text and tokens, an empty source, any given target, and the errors", "[api][attention-heads]") {
  const attend::Model model = attend::Model::load(kModel);
  const attend::Translator translator(model, {.threads = 2, .max_target_length = 16});
  attend::TranslationOptions o;
  o.return_attention_heads = true, o.max_length = 10;
  const auto text = translator.translate_text({corpus(1)[0], "", "   "}, o);
  CHECK(text[0].attention_heads.source_ids == model.encode_text(corpus(1)[0]));
  check_distributions(text[0].attention_heads.cross, false);
  for (int blank : {1, 2}) {  // empty and blank lines are not run: maps of 0 rows, no tokens
    const auto& a = text[blank].attention_heads;
    CHECK(a.encoder_self.layers >= 1);
    CHECK((a.encoder_self.rows == 0 && a.cross.rows == 0 && a.cross.columns == 0 && a.decoder_self.rows == 0));
    CHECK(a.source_tokens.empty());
  }
  // Sampling's draw and the first alternative: traced the same way, along hypotheses[0].
  attend::TranslationOptions sampled = o, alternatives = o;
  sampled.sampling = true, sampled.sampling_topk = 5, sampled.seed = 3;
  alternatives.return_alternatives = true, alternatives.num_hypotheses = 2;
  for (const auto& options : {sampled, alternatives}) {
    const auto r = translator.translate_tokens({{"▁The", "▁quick", "▁fox", "."}}, options);
    CHECK(r[0].attention_heads.target_ids == with_end(r[0].hypotheses[0], model.special_ids().eos));
    check_distributions(r[0].attention_heads.decoder_self, true);
  }

  // Any target: a reference the model did not produce.
  const std::vector<std::int32_t> source = model.encode_text(corpus(2)[1]);
  const std::vector<std::int32_t> reference = {5, 6, 7, 8, model.special_ids().eos};
  const attend::AttentionHeads r = translator.attention_heads(source, reference);
  CHECK(r.cross.rows == 5);
  CHECK(r.target_ids == reference);
  check_distributions(r.decoder_self, true);
  // The teacher-forced rows are the free-running ones up to where the outputs differ:
  // the first step reads only the start token.
  const auto free = translator.attention_heads(source, {9});
  for (std::int64_t s = 0; s < r.cross.columns; ++s) CHECK(free.cross.at(1, 2, 0, s) == r.cross.at(1, 2, 0, s));

  CHECK_THROWS_WITH(translator.attention_heads(source, std::vector<std::int32_t>(17, 5)),
                    Contains("17 tokens") && Contains("max_target_length 16"));
  CHECK_THROWS_WITH(translator.attention_heads(source, {5, 100000}), Contains("target token 1 has id 100000"));
  CHECK_THROWS_WITH(translator.attention_heads({4, -1}, {5}), Contains("source token 1 has id -1"));
  CHECK(translator.attention_heads({}, {}).cross.rows == 0);
}

TEST_CASE("attention heads: save_attention_npz writes an archive and names a path it cannot write",
          "[api][attention-heads]") {
  const attend::Model model = attend::Model::load(kModel);
  const attend::Translator translator(model, {.threads = 1});
  const attend::AttentionHeads a = translator.attention_heads(model.encode_text("The fox."), {5, 6, 2});
  const std::string dir = std::filesystem::temp_directory_path() / ("attend-npz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/line.npz";
  attend::save_attention_npz(a, path, 3);
  std::string bytes;
  {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    REQUIRE(f != nullptr);
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) bytes.append(buffer, n);
    std::fclose(f);
  }
  CHECK(bytes.substr(0, 4) == std::string("PK\x03\x04", 4));  // a zip: NumPy's reading is checked by the CLI test
  CHECK(bytes.find("cross.npy") != std::string::npos);
  CHECK(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (") != std::string::npos);
  CHECK(bytes.size() > a.cross.weights.size() * 4 + a.encoder_self.weights.size() * 4);
  CHECK_THROWS_WITH(attend::save_attention_npz(a, dir + "/missing/line.npz"),
                    Contains("cannot write the attention file " + dir + "/missing/line.npz") && Contains("No such file"));
  if (std::FILE* full = std::fopen("/dev/full", "wb")) {
    std::fclose(full);
    CHECK_THROWS_WITH(attend::save_attention_npz(a, "/dev/full"), Contains("/dev/full") && Contains("No space left"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("attention heads: the C API asks, reads and saves them", "[api][attention-heads]") {
  attend_model* model = nullptr;
  REQUIRE(attend_model_load(kModel.c_str(), nullptr, &model) == ATTEND_OK);
  attend_translator* translator = nullptr;
  REQUIRE(attend_translator_create(model, nullptr, &translator) == ATTEND_OK);
  attend_options options;
  attend_options_init(&options);
  CHECK(options.return_attention_heads == 0);
  options.return_attention_heads = 1, options.max_length = 8;
  const auto lines = corpus(2);
  const char* text[2] = {lines[0].c_str(), lines[1].c_str()};
  attend_result* result = nullptr;
  REQUIRE(attend_translate_text(translator, text, 2, &options, &result) == ATTEND_OK);
  std::size_t layers = 0, heads = 0, rows = 0, columns = 0;
  const float* cross = attend_result_attention_heads(result, 1, "cross", &layers, &heads, &rows, &columns);
  REQUIRE(cross != nullptr);
  std::size_t sources = 0, targets = 0;
  const char* const* source = attend_result_attention_tokens(result, 1, "source", &sources);
  REQUIRE(source != nullptr);
  attend_result_attention_tokens(result, 1, "target", &targets);
  CHECK((layers >= 1 && heads >= 2 && rows == targets && columns == sources));
  CHECK(std::string(source[sources - 1]) == "</s>");
  double total = 0;
  for (std::size_t c = 0; c < columns; ++c) total += cross[c];
  CHECK(total == Approx(1.0).margin(1e-5));
  CHECK(attend_result_attention_heads(result, 1, "decoder", &layers, &heads, &rows, &columns) == nullptr);
  CHECK((layers == 0 && rows == 0));
  CHECK(attend_result_attention_heads(result, 5, "cross", nullptr, nullptr, nullptr, nullptr) == nullptr);
  CHECK(attend_result_save_attention(result, 0, "/nonexistent-dir/a.npz") == ATTEND_ERROR);
  CHECK_THAT(std::string(attend_last_error()), Contains("/nonexistent-dir/a.npz"));

  // A given target, through the separate call.
  const std::int32_t src[3] = {10, 11, 2}, tgt[2] = {7, 2};
  attend_result* given = nullptr;
  REQUIRE(attend_attention_heads_ids(translator, src, 3, tgt, 2, &given) == ATTEND_OK);
  CHECK(attend_result_attention_heads(given, 0, "decoder_self", &layers, &heads, &rows, &columns) != nullptr);
  CHECK((rows == 2 && columns == 2));
  std::size_t length = 0;
  attend_result_ids(given, 0, 0, &length);
  CHECK(length == 2);
  const std::int32_t bad[1] = {100000};
  attend_result* none = nullptr;
  CHECK(attend_attention_heads_ids(translator, src, 3, bad, 1, &none) == ATTEND_ERROR);
  CHECK(none == nullptr);
  CHECK_THAT(std::string(attend_last_error()), Contains("100000"));
  attend_result_free(given);
  attend_result_free(result);
  attend_translator_free(translator);
  attend_model_free(model);
}

TEST_CASE("attention heads: an encoder-only model's self-attention (attend::Encoder, its C API)", "[api][attention-heads]") {
  const std::string encoders = std::string(ATTEND_SOURCE_DIR) + "/tests/data/encoders/";
  attend::EncoderOptions o;
  o.threads = 2;
  const attend::Encoder encoder(encoders + "ct2-bert", o);
  const std::vector<std::int32_t> ids = {2, 30, 31, 54, 3}, types = {0, 0, 0, 1, 1};
  const attend::AttentionHeads a = encoder.attention_heads(ids, types);
  CHECK(a.source_ids == ids);
  CHECK(a.source_tokens.front() == "[CLS]");  // the CTranslate2 vocabulary names the ids
  CHECK((a.encoder_self.layers >= 1 && a.encoder_self.heads >= 2 && a.encoder_self.rows == 5 && a.encoder_self.columns == 5));
  check_distributions(a.encoder_self, false);
  CHECK((a.decoder_self.layers == 0 && a.cross.layers == 0));  // no decoder: nothing to ask for
  // Token types change the embeddings, hence the weights: the runner ran what it was given.
  CHECK(encoder.attention_heads(ids).encoder_self.weights != a.encoder_self.weights);
  CHECK_THROWS_WITH(encoder.attention_heads({}), Contains("no tokens"));
  CHECK_THROWS_WITH(encoder.attention_heads({2, 100000}), Contains("id 100000 (token 2 of 2) is outside the vocabulary"));

  attend_encoder* c = nullptr;
  REQUIRE(attend_encoder_load((encoders + "st-mean").c_str(), nullptr, &c) == ATTEND_OK);
  std::size_t layers = 0, heads = 0;
  const std::int32_t c_ids[4] = {2, 14, 15, 3};
  REQUIRE(attend_encoder_attention_heads(c, c_ids, 4, nullptr, &layers, &heads) == ATTEND_OK);
  std::vector<float> weights(layers * heads * 16, -1.0f);
  REQUIRE(attend_encoder_attention_heads(c, c_ids, 4, weights.data(), &layers, &heads) == ATTEND_OK);
  double total = 0;
  for (int j = 0; j < 4; ++j) total += weights[static_cast<std::size_t>(j)];
  CHECK(total == Approx(1.0).margin(1e-5));
  CHECK(weights.back() >= 0.0f);  // every weight written
  CHECK(attend_encoder_save_attention(c, c_ids, 4, "/nonexistent-dir/x.npz") == ATTEND_ERROR);
  CHECK_THAT(std::string(attend_last_error()), Contains("/nonexistent-dir/x.npz"));
  attend_encoder_free(c);
}

// Text in (a cross-encoder's pair): tokenized as tokenize_pair tokenizes it, run as ids
// with those types are run, labelled with the tokenizer's tokens and each token's
// sentence. (tests/python/test_attention_heads.py checks the tokens and sequence ids
// against Hugging Face's tokenizers.)
TEST_CASE("attention heads: a text pair's tokens and sentences (Encoder::text_attention_heads, its C API)",
          "[api][attention-heads]") {
  const std::string model = std::string(ATTEND_SOURCE_DIR) + "/tests/data/encoders/bert-cross-encoder";
  const attend::Encoder encoder(model);
  const attend::TokenizedText t = encoder.tokenize_pair("what is a model?", "a model");
  REQUIRE(t.sequence_ids.size() == t.ids.size());
  CHECK(t.sequence_ids.front() == -1);
  CHECK(t.sequence_ids.back() == -1);
  const attend::AttentionHeads h = encoder.text_attention_heads("what is a model?", "a model");
  CHECK(h.source_ids == t.ids);
  CHECK(h.source_type_ids == t.type_ids);
  CHECK(h.source_tokens == t.tokens);
  CHECK(h.source_sequence_ids == t.sequence_ids);
  CHECK(h.source_texts == std::vector<std::string>{"what is a model?", "a model"});
  CHECK(h.model == model);
  CHECK(h.encoder_self.weights == encoder.attention_heads(t.ids, t.type_ids).encoder_self.weights);
  // Sentence B's tokens are type 1 and sequence 1 alike, but for its final [SEP].
  for (std::size_t i = 0; i < t.ids.size(); ++i)
    if (t.sequence_ids[i] >= 0) CHECK(t.sequence_ids[i] == t.type_ids[i]);
  const attend::AttentionHeads one = encoder.text_attention_heads("a model");
  CHECK(one.source_texts == std::vector<std::string>{"a model"});
  CHECK(one.source_sequence_ids == encoder.tokenize("a model").sequence_ids);

  // A sequence ids list that does not fit the tokens is refused, not written.
  attend::AttentionHeads wrong = h;
  wrong.source_sequence_ids.pop_back();
  const std::string dir = std::filesystem::temp_directory_path() / ("attend-pair-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CHECK_THROWS_WITH(attend::save_attention_npz(wrong, dir + "/wrong.npz"), Contains("source_sequence_ids holds"));
  CHECK(!std::filesystem::exists(dir + "/wrong.npz"));

  attend_encoder* c = nullptr;
  REQUIRE(attend_encoder_load(model.c_str(), nullptr, &c) == ATTEND_OK);
  const std::string file = dir + "/pair.npz";
  REQUIRE(attend_encoder_save_text_attention(c, "what is a model?", "a model", file.c_str()) == ATTEND_OK);
  CHECK(std::filesystem::file_size(file) > 1000);
  CHECK(attend_encoder_save_text_attention(c, nullptr, nullptr, file.c_str()) == ATTEND_ERROR_INVALID_ARGUMENT);
  CHECK(attend_encoder_save_text_attention(c, "a model", nullptr, "/nonexistent-dir/x.npz") == ATTEND_ERROR);
  CHECK_THAT(std::string(attend_last_error()), Contains("/nonexistent-dir/x.npz"));
  attend_encoder_free(c);
  std::filesystem::remove_all(dir);
}
