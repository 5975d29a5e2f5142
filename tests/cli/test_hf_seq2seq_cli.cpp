// `attend translate -m HF_DIR` and `attend inspect` on a Hugging Face encoder-decoder
// directory as saved (tests/data/hf-seq2seq/marian, made by
// tests/hf_seq2seq/make_hf_seq2seq_fixtures.py with transformers): the outputs are
// transformers' generate() texts under the directory's generation_config.json (beam 4,
// max_length 20) unless a flag says otherwise; --target-lang, --source-lang and
// --decoding-rules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace attend::test {
namespace {

using Catch::Matchers::Contains;
using json = nlohmann::json;
using Cases = std::vector<std::pair<std::string, std::string>>;

const std::string kMarian = std::string(ATTEND_TEST_DATA) + "/hf-seq2seq/marian";

// generate()'s text per source for `beams`, in the order of cases.jsonl; sources that
// start with a language code (">>fra<< …") only `with_code`; empty ones never.
Cases expected(int beams, bool with_code = false) {
  Cases out;
  std::ifstream in(kMarian + "/cases.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const json c = json::parse(line);
    const std::string source = c["source"];
    if (c["settings"]["num_beams"] != beams || source.empty() || (source.rfind(">>", 0) == 0) != with_code) continue;
    out.emplace_back(source, c["text"].get<std::string>());
  }
  return out;
}

std::string sources_of(const Cases& cases) {
  std::string text;
  for (const auto& c : cases) text += c.first + "\n";
  return text;
}

std::vector<std::string> texts_of(const Cases& cases) {
  std::vector<std::string> out;
  for (const auto& c : cases) out.push_back(c.second);
  return out;
}

}  // namespace

TEST_CASE("translate -m HF_DIR: generation_config.json's defaults (beam 4, max_length 20) give generate()'s texts",
          "[cli][hf-seq2seq]") {
  const Cases beam4 = expected(4);
  REQUIRE(beam4.size() >= 6);
  const CommandResult r = run_attend({"translate", "-m", kMarian, "--threads", "1"}, sources_of(beam4));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(split_lines(r.out) == texts_of(beam4));
}

TEST_CASE("translate -m HF_DIR: a flag given wins over generation_config.json (--beam 1: generate()'s greedy)",
          "[cli][hf-seq2seq]") {
  const Cases greedy = expected(1);
  const CommandResult r = run_attend({"translate", "-m", kMarian, "--threads", "1", "--beam", "1"}, sources_of(greedy));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(split_lines(r.out) == texts_of(greedy));
  // The length cap given wins too: 3 generated tokens, the last the forced </s> (not
  // written), so 2 ids.
  const CommandResult capped = run_attend(
      {"translate", "-m", kMarian, "--threads", "1", "--beam", "1", "--max-length", "3", "--output-format", "ids"},
      "Hello world\n");
  INFO(capped.err);
  REQUIRE(capped.status == 0);
  REQUIRE(split_lines(capped.out).size() == 1);
  CHECK(std::count(capped.out.begin(), capped.out.end(), ' ') == 1);
}

TEST_CASE("translate -m HF_DIR --target-lang: Marian's >>xx<< code as its tokenizer places it; bad codes refused",
          "[cli][hf-seq2seq]") {
  // cases.jsonl has ">>fra<< Hello world" and ">>deu<< The quick brown fox." (beam 4).
  const Cases coded = expected(4, true);
  REQUIRE(coded.size() == 2);
  for (const auto& [source, text] : coded) {
    const std::string code = source.substr(2, 3), rest = source.substr(8);
    INFO(source);
    const CommandResult r = run_attend({"translate", "-m", kMarian, "--threads", "1", "--target-lang", code}, rest + "\n");
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(split_lines(r.out) == std::vector<std::string>{text});
    const CommandResult same =
        run_attend({"translate", "-m", kMarian, "--threads", "1", "--target-lang", ">>" + code + "<<"}, rest + "\n");
    CHECK(same.out == r.out);
  }
  const CommandResult wrong = run_attend({"translate", "-m", kMarian, "--target-lang", "xx"}, "Hello\n");
  CHECK(wrong.status == 1);
  CHECK_THAT(wrong.err, Contains("'xx' is not a target language") && Contains("fra") && Contains("deu"));
  const CommandResult source = run_attend({"translate", "-m", kMarian, "--source-lang", "en"}, "Hello\n");
  CHECK(source.status == 1);
  CHECK_THAT(source.err, Contains("takes no source language"));
  const CommandResult empty = run_attend({"translate", "-m", kMarian, "--target-lang", ""}, "Hello\n");
  CHECK(empty.status == 2);
  CHECK_THAT(empty.err, Contains("--target-lang") && Contains("empty"));
}

