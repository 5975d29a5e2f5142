// attend::Encoder and the C API's attend_encoder_* through the shared library, as an
// embedding program links them, on the committed fixtures of tests/data/encoders.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "attend/attend.h"
#include "attend/attend.hpp"

namespace {

using json = nlohmann::json;
using Catch::Matchers::Contains;
const std::string kEncoders = std::string(ATTEND_SOURCE_DIR) + "/tests/data/encoders";

json cases_of(const std::string& name) {
  std::ifstream in(kEncoders + "/" + name + "/cases.json");
  return json::parse(in)["cases"];
}

std::vector<std::vector<std::int32_t>> ids_of(const json& cases, const char* field = "ids") {
  std::vector<std::vector<std::int32_t>> out;
  for (const json& c : cases) out.push_back(c.contains(field) ? c[field].get<std::vector<std::int32_t>>() : std::vector<std::int32_t>{});
  return out;
}

// Within 1e-4 of the libraries' own outputs (tests/encoder/test_encoder_fixtures.cpp: why).
void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < want.size(); ++k) CHECK(std::abs(got[k] - want[k]) < 1e-4);
}

TEST_CASE("C++ Encoder: embeddings, forward_ids as ctranslate2.Encoder, classification", "[encoder]") {
  const json st = cases_of("st-mean");
  attend::EncoderOptions o;
  o.threads = 2;
  const attend::Encoder encoder(kEncoders + "/st-mean", o);
  const attend::EncoderInfo info = encoder.encoder_info();
  CHECK(info.embedding_dim == 32);
  CHECK(info.normalize);
  CHECK(info.max_length == 12);  // sentence_bert_config.json's max_seq_length
  const auto embeddings = encoder.embed_ids(ids_of(st));
  for (size_t i = 0; i < st.size(); ++i) check_close(embeddings[i], st[i]["embedding"].get<std::vector<float>>());

  const json ct2 = cases_of("ct2-bert");
  const attend::Encoder converted(kEncoders + "/ct2-bert", o);
  const auto out = converted.forward_ids(ids_of(ct2), ids_of(ct2, "types"));
  for (size_t i = 0; i < ct2.size(); ++i) {
    std::vector<float> hidden;
    for (const json& row : ct2[i]["last_hidden_state"])
      for (const json& v : row) hidden.push_back(v.get<float>());
    check_close(out[i].last_hidden_state, hidden);
    check_close(out[i].pooler_output, ct2[i]["pooler_output"].get<std::vector<float>>());
    CHECK(out[i].length == static_cast<std::int64_t>(ct2[i]["ids"].size()));
  }
  CHECK(converted.token_to_id("[CLS]") == 2);

  const json pairs = cases_of("bert-cross-encoder");
  const attend::Encoder cross(kEncoders + "/bert-cross-encoder", o);
  const auto scores = cross.classify_ids(ids_of(pairs), ids_of(pairs, "types"));
  for (size_t i = 0; i < pairs.size(); ++i) {
    const float logit = pairs[i]["logits"][0].get<float>();
    CHECK(std::abs(scores[i].logits[0] - logit) < 1e-4);
    CHECK(std::abs(scores[i].score - 1 / (1 + std::exp(-logit))) < 1e-4);  // one logit: a cross-encoder's sigmoid
  }
  CHECK_THROWS_WITH(encoder.classify_ids({{2, 3}}), Contains("no classification head"));
  CHECK_THROWS_WITH(encoder.embed_ids({{2, 99999, 3}}), Contains("outside the vocabulary"));
  attend::EmbedOptions bad;
  bad.normalize = 2;
  CHECK_THROWS_WITH(encoder.embed_ids({{2, 3}}, bad), Contains("normalize"));
}

