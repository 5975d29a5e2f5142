// Hugging Face encoder-decoder directories, loaded as saved, against transformers' own
// generate() (tests/data/hf-seq2seq, made by make_hf_seq2seq_fixtures.py with
// transformers' classes and tokenizers): the source ids the tokenizer gives, and for
// greedy and beam 4 under the directory's generation_config.json, the output ids and
// their text decoded as tokenizer.decode(ids, skip_special_tokens=True).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unistd.h>

#include "attend/attend.h"
#include "attend/attend.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kData = fs::path(ATTEND_SOURCE_DIR) / "tests" / "data" / "hf-seq2seq";

std::vector<json> cases_of(const fs::path& dir) {
  std::vector<json> out;
  std::ifstream in(dir / "cases.jsonl");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

// generate()'s output less the decoder start token it begins with.
std::vector<std::int32_t> generated(const json& c) {
  std::vector<std::int32_t> ids = c["ids"].get<std::vector<std::int32_t>>();
  ids.erase(ids.begin());
  return ids;
}

// Every case of `family` (a folder of kData, or `dir`), through the C++ API.
void check_family(const fs::path& dir) {
  const attend::Model model = attend::Model::load(dir.string());
  REQUIRE(model.transformers_rules());
  const attend::Translator translator(model, {.threads = 1});
  std::size_t checked = 0;
  for (const json& c : cases_of(dir)) {
    const std::string source = c["source"];
    const std::string source_lang = c.value("source_lang", ""), target_lang = c.value("target_lang", "");
    INFO(dir.filename().string() << ": '" << source << "' " << c["settings"].dump() << " " << source_lang << "→" << target_lang);
    const auto source_ids = model.encode_source(source, source_lang, target_lang);
    CHECK(source_ids == c["source_ids"].get<std::vector<std::int32_t>>());
    if (model.is_empty_source(source_ids)) continue;  // attend: an empty line in, an empty line out
    attend::TranslationOptions o = model.default_options();
    o.source_lang = source_lang, o.target_lang = target_lang;
    o.beam_size = c["settings"]["num_beams"].get<std::int64_t>();
    o.return_end_token = true;
    const auto result = translator.translate_text({source}, o);
    CHECK(result[0].hypotheses[0].ids == generated(c));
    // Beam search's score as generate()'s sequences_scores: a forced token (the target
    // language) counts log p 0, as ForcedBOSTokenLogitsProcessor leaves it.
    if (c.contains("score")) CHECK(result[0].hypotheses[0].score == Approx(c["score"].get<double>()).margin(2e-4));
    o.return_end_token = false;
    CHECK(translator.translate_text({source}, o)[0].hypotheses[0].text == c["text"].get<std::string>());
    ++checked;
  }
  CHECK(checked >= 10);
}

}  // namespace

TEST_CASE("Marian (opus-mt shape): ids, greedy and beam 4 as transformers' generate()", "[hf-seq2seq]") {
  check_family(kData / "marian");
}

TEST_CASE("Marian: generation_config.json gives generate()'s defaults in attend's terms", "[hf-seq2seq]") {
  const attend::Model model = attend::Model::load((kData / "marian").string());
  const attend::TranslationOptions o = model.default_options();
  CHECK(o.beam_size == 4);
  CHECK(o.max_length == 19);  // max_length 20 counts the decoder start token
  CHECK(o.min_length == 0);
  REQUIRE(o.suppress_sequences.size() == 1);  // bad_words_ids [[pad]]
  CHECK(o.suppress_sequences[0] == std::vector<std::string>{"<pad>"});
  const attend::ModelInfo info = model.info();
  CHECK(info.decoding_rules.find("transformers") != std::string::npos);
  CHECK(info.format.find("MarianMTModel") != std::string::npos);
}