TEST_CASE("translate --target-lang on a model without language codes is an error, not ignored", "[cli][hf-seq2seq]") {
  const CommandResult r =
      run_attend({"translate", "--preset", "tiny", "--input-format", "ids", "--target-lang", "fr"}, "5 6 7\n");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Contains("target language (fr)") && Contains("has none"));
}

TEST_CASE("translate -m HF_DIR --decoding-rules: auto, transformers, ctranslate2; inspect says which apply",
          "[cli][hf-seq2seq]") {
  const CommandResult info = run_attend({"inspect", "-m", kMarian});
  INFO(info.err);
  REQUIRE(info.status == 0);
  CHECK_THAT(info.out, Contains("decoding:    transformers generate()") && Contains("generation_config.json"));
  CHECK_THAT(info.out, Contains("generate() default: num_beams = 4") && Contains("generate() default: max_length = 20") &&
                           Contains("generate() default: bad_words_ids"));
  CHECK_THAT(info.out, Contains("MarianTokenizer"));
  const CommandResult as_json = run_attend({"inspect", "-m", kMarian, "--json"});
  REQUIRE(as_json.status == 0);
  const json j = json::parse(as_json.out);
  CHECK(j["decoding_rules"].get<std::string>().find("transformers") != std::string::npos);
  CHECK(j["generation_defaults"].size() >= 3);

  const CommandResult ct2 = run_attend({"inspect", "-m", kMarian, "--decoding-rules", "ctranslate2"});
  REQUIRE(ct2.status == 0);
  CHECK_THAT(ct2.out, Contains("decoding:    CTranslate2"));
  // transformers' rules asked for explicitly are auto's.
  const Cases greedy = expected(1);
  const CommandResult t = run_attend(
      {"translate", "-m", kMarian, "--threads", "1", "--beam", "1", "--decoding-rules", "transformers"}, sources_of(greedy));
  REQUIRE(t.status == 0);
  CHECK(split_lines(t.out) == texts_of(greedy));
  const CommandResult c =
      run_attend({"translate", "-m", kMarian, "--threads", "1", "--decoding-rules", "ctranslate2"}, "Hello world\n");
  CHECK(c.status == 0);
  CHECK(split_lines(c.out).size() == 1);
  const CommandResult bad = run_attend({"translate", "-m", kMarian, "--decoding-rules", "fairseq"}, "Hello\n");
  CHECK(bad.status == 2);
}


TEST_CASE("translate -m NLLB/M2M100/mBART-50 --source-lang --target-lang: generate()'s texts, the language forced",
          "[cli][hf-seq2seq]") {
  for (const char* family : {"nllb", "m2m100", "mbart50"}) {
    const std::string dir = std::string(ATTEND_TEST_DATA) + "/hf-seq2seq/" + family;
    for (const int beams : {1, 4}) {
      std::string sources, source_lang, target_lang;
      std::vector<std::string> texts;
      std::ifstream in(dir + "/cases.jsonl");
      for (std::string line; std::getline(in, line);) {
        const json c = json::parse(line);
        if (c["settings"]["num_beams"] != beams || c["source"] == "") continue;
        if (source_lang.empty()) source_lang = c["source_lang"], target_lang = c["target_lang"];
        if (c["source_lang"] != source_lang) continue;
        sources += c["source"].get<std::string>() + "\n";
        texts.push_back(c["text"]);
      }
      INFO(family << " beam " << beams << " " << source_lang << "→" << target_lang);
      REQUIRE(texts.size() >= 6);
      const CommandResult r = run_attend({"translate", "-m", dir, "--threads", "1", "--beam", std::to_string(beams),
                                          "--source-lang", source_lang, "--target-lang", target_lang}, sources);
      INFO(r.err);
      REQUIRE(r.status == 0);
      CHECK(split_lines(r.out) == texts);
    }
    const CommandResult wrong = run_attend({"translate", "-m", dir, "--target-lang", "xx_Yyyy"}, "Hello\n");
    CHECK(wrong.status == 1);
    CHECK_THAT(wrong.err, Contains("xx_Yyyy") && Contains("is not a language of this model"));
  }
}

}  // namespace attend::test