TEST_CASE("C API: attend_encoder_* embed, forward and classify into the caller's memory", "[encoder]") {
  attend_encoder* encoder = nullptr;
  attend_encoder_options options;
  attend_encoder_options_init(&options);
  options.threads = 1;
  REQUIRE(attend_encoder_load((kEncoders + "/st-all-poolings").c_str(), &options, &encoder) == ATTEND_OK);
  REQUIRE(attend_encoder_embedding_dim(encoder) == 16);
  const json st = cases_of("st-all-poolings");
  const auto ids = ids_of(st);
  std::vector<const std::int32_t*> pointers;
  std::vector<size_t> lengths;
  for (const auto& s : ids) pointers.push_back(s.data()), lengths.push_back(s.size());
  std::vector<float> out(ids.size() * 16);
  REQUIRE(attend_encoder_embed_ids(encoder, pointers.data(), lengths.data(), ids.size(), -1, out.data()) == ATTEND_OK);
  for (size_t i = 0; i < ids.size(); ++i)
    check_close(std::vector<float>(out.begin() + i * 16, out.begin() + (i + 1) * 16), st[i]["embedding"].get<std::vector<float>>());
  std::vector<float> hidden(lengths[0] * attend_encoder_hidden_size(encoder));
  CHECK(attend_encoder_forward_ids(encoder, pointers.data(), nullptr, lengths.data(), 1, hidden.data(), nullptr) == ATTEND_OK);
  CHECK(attend_encoder_num_labels(encoder) == 0);
  CHECK(attend_encoder_embed_ids(encoder, nullptr, lengths.data(), 1, -1, out.data()) == ATTEND_ERROR_INVALID_ARGUMENT);
  const std::int32_t bad[] = {2, -1, 3};
  const std::int32_t* bad_pointer = bad;
  const size_t bad_length = 3;
  CHECK(attend_encoder_embed_ids(encoder, &bad_pointer, &bad_length, 1, -1, out.data()) == ATTEND_ERROR);
  CHECK_THAT(attend_last_error(), Contains("outside the vocabulary"));
  attend_encoder_free(encoder);

  REQUIRE(attend_encoder_load((kEncoders + "/bert-classifier").c_str(), nullptr, &encoder) == ATTEND_OK);
  CHECK(attend_encoder_num_labels(encoder) == 3);
  CHECK(std::string(attend_encoder_label(encoder, 2)) == "positive");
  CHECK(attend_encoder_label(encoder, 3) == nullptr);
  attend_encoder_free(encoder);
  CHECK(attend_encoder_load((kEncoders + "/nowhere").c_str(), nullptr, &encoder) == ATTEND_ERROR);
  CHECK_THAT(attend_last_error(), Contains("nowhere"));
  CHECK(encoder == nullptr);
}