TEST_CASE("Marian: the family's rules", "[hf-seq2seq]") {
  const attend::Model model = attend::Model::load((kData / "marian").string());
  const auto ids = model.special_ids();
  CHECK(ids.decoder_start == ids.pad);  // decoding starts from <pad>
  const json config = json::parse(model.info().config_json);
  CHECK(config["norm_placement"] == "post");
  CHECK(config["output_bias"] == true);  // final_logits_bias
  CHECK(config["position_encoding"] == "learned");  // computed, not stored:
  bool stored_positions = false, bias = false;
  for (const auto& t : model.info().tensors) {
    stored_positions = stored_positions || t.name.find("embed_positions") != std::string::npos;
    bias = bias || t.name == "final_logits_bias";
  }
  CHECK_FALSE(stored_positions);
  CHECK(bias);
}

TEST_CASE("Marian: >>xx<< target languages, and a clear error for a wrong one", "[hf-seq2seq]") {
  const attend::Model model = attend::Model::load((kData / "marian").string());
  const attend::Translator translator(model, {.threads = 1});
  attend::TranslationOptions o = model.default_options();
  o.beam_size = 1;
  o.target_lang = "fra";
  const auto with_code = translator.translate_text({"Hello world"}, o);
  o.target_lang = "";
  const auto written = translator.translate_text({">>fra<< Hello world"}, o);
  CHECK(with_code[0].hypotheses[0].ids == written[0].hypotheses[0].ids);
  o.target_lang = "xyz";
  CHECK_THROWS_WITH(translator.translate_text({"Hello"}, o), Catch::Contains("fra") && Catch::Contains("deu") && Catch::Contains("xyz"));
  o.target_lang = "";
  o.source_lang = "en";
  CHECK_THROWS_WITH(translator.translate_text({"Hello"}, o), Catch::Contains("no source language"));
}

TEST_CASE("Marian: CTranslate2's rules when asked for differ where generate() forces the end token", "[hf-seq2seq]") {
  attend::LoadOptions lo;
  lo.decoding_rules = "ctranslate2";
  const attend::Model model = attend::Model::load((kData / "marian").string(), lo);
  CHECK_FALSE(model.transformers_rules());
  const attend::Translator translator(model, {.threads = 1});
  attend::TranslationOptions o = model.default_options();
  o.beam_size = 1;
  o.return_end_token = true;
  for (const json& c : cases_of(kData / "marian")) {
    if (c["settings"]["num_beams"] != 1 || generated(c).size() < 19) continue;  // an output cut at the cap
    const auto r = translator.translate_text({c["source"].get<std::string>()}, o);
    CHECK_FALSE(r[0].hypotheses[0].finished);  // CTranslate2 cuts it, transformers ends it with </s>
    CHECK(r[0].hypotheses[0].ids.back() != 0);
    return;
  }
  FAIL("no case reached the length cap");
}