// Text through the model's tokenizer.json (runtime/text/hf): the fixtures' texts and pairs
// give the ids Hugging Face's tokenizers gave (make_fixtures.py stored them), special
// tokens, truncation to max_seq_length and the empty and blank texts ([CLS] [SEP])
// included; text in gives what those ids give, in C++ and C.
TEST_CASE("C++ and C Encoder: text gives Hugging Face's ids and what they give", "[encoder]") {
  attend::EncoderOptions one;
  one.threads = 1;
  for (const char* name : {"bert", "bert-legacy", "bert-classifier", "st-all-poolings", "st-mean"}) {
    INFO(name);
    const json cases = cases_of(name);
    const attend::Encoder encoder(kEncoders + "/" + name, one);
    REQUIRE(encoder.encoder_info().has_tokenizer);
    std::vector<std::string> texts;
    std::vector<std::vector<std::int32_t>> ids;
    for (const json& c : cases) {
      if (c.contains("text")) {
        texts.push_back(c["text"]), ids.push_back(c["ids"]);
        const attend::TokenizedText t = encoder.tokenize(texts.back());
        CHECK(t.ids == ids.back());
        CHECK(t.type_ids == std::vector<std::int32_t>(t.ids.size(), 0));
        CHECK(t.tokens.size() == t.ids.size());
        CHECK(t.tokens.front() == "[CLS]");
      } else if (c.contains("pair")) {
        const attend::TokenizedText t = encoder.tokenize_pair(c["pair"][0], c["pair"][1]);
        CHECK(t.ids == c["ids"].get<std::vector<std::int32_t>>());
        CHECK(t.type_ids == c["types"].get<std::vector<std::int32_t>>());
      }
    }
    REQUIRE(texts.size() >= 4);
    CHECK(encoder.embed(texts) == encoder.embed_ids(ids));
    // Many texts at once, on 3 threads in shares of ≥ 16: each as tokenize gives it, in
    // order, the prompt before each.
    attend::EncoderOptions three;
    three.threads = 3;
    const attend::Encoder threaded(kEncoders + "/" + name, three);
    std::vector<std::string> many;
    for (int copy = 0; copy < 20; ++copy) many.insert(many.end(), texts.begin(), texts.end());
    const std::vector<attend::TokenizedText> at_once = threaded.tokenize(many), prompted = threaded.tokenize(many, "query: ");
    REQUIRE(at_once.size() == many.size());
    REQUIRE(prompted.size() == many.size());
    for (size_t i = 0; i < many.size(); ++i) {
      CHECK(at_once[i].ids == ids[i % texts.size()]);
      CHECK(at_once[i].tokens == encoder.tokenize(many[i]).tokens);
      CHECK(prompted[i].ids == encoder.tokenize("query: " + many[i]).ids);
    }
    if (!encoder.encoder_info().labels.empty()) {
      const auto by_text = encoder.classify(texts), by_ids = encoder.classify_ids(ids);
      for (size_t i = 0; i < texts.size(); ++i) CHECK(by_text[i].logits == by_ids[i].logits);
    }
  }
  // A directory without a tokenizer says so for many texts as for one.
  attend::EncoderOptions two;
  two.threads = 2;
  const attend::Encoder ids_only(kEncoders + "/ct2-bert", two);
  REQUIRE_FALSE(ids_only.encoder_info().has_tokenizer);
  CHECK_THROWS_WITH(ids_only.tokenize(std::vector<std::string>(100, "a text")), Contains("no tokenizer"));
  // A cross-encoder reads pairs, with token types.
  const json pairs = cases_of("bert-cross-encoder");
  const attend::Encoder cross(kEncoders + "/bert-cross-encoder", one);
  std::vector<std::pair<std::string, std::string>> texts;
  for (const json& c : pairs) texts.emplace_back(c["pair"][0], c["pair"][1]);
  const auto scores = cross.classify_pairs(texts), by_ids = cross.classify_ids(ids_of(pairs), ids_of(pairs, "types"));
  for (size_t i = 0; i < texts.size(); ++i) CHECK(scores[i].logits == by_ids[i].logits);
  // Invalid UTF-8 is replaced by U+FFFD, as Hugging Face's tokenizers replace it, and said.
  const attend::Encoder bert(kEncoders + "/bert", one);
  CHECK(bert.tokenize("hello \xff world").invalid_utf8);
  CHECK_FALSE(bert.tokenize("hello world").invalid_utf8);
  CHECK(bert.tokenize("hello \xff world").ids == bert.tokenize("hello \xef\xbf\xbd world").ids);
  // A text longer than the model's limit is cut to it, [SEP] kept, and says so.
  std::string long_text;
  for (int i = 0; i < 200; ++i) long_text += "hello ";
  const attend::TokenizedText cut = bert.tokenize(long_text);
  CHECK(cut.truncated);
  CHECK(static_cast<std::int64_t>(cut.ids.size()) == bert.encoder_info().max_length);
  CHECK(cut.ids.back() == bert.tokenize("").ids.back());

  // The C API: texts in, the same floats out.
  attend_encoder* c_encoder = nullptr;
  REQUIRE(attend_encoder_load((kEncoders + "/st-all-poolings").c_str(), nullptr, &c_encoder) == ATTEND_OK);
  const json st = cases_of("st-all-poolings");
  std::vector<std::string> st_texts;
  for (const json& c : st) st_texts.push_back(c["text"]);
  std::vector<const char*> c_texts;
  for (const auto& t : st_texts) c_texts.push_back(t.c_str());
  std::vector<float> out(st_texts.size() * 16);
  REQUIRE(attend_encoder_embed_text(c_encoder, c_texts.data(), c_texts.size(), -1, out.data()) == ATTEND_OK);
  const attend::Encoder st_encoder(kEncoders + "/st-all-poolings");
  const auto want = st_encoder.embed_ids(ids_of(st));
  for (size_t i = 0; i < st_texts.size(); ++i) CHECK(std::vector<float>(out.begin() + i * 16, out.begin() + (i + 1) * 16) == want[i]);
  attend_encoder_free(c_encoder);
}

}  // namespace

namespace {

json text_cases(const std::string& name) {
  json out = json::array();
  for (const json& c : cases_of(name))
    if (c.contains("text")) out.push_back(c);
  return out;
}

std::vector<std::string> texts_of(const json& cases) {
  std::vector<std::string> out;
  for (const json& c : cases) out.push_back(c["text"].get<std::string>());
  return out;
}

}  // namespace

// config_sentence_transformers.json's prompts, default_prompt_name and similarity_fn_name,
// applied as sentence-transformers applies them (its embeddings in the fixture).
TEST_CASE("C++ and C Encoder: sentence-transformers' prompts and similarity function", "[encoder]") {
  const json cases = text_cases("st-roberta-prompts");
  const std::vector<std::string> texts = texts_of(cases);
  const attend::Encoder encoder(kEncoders + "/st-roberta-prompts");
  const attend::EncoderInfo info = encoder.encoder_info();
  CHECK(info.default_prompt_name == "query");
  CHECK(info.similarity == "euclidean");
  REQUIRE(info.prompts.size() == 3);
  CHECK(info.prompts[1] == std::pair<std::string, std::string>("passage", "passage <pad> of: "));
  auto check_all = [&](const attend::EmbedOptions& o, const char* field) {
    INFO(field);
    const auto got = encoder.embed(texts, o);
    for (size_t i = 0; i < texts.size(); ++i) check_close(got[i], cases[i][field].get<std::vector<float>>());
  };
  check_all({}, "embedding");
  attend::EmbedOptions o;
  o.prompt_name = "passage";
  check_all(o, "embedding_passage");
  o.prompt_name = "query";
  check_all(o, "embedding_query");
  o.prompt_name = "document";  // every model knows it; this one has no text for it
  check_all(o, "embedding_document");
  o.prompt = "";
  o.prompt_name = "passage";  // a prompt wins over a name, as in sentence-transformers
  check_all(o, "embedding_no_prompt");
  o.prompt = "search <pad>: ";
  check_all(o, "embedding_search_pad");
  CHECK(encoder.prompt_text({}) == "query: ");
  o = {};
  o.prompt_name = "title";
  CHECK_THROWS_WITH(encoder.embed(texts, o), Contains("prompt name 'title' is not one of the model's prompts"));

  // Ids are taken as they are: the tokenizer's ids of the prompted text give the default embedding.
  const auto from_ids = encoder.embed_ids(ids_of(cases));
  for (size_t i = 0; i < texts.size(); ++i) check_close(from_ids[i], cases[i]["embedding"].get<std::vector<float>>());

  attend_encoder* e = nullptr;
  REQUIRE(attend_encoder_load((kEncoders + "/st-roberta-prompts").c_str(), nullptr, &e) == ATTEND_OK);
  CHECK(attend_encoder_num_prompts(e) == 3);
  CHECK(std::string(attend_encoder_prompt_name(e, 2)) == "query");
  CHECK(std::string(attend_encoder_prompt_text(e, 2)) == "query: ");
  CHECK(attend_encoder_prompt_name(e, 3) == nullptr);
  CHECK(std::string(attend_encoder_default_prompt_name(e)) == "query");
  CHECK(std::string(attend_encoder_similarity(e)) == "euclidean");
  std::vector<const char*> pointers;
  for (const std::string& t : texts) pointers.push_back(t.c_str());
  const size_t dim = attend_encoder_embedding_dim(e);
  std::vector<float> out(texts.size() * dim);
  REQUIRE(attend_encoder_embed_text_with_prompt(e, pointers.data(), pointers.size(), -1, "passage", nullptr, out.data()) == ATTEND_OK);
  for (size_t i = 0; i < texts.size(); ++i)
    check_close({out.begin() + i * dim, out.begin() + (i + 1) * dim}, cases[i]["embedding_passage"].get<std::vector<float>>());
  REQUIRE(attend_encoder_embed_text(e, pointers.data(), pointers.size(), -1, out.data()) == ATTEND_OK);  // the default prompt
  check_close({out.begin(), out.begin() + dim}, cases[0]["embedding"].get<std::vector<float>>());
  CHECK(attend_encoder_embed_text_with_prompt(e, pointers.data(), 1, -1, "nope", nullptr, out.data()) != ATTEND_OK);
  CHECK_THAT(attend_last_error(), Contains("'nope'"));
  attend_encoder_free(e);
}