namespace {

// The Marian fixture with its weights replaced by `files` (of marian-weights/).
fs::path marian_with(const std::string& name, const std::vector<fs::path>& files) {
  const fs::path dir = fs::temp_directory_path() / ("attend-hf-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(kData / "marian"))
    if (entry.path().filename() != "model.safetensors") fs::copy(entry.path(), dir / entry.path().filename());
  for (const fs::path& f : files) fs::copy(f, dir / (f.filename().string().find("pytorch_model.bin") != std::string::npos ? "pytorch_model.bin" : f.filename().string()));
  return dir;
}

}  // namespace

TEST_CASE("Marian from pytorch_model.bin (zip and legacy) and sharded safetensors: the same outputs", "[hf-seq2seq]") {
  const fs::path weights = kData / "marian-weights";
  std::vector<std::pair<std::string, std::vector<fs::path>>> variants = {
      {"zip", {weights / "pytorch_model.bin"}}, {"legacy", {weights / "legacy_pytorch_model.bin"}}};
  std::vector<fs::path> shards;
  for (const auto& e : fs::directory_iterator(weights / "sharded")) shards.push_back(e.path());
  variants.push_back({"sharded", shards});
  for (const auto& [name, files] : variants) {
    INFO(name);
    const fs::path dir = marian_with(name, files);
    check_family(dir);
    const std::string format = attend::Model::load(dir.string()).info().format;
    CHECK(format.find(name == "sharded" ? "model.safetensors.index.json (3 shards)" : "pytorch_model.bin") != std::string::npos);
    fs::remove_all(dir);
  }
}

TEST_CASE("pytorch_model.bin: hostile or broken files are errors naming the file, never run or crash", "[hf-seq2seq]") {
  const fs::path weights = kData / "marian-weights";
  {
    const fs::path dir = marian_with("hostile", {weights / "hostile_pytorch_model.bin"});
    CHECK_THROWS_WITH(attend::Model::load(dir.string()),
                      Catch::Contains("pytorch_model.bin") && Catch::Contains("global 'posix.system'") && Catch::Contains("no other pickle code"));
    fs::remove_all(dir);
  }
  // Every truncation of the file (zip and legacy): an error, never a crash.
  for (const char* file : {"pytorch_model.bin", "legacy_pytorch_model.bin"}) {
    std::ifstream in(weights / file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    const fs::path dir = marian_with(std::string("cut-") + file, {weights / file});
    for (std::size_t cut : {std::size_t{0}, std::size_t{3}, std::size_t{100}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 30, bytes.size() - 1}) {
      INFO(file << " cut to " << cut);
      std::ofstream(dir / "pytorch_model.bin", std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(cut));
      CHECK_THROWS_WITH(attend::Model::load(dir.string()), Catch::Contains("pytorch_model.bin"));
    }
    fs::remove_all(dir);
  }
}

TEST_CASE("Hugging Face directories: missing files and unsupported fields are named", "[hf-seq2seq]") {
  const fs::path dir = marian_with("broken", {});
  CHECK_THROWS_WITH(attend::Model::load(dir.string()), Catch::Contains("no weights"));
  fs::copy(kData / "marian" / "model.safetensors", dir / "model.safetensors");
  fs::remove(dir / "vocab.json");
  CHECK_THROWS_WITH(attend::Model::load(dir.string()), Catch::Contains("vocab.json") && Catch::Contains("missing"));
  fs::copy(kData / "marian" / "vocab.json", dir / "vocab.json");
  json config = json::parse(std::ifstream(dir / "config.json"));
  config["decoder_attention_heads"] = 4;
  std::ofstream(dir / "config.json", std::ios::trunc) << config.dump();
  CHECK_THROWS_WITH(attend::Model::load(dir.string()), Catch::Contains("config.json") && Catch::Contains("decoder_attention_heads"));
  config["decoder_attention_heads"] = 2;
  config["architectures"] = {"MarianForCausalLM"};
  std::ofstream(dir / "config.json", std::ios::trunc) << config.dump();
  CHECK_THROWS_WITH(attend::Model::load(dir.string()), Catch::Contains("architectures") && Catch::Contains("MarianForCausalLM"));
  fs::remove_all(dir);
}

namespace {

// generate()'s case for `source` under `beams`.
json case_of(const std::string& source, int beams) {
  for (const json& c : cases_of(kData / "marian"))
    if (c["source"] == source && c["settings"]["num_beams"] == beams) return c;
  FAIL("no case for '" << source << "'");
  return {};
}

}  // namespace

TEST_CASE("Marian: target_lang places >>xx<< as the tokenizer does, in translate_text and encode_source; codes checked",
          "[hf-seq2seq]") {
  const attend::Model model = attend::Model::load((kData / "marian").string());
  const attend::Translator translator(model, {.threads = 1});
  const json c = case_of(">>fra<< Hello world", 4);
  CHECK(model.encode_source("Hello world", "", "fra") == c["source_ids"].get<std::vector<std::int32_t>>());
  CHECK(model.encode_source("Hello world", "", ">>fra<<") == c["source_ids"].get<std::vector<std::int32_t>>());
  CHECK(model.forced_target_prefix("fra").empty());  // Marian forces nothing
  attend::TranslationOptions o = model.default_options();
  o.target_lang = "fra";
  CHECK(translator.translate_text({"Hello world"}, o)[0].hypotheses[0].text == c["text"].get<std::string>());
  o.target_lang = "ita";
  CHECK_THROWS_WITH(translator.translate_text({"Hello world"}, o), Catch::Contains("'ita' is not a target language") &&
                                                                      Catch::Contains("deu, fra"));
  CHECK_THROWS_WITH(translator.translate_ids({{5, 6, 0}}, o), Catch::Contains("'ita' is not a target language"));
  o.target_lang.clear(), o.source_lang = "en";
  CHECK_THROWS_WITH(translator.translate_text({"Hello world"}, o), Catch::Contains("takes no source language"));
}

TEST_CASE("C API: Hugging Face directory, generate()'s defaults, target_lang, decoding_rules", "[hf-seq2seq]") {
  const std::string dir = (kData / "marian").string();
  attend_load_options lo;
  attend_load_options_init(&lo);
  CHECK(lo.decoding_rules == nullptr);
  attend_model* model = nullptr;
  REQUIRE(attend_model_load_with(dir.c_str(), &lo, &model) == ATTEND_OK);
  attend_options o;
  REQUIRE(attend_options_init_for_model(model, &o) == ATTEND_OK);
  CHECK(o.beam_size == 4);
  CHECK(o.max_length == 19);
  CHECK(o.min_length == 0);
  REQUIRE(o.suppress_sequences_count == 1);
  CHECK(std::string(o.suppress_sequences[0]) == "<pad>");
  CHECK(o.source_lang == nullptr);
  attend_translator_options topt;
  attend_translator_options_init(&topt);
  topt.threads = 1;
  attend_translator* translator = nullptr;
  REQUIRE(attend_translator_create(model, &topt, &translator) == ATTEND_OK);
  const json c = case_of(">>deu<< The quick brown fox.", 4);
  const char* line = "The quick brown fox.";
  o.target_lang = "deu";
  attend_result* result = nullptr;
  REQUIRE(attend_translate_text(translator, &line, 1, &o, &result) == ATTEND_OK);
  CHECK(std::string(attend_result_text(result, 0, 0)) == c["text"].get<std::string>());
  attend_result_free(result);
  o.target_lang = "xx";
  CHECK(attend_translate_text(translator, &line, 1, &o, &result) == ATTEND_ERROR);
  CHECK_THAT(std::string(attend_last_error()), Catch::Contains("'xx' is not a target language"));
  attend_translator_free(translator);
  attend_model_free(model);

  lo.decoding_rules = "ctranslate2";
  REQUIRE(attend_model_load_with(dir.c_str(), &lo, &model) == ATTEND_OK);
  REQUIRE(attend_options_init_for_model(model, &o) == ATTEND_OK);
  CHECK(o.beam_size == 4);  // generation_config.json still gives the defaults
  attend_model_free(model);
  lo.decoding_rules = "fairseq";
  CHECK(attend_model_load_with(dir.c_str(), &lo, &model) == ATTEND_ERROR_INVALID_ARGUMENT);  // a bad option value (the C API's rule)
  CHECK_THAT(std::string(attend_last_error()), Catch::Contains("auto, transformers or ctranslate2"));
  CHECK(attend_options_init_for_model(nullptr, &o) == ATTEND_ERROR_INVALID_ARGUMENT);
}

// The tokenizer against transformers' on hostile text: the source ids (language tokens
// placed as the tokenizer places them), and decode(ids, skip_special_tokens=True) of ids
// with language codes, <unk>, </s> and <pad> among them.
void check_tokenizer(const attend::Model& model, const fs::path& cases) {
  std::size_t checked = 0;
  std::ifstream in(cases);
  for (std::string line; std::getline(in, line);) {
    const json c = json::parse(line);
    if (c.contains("source")) {
      INFO(cases.string() << ": '" << c["source"].get<std::string>() << "' " << c["source_lang"].get<std::string>());
      CHECK(model.encode_source(c["source"], c["source_lang"], "") == c["source_ids"].get<std::vector<std::int32_t>>());
    } else {
      INFO(cases.string() << ": decode " << c["ids"].dump());
      CHECK(model.decode_text(c["ids"].get<std::vector<std::int32_t>>()) == c["text"].get<std::string>());
    }
    ++checked;
  }
  CHECK(checked >= 20);
}

TEST_CASE("M2M100: ids, greedy and beam 4 as transformers' generate(), the target language forced", "[hf-seq2seq]") {
  check_family(kData / "m2m100");
}

TEST_CASE("NLLB-200: ids, greedy and beam 4 as transformers' generate(), the target language forced", "[hf-seq2seq]") {
  check_family(kData / "nllb");
}

// M2M100/NLLB number positions as create_position_ids_from_input_ids: a <pad> inside a
// source takes position padding_idx (the zero row) and the tokens after it are numbered as
// if it were not there (the m2m100 and nllb cases with <pad> in the source); a generated
// <pad> takes padding_idx too, the steps after it counted as generate()'s cache counts them.
TEST_CASE("M2M100: a generated <pad> takes padding_idx's position as generate() gives it (untied lm_head)", "[hf-seq2seq]") {
  const fs::path dir = fs::temp_directory_path() / ("attend-m2m100-pad-output-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kData / "m2m100", dir);
  for (const char* f : {"config.json", "generation_config.json", "model.safetensors", "cases.jsonl"})
    fs::copy_file(kData / "m2m100-pad-output" / f, dir / f, fs::copy_options::overwrite_existing);
  std::size_t inside = 0;  // the fixture's point: outputs with <pad> before their last token
  for (const json& c : cases_of(dir)) {
    const auto ids = generated(c);
    if (std::find(ids.begin(), ids.end() - 1, 1) != ids.end() - 1) ++inside;
  }
  CHECK(inside >= 10);
  check_family(dir);
  fs::remove_all(dir);
}

TEST_CASE("M2M100 and NLLB tokenizers: hostile text and decoding as transformers' tokenizers", "[hf-seq2seq]") {
  check_tokenizer(attend::Model::load((kData / "m2m100").string()), kData / "m2m100" / "tokenizer_cases.jsonl");
  check_tokenizer(attend::Model::load((kData / "nllb").string()), kData / "nllb" / "tokenizer_cases.jsonl");
  // legacy_behaviour: X </s> [src_lang]
  const fs::path legacy = fs::temp_directory_path() / ("attend-nllb-legacy-" + std::to_string(::getpid()));
  fs::remove_all(legacy);
  fs::copy(kData / "nllb", legacy);
  fs::copy_file(kData / "nllb-legacy-tokenizer" / "tokenizer_config.json", legacy / "tokenizer_config.json",
                fs::copy_options::overwrite_existing);
  check_tokenizer(attend::Model::load(legacy.string()), kData / "nllb-legacy-tokenizer" / "tokenizer_cases.jsonl");
  fs::remove_all(legacy);
}

TEST_CASE("M2M100/NLLB: the family's rules", "[hf-seq2seq]") {
  for (const char* family : {"m2m100", "nllb"}) {
    INFO(family);
    const attend::Model model = attend::Model::load((kData / family).string());
    const auto ids = model.special_ids();
    CHECK(ids.decoder_start == ids.eos);  // decoding starts </s>, then the forced language
    const json config = json::parse(model.info().config_json);
    CHECK(config["norm_placement"] == "pre");
    CHECK(config["encoder_final_norm"] == true);
    CHECK(config["decoder_final_norm"] == true);
    CHECK(config["layernorm_embedding"] == false);
    CHECK(config["position_offset"] == 2);  // padding_idx + 1
    for (const auto& t : model.info().tensors) CHECK(t.name.find("embed_positions") == std::string::npos);
    // The target language is the forced first token, from the tokenizer's own ids.
    const std::string target = std::string(family) == "nllb" ? "fra_Latn" : "fr";
    const auto forced = model.forced_target_prefix(target);
    REQUIRE(forced.size() == 1);
    CHECK(model.decode_tokens(forced)[0] == (std::string(family) == "nllb" ? "fra_Latn" : "__fr__"));
    CHECK_THROWS_WITH(model.forced_target_prefix("xx_Yyyy"), Catch::Contains("is not a language of this model"));
    CHECK_THROWS_WITH(model.encode_source("Hello", "xx_Yyyy", ""), Catch::Contains("is not a language of this model"));
  }
}

TEST_CASE("M2M100/NLLB: a missing tokenizer file is named", "[hf-seq2seq]") {
  for (const auto& [family, file] : {std::pair{"m2m100", "vocab.json"}, {"m2m100", "sentencepiece.bpe.model"}, {"nllb", "tokenizer.json"}}) {
    const fs::path dir = fs::temp_directory_path() / ("attend-" + std::string(family) + "-missing-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::copy(kData / family, dir);
    fs::remove(dir / file);
    CHECK_THROWS_WITH(attend::Model::load(dir.string()), Catch::Contains(file) && Catch::Contains("missing"));
    fs::remove_all(dir);
  }
}

TEST_CASE("mBART-50: ids, greedy and beam 4 as transformers' generate(), the target language forced", "[hf-seq2seq]") {
  check_family(kData / "mbart50");
}

TEST_CASE("mBART-50: the tokenizer on hostile text, and the family's rules", "[hf-seq2seq]") {
  const attend::Model model = attend::Model::load((kData / "mbart50").string());
  check_tokenizer(model, kData / "mbart50" / "tokenizer_cases.jsonl");
  const json config = json::parse(model.info().config_json);
  CHECK(config["norm_placement"] == "pre");
  CHECK(config["layernorm_embedding"] == true);
  CHECK(config["encoder_final_norm"] == true);
  CHECK(config["position_offset"] == 2);  // learned positions, stored with 2 extra rows
  CHECK(config["output_bias"] == true);   // final_logits_bias
  CHECK(model.special_ids().decoder_start == model.special_ids().eos);
  CHECK(model.decode_tokens(model.forced_target_prefix("fr_XX"))[0] == "fr_XX");
  CHECK_THROWS_WITH(model.forced_target_prefix("<mask>"), Catch::Contains("is not a language of this model"));
  CHECK(model.default_options().beam_size == 4);
}

TEST_CASE("A Hugging Face encoder-decoder given as files in memory is named, not misread", "[hf-seq2seq]") {
  auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const char* family : {"marian", "nllb"}) {
    std::map<std::string, std::string> files = {{"config.json", read(kData / family / "config.json")},
                                                {"model.safetensors", read(kData / family / "model.safetensors")}};
    CHECK_THROWS_WITH(attend::Model::load_from_memory(family, files),
                      Catch::Contains("config.json") && Catch::Contains("Hugging Face") && Catch::Contains("from their directory"));
  }
}

TEST_CASE("T5 (gated-gelu, tied, scaled output) and T5 v1.0 shape (relu): ids, greedy and beam 4 as generate()", "[hf-seq2seq]") {
  check_family(kData / "t5");
  check_family(kData / "t5-relu-untied");
  check_tokenizer(attend::Model::load((kData / "t5").string()), kData / "t5" / "tokenizer_cases.jsonl");
  const attend::Model model = attend::Model::load((kData / "t5").string());
  const json config = json::parse(model.info().config_json);
  CHECK(config["norm_type"] == "rms_norm");
  CHECK(config["relative_attention"] == "t5_bias");
  CHECK(config["ffn_gated"] == true);
  CHECK(config["linear_bias"] == false);
  CHECK(model.special_ids().decoder_start == model.special_ids().pad);
  CHECK_THROWS_WITH(model.forced_target_prefix("fr"), Catch::Contains("no language codes"));
  CHECK(config["tie_output_projection"] == true);
  CHECK(config["decoder_output_scale"].get<double>() == Approx(0.25));  // d_model 16: 16^−0.5
  // t5 v1.1 / flan-t5 / mT5: their own lm_head, no output scaling
  const json untied = json::parse(attend::Model::load((kData / "t5-relu-untied").string()).info().config_json);
  CHECK(untied["tie_output_projection"] == false);
  CHECK(untied["decoder_output_scale"].get<double>() == 1.0);
  CHECK(untied["ffn_gated"] == false);
}

// mT5-small's and flan-t5-small's shape: heads of d_kv that do not span d_model (6 × 64 =
// 384 ≠ 512). The fixture: an MT5ForConditionalGeneration of d_model 32 with 4 heads of 12
// (q, k, v [48, 32], o [32, 48]), gated-gelu, its own lm_head; the t5 fixture's tokenizer
// files are put beside it.
fs::path mt5_inner_width_copy() {
  const fs::path dir = fs::temp_directory_path() / ("attend-mt5-inner-width-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kData / "t5", dir);
  for (const char* f : {"config.json", "generation_config.json", "model.safetensors", "cases.jsonl"})
    fs::copy_file(kData / "mt5-inner-width" / f, dir / f, fs::copy_options::overwrite_existing);
  return dir;
}

TEST_CASE("mT5: d_kv × num_heads ≠ d_model (mT5-small, flan-t5-small shape): ids, greedy and beam 4 as generate()", "[hf-seq2seq]") {
  const fs::path dir = mt5_inner_width_copy();
  check_family(dir);
  const json config = json::parse(attend::Model::load(dir.string()).info().config_json);
  CHECK(config["d_model"] == 32);
  CHECK(config["attention_dim"] == 48);  // 4 heads × d_kv 12
  CHECK(config["tie_output_projection"] == false);
  CHECK(config["decoder_output_scale"].get<double>() == 1.0);
  fs::remove_all(dir);
}

// int8 and bfloat16 run the same attention of another width than d_model: their
// log-probabilities of generate()'s outputs stay near float32's, which the test above ties
// to transformers (a width mixed up anywhere gives errors of whole nats).
TEST_CASE("mT5: d_kv × num_heads ≠ d_model in int8 and bfloat16, with float32 and bfloat16 caches", "[hf-seq2seq]") {
  const fs::path dir = mt5_inner_width_copy();
  const attend::Model reference = attend::Model::load(dir.string());
  std::vector<std::vector<std::int32_t>> sources, targets;
  for (const json& c : cases_of(dir)) {
    const auto ids = reference.encode_source(c["source"].get<std::string>(), "", "");
    if (reference.is_empty_source(ids)) continue;
    auto target = generated(c);
    if (!target.empty() && target.back() == 1) target.pop_back();  // score_ids scores </s> itself
    sources.push_back(ids), targets.push_back(target);
  }
  REQUIRE(sources.size() >= 10);
  const auto expected = attend::Translator(reference, {.threads = 1}).score_ids(sources, targets);
  for (const auto& [compute, kv, tolerance] : {std::tuple{"int8", "default", 0.25}, {"int8", "float32", 0.25},
                                               {"bfloat16", "default", 0.08}, {"bfloat16", "float32", 0.08}}) {
    attend::LoadOptions lo;
    lo.compute_type = compute, lo.kv_cache_type = kv;
    const attend::Model model = attend::Model::load(dir.string(), lo);
    const auto got = attend::Translator(model, {.threads = 2}).score_ids(sources, targets);
    double worst = 0, sum = 0, n = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      REQUIRE(got[i].log_probs.size() == expected[i].log_probs.size());
      for (std::size_t t = 0; t < got[i].log_probs.size(); ++t) {
        worst = std::max(worst, double(std::abs(got[i].log_probs[t] - expected[i].log_probs[t])));
        sum += std::abs(got[i].log_probs[t] - expected[i].log_probs[t]), ++n;
      }
    }
    INFO(compute << " compute, " << kv << " caches: worst |Δ log p| " << worst << " mean " << sum / n);
    CHECK(worst < 2 * tolerance);  // measured: int8 0.29, bfloat16 0.05
    CHECK(sum / n < tolerance / 4);  // measured: int8 0.036, bfloat16 0.010
  }
  fs::remove_all(dir);
}

TEST_CASE("T5: a d_kv outside the attention kernels' range is refused naming config.json and d_kv", "[hf-seq2seq]") {
  const fs::path dir = fs::temp_directory_path() / ("attend-t5-dkv-" + std::to_string(::getpid()));
  for (const int d_kv : {0, 300}) {
    fs::remove_all(dir);
    fs::copy(kData / "t5", dir);
    json config = json::parse(std::ifstream(dir / "config.json"));
    config["d_kv"] = d_kv;
    std::ofstream(dir / "config.json") << config.dump();
    CHECK_THROWS_WITH(attend::Model::load(dir.string()), Catch::Contains("config.json") && Catch::Contains("d_kv"));
  }
  fs::remove_all(dir);
}

TEST_CASE("BART (bart-large-cnn shape): ids, greedy and beam 4 as generate() — forced <s>, no_repeat_ngram_size, length_penalty 2", "[hf-seq2seq]") {
  check_family(kData / "bart");
  const attend::Model model = attend::Model::load((kData / "bart").string());
  check_tokenizer(model, kData / "bart" / "tokenizer_cases.jsonl");
  const json config = json::parse(model.info().config_json);
  CHECK(config["norm_placement"] == "post");
  CHECK(config["layernorm_embedding"] == true);
  CHECK(config["encoder_final_norm"] == false);
  CHECK(config["position_offset"] == 2);
  CHECK(config["output_bias"] == true);
  CHECK(model.forced_target_prefix("") == std::vector<std::int32_t>{0});  // forced_bos_token_id <s>
}

// CTranslate2 4.8.1's own TransformersConverter on the marian fixture (made by
// make_hf_seq2seq_fixtures.py --families marian-ct2): the vocabulary has neither <s> nor
// <pad> while config.json names bos_token "<s>". ct2_cases.jsonl holds what
// ctranslate2.Translator gives on it (greedy and beam 4, max_decoding_length 24), sources of
// only <unk> among them (content for CTranslate2, not an empty source).
TEST_CASE("A Marian model converted by CTranslate2's own converter (no <s> in its vocabulary) translates as CTranslate2", "[hf-seq2seq]") {
  const fs::path dir = kData / "marian-ct2";
  const attend::Model model = attend::Model::load(dir.string());
  CHECK_FALSE(model.transformers_rules());
  CHECK(model.special_ids().bos == -1);  // none
  const attend::Translator translator(model, {.threads = 1});
  std::size_t checked = 0, empty = 0, unknown = 0;
  std::ifstream in(dir / "ct2_cases.jsonl");
  for (std::string line; std::getline(in, line);) {
    const json c = json::parse(line);
    const auto source = c["source"].get<std::vector<std::string>>();
    INFO(c["source"].dump() << " beam " << c["beam_size"]);
    attend::TranslationOptions o;
    o.beam_size = c["beam_size"].get<std::int64_t>(), o.max_length = 24;
    const auto r = translator.translate_tokens({source}, o);
    CHECK(r[0].hypotheses[0].tokens == c["tokens"].get<std::vector<std::string>>());
    CHECK(r[0].hypotheses[0].score == Approx(c["score"].get<double>()).margin(1e-4));
    empty += c["tokens"].empty();
    unknown += source[0] == "<unk>";
    ++checked;
  }
  CHECK(checked == 24);
  CHECK(empty >= 2);    // the empty line, [</s>]: no content
  CHECK(unknown >= 4);  // [<unk>] and [<unk>, </s>]: content, translated
}

TEST_CASE("CTranslate2 directories: a missing end token, or a missing BOS the sources are to get, is still refused", "[hf-seq2seq]") {
  const fs::path dir = fs::temp_directory_path() / ("attend-ct2-specials-" + std::to_string(::getpid()));
  for (const auto& [field, value, named] : {std::tuple{"eos_token", json("<eos>"), "eos_token"},
                                            {"add_source_bos", json(true), "bos_token"},
                                            {"decoder_start_token", json("<s>"), "decoder_start_token"}}) {
    fs::remove_all(dir);
    fs::copy(kData / "marian-ct2", dir);
    json config = json::parse(std::ifstream(dir / "config.json"));
    config[field] = value;
    std::ofstream(dir / "config.json") << config.dump();
    CHECK_THROWS_WITH(attend::Model::load(dir.string()), Catch::Contains(named) && Catch::Contains("is not in the vocabulary"));
  }
  fs::remove_all(dir);
}