// As ctranslate2.Encoder: forward_ids takes sequences up to the positions, whatever
// sentence-transformers' max_seq_length (24 here, 64 positions); an unknown token is the
// unknown token; input_problem says why a sequence cannot run.
TEST_CASE("C++ Encoder: forward_ids up to the positions, unknown tokens, input_problem", "[encoder]") {
  const attend::Encoder encoder(kEncoders + "/st-roberta-prompts");
  CHECK(encoder.encoder_info().max_length == 24);
  std::vector<std::int32_t> long_ids(60, 10);
  long_ids.front() = 0, long_ids.back() = 2;
  const auto out = encoder.forward_ids({long_ids});
  CHECK(out[0].length == 60);
  CHECK_THROWS_WITH(encoder.forward_ids({std::vector<std::int32_t>(65, 10)}), Contains("more than max_length 64"));
  attend::EncoderOptions o;
  o.max_length = 30;
  const attend::Encoder limited(kEncoders + "/st-roberta-prompts", o);
  CHECK_THROWS_WITH(limited.forward_ids({long_ids}), Contains("sequence at index 0: 60 tokens, more than max_length 30"));
  CHECK(encoder.token_to_id("<unk>") == 3);
  CHECK(encoder.token_to_id("surely-not-a-token") == 3);
  CHECK(encoder.input_problem({0, 5, 2}).empty());
  CHECK(encoder.input_problem({}) == "no tokens (an encoder needs at least one)");
  CHECK_THAT(encoder.input_problem({0, 100000, 2}), Contains("id 100000 (token 2 of 3) is outside the vocabulary"));
  CHECK_THAT(encoder.input_problem({0, 5, 2}, {0, 1, 0}), Contains("token type 1 (token 2 of 3) is not one of the model's 1"));
  const attend::Encoder distilbert(kEncoders + "/distilbert-classifier");
  CHECK(distilbert.input_problem({2, 5, 3}, {0, 1, 1}).empty());  // no token type embeddings: types unused
}

TEST_CASE("C++ Encoder: DistilBERT classifies pairs as transformers does", "[encoder]") {
  const attend::Encoder encoder(kEncoders + "/distilbert-classifier");
  for (const json& c : cases_of("distilbert-classifier")) {
    if (!c.contains("pair")) continue;
    const auto got = encoder.classify_pairs({{c["pair"][0].get<std::string>(), c["pair"][1].get<std::string>()}});
    check_close(got[0].logits, c["logits"].get<std::vector<float>>());
    CHECK(encoder.tokenize_pair(c["pair"][0], c["pair"][1]).ids == c["ids"].get<std::vector<std::int32_t>>());
  }
}
