// The C++ and C faces of what CTranslate2's Python drop-in needs from the engine: models
// loaded from files held in memory (Translator(files=…)), vocabulary maps (use_vmap) and
// the library's log (set_log_level). tests/python/test_ctranslate2_dropin.py checks the
// same against CTranslate2 itself.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "api_fixture.hpp"
#include "attend/attend.h"
#include "attend/attend.hpp"

namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using attend::api_test::corpus;
using attend::api_test::kModel;

const std::string kTranslit = std::string(ATTEND_SOURCE_DIR) + "/tests/data/models/ct2-aren-transliteration";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file of a model directory, by name.
std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) files[entry.path().filename().string()] = read_file(entry.path());
  return files;
}

std::vector<std::vector<std::string>> hypotheses(const std::vector<attend::TranslationResult>& results) {
  std::vector<std::vector<std::string>> out;
  for (const auto& r : results) out.push_back(r.hypotheses[0].tokens);
  return out;
}

// Made-up names: letters of the transliteration model's source vocabulary.
std::vector<std::vector<std::string>> names(std::size_t n) {
  const std::vector<std::string> letters = {"آ", "ت", "ز", "م", "و", "ن", "ش", "ي", "س", "ب", "ر", "ل"};
  std::vector<std::vector<std::string>> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> name;
    for (std::size_t k = 0; k < 2 + (i * 7) % 6; ++k) name.push_back(letters[(i * 5 + k * 3) % letters.size()]);
    out.push_back(name);
  }
  return out;
}

// A copy of the transliteration model with `vmap` as its vmap.txt.
std::string model_with_vmap(const std::string& name, const std::string& vmap) {
  const fs::path dir = fs::temp_directory_path() / ("attend-vmap-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kTranslit, dir);
  std::ofstream(dir / "vmap.txt", std::ios::binary) << vmap;
  return dir.string();
}

}  // namespace

TEST_CASE("C++ API: a model from files in memory translates as from its directory", "[api][memory]") {
  SECTION("attend's format with SentencePiece models") {
    const attend::Model on_disk = attend::Model::load(kModel);
    const attend::Model in_memory = attend::Model::load_from_memory("fixture-in-memory", files_of(kModel));
    CHECK(in_memory.info().directory == "fixture-in-memory");
    CHECK(in_memory.info().parameters == on_disk.info().parameters);
    REQUIRE(in_memory.has_text_tokenizer());
    const auto lines = corpus(12);
    const auto a = attend::Translator(on_disk).translate_text(lines);
    const auto b = attend::Translator(in_memory).translate_text(lines);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      CHECK(a[i].hypotheses[0].text == b[i].hypotheses[0].text);
      CHECK(a[i].hypotheses[0].score == b[i].hypotheses[0].score);
    }
  }
  SECTION("CTranslate2's format, int8 too") {
    for (const std::string& dir : {kTranslit, kTranslit + "-int8"}) {
      const attend::Model on_disk = attend::Model::load(dir);
      const attend::Model in_memory = attend::Model::load_from_memory("translit", files_of(dir));
      CHECK(in_memory.info().compute_type == on_disk.info().compute_type);
      const auto sources = names(20);
      CHECK(hypotheses(attend::Translator(in_memory).translate_tokens(sources)) ==
            hypotheses(attend::Translator(on_disk).translate_tokens(sources)));
    }
  }
  SECTION("errors name the model and the file") {
    auto files = files_of(kTranslit);
    files.erase("model.bin");
    CHECK_THROWS_WITH(attend::Model::load_from_memory("m", files), Contains("m: the files given hold no model"));
    files = files_of(kTranslit);
    files["model.bin"].resize(100);
    CHECK_THROWS_WITH(attend::Model::load_from_memory("m", files), Contains("m/model.bin"));
    files = files_of(kTranslit);
    files.erase("source_vocabulary.txt");
    CHECK_THROWS_WITH(attend::Model::load_from_memory("m", files), Contains("m: missing vocabulary"));
    CHECK_THROWS_WITH(attend::Model::load_from_memory("m", {{"sub/model.bin", "x"}}), Contains("not a plain file name"));
  }
}

TEST_CASE("C++ API: use_vmap restricts each sentence to its own candidates", "[api][vmap]") {
  // ن may give n or m, م only m, ت t or s; a, o and e always; the bigram "ت ز" adds z.
  const std::string dir = model_with_vmap("cpp", "\ta o e\nن\tn m\nم\tm\nت\tt s\nت ز\tz\n");
  const attend::Model model = attend::Model::load(dir);
  REQUIRE(model.has_vocabulary_map());
  CHECK(model.info().vocabulary_map == "vmap.txt (5 rules)");
  const attend::Translator translator(model);
  attend::TranslationOptions o;
  o.use_vmap = true;
  const auto sources = names(30);
  const auto together = translator.translate_tokens(sources, o);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    std::set<std::string> allowed = {"a", "o", "e", "<unk>", "<s>", "</s>"};
    const auto& s = sources[i];
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (s[k] == "ن") allowed.insert({"n", "m"});
      if (s[k] == "م") allowed.insert("m");
      if (s[k] == "ت") allowed.insert({"t", "s"});
      if (s[k] == "ت" && k + 1 < s.size() && s[k + 1] == "ز") allowed.insert("z");
    }
    for (const std::string& token : together[i].hypotheses[0].tokens) CHECK(allowed.count(token) == 1);
    // Its own candidates, whatever the batch: alone it gives the same.
    CHECK(translator.translate_tokens({s}, o)[0].hypotheses[0].tokens == together[i].hypotheses[0].tokens);
  }
  // The same through ids and through a model loaded from memory.
  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& s : sources) ids.push_back(model.encode_tokens(s));
  const auto by_ids = translator.translate_ids(ids, o);
  const attend::Translator from_memory(attend::Model::load_from_memory("m", files_of(dir)));
  const auto by_memory = from_memory.translate_tokens(sources, o);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    CHECK(model.decode_tokens(by_ids[i].hypotheses[0].ids) == together[i].hypotheses[0].tokens);
    CHECK(by_memory[i].hypotheses[0].tokens == together[i].hypotheses[0].tokens);
  }
  // A target prefix's tokens are candidates too; a model without vmap.txt refuses.
  o.num_hypotheses = 1;
  const auto prefixed = translator.translate_tokens({{"ن"}}, o, {{"x", "y"}});
  CHECK(std::vector<std::string>(prefixed[0].hypotheses[0].tokens.begin(), prefixed[0].hypotheses[0].tokens.begin() + 2) ==
        std::vector<std::string>{"x", "y"});
  const attend::Translator plain(attend::Model::load(kTranslit));
  CHECK_THROWS_AS(plain.translate_tokens({{"ن"}}, o), attend::OptionError);
  CHECK_THROWS_WITH(plain.validate(o), Contains("use_vmap") && Contains("vmap.txt"));
  CHECK_NOTHROW(translator.validate(o));
  fs::remove_all(dir);
}

TEST_CASE("C++ API: set_log_level(info) logs each load on stderr", "[api][log]") {
  // stderr to a temporary file for the load.
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(::fileno(capture), STDERR_FILENO);
  const attend::LogLevel before = attend::log_level();
  attend::set_log_level(attend::LogLevel::info);
  attend::Model::load(kTranslit);
  attend::set_log_level(attend::LogLevel::warning);
  attend::Model::load(kTranslit);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  attend::set_log_level(before);
  std::rewind(capture);
  std::string text;
  for (int c; (c = std::fgetc(capture)) != EOF;) text += static_cast<char>(c);
  std::fclose(capture);
  CHECK_THAT(text, Contains("[attend] [info] Loaded model " + kTranslit + " on device cpu:0\n"));
  CHECK_THAT(text, Contains("[attend] [info]  - Selected compute type: float32"));
  CHECK(std::count(text.begin(), text.end(), '\n') < 12);  // one load logged, not the second
  CHECK(text.find("Loaded model") == text.rfind("Loaded model"));
}

TEST_CASE("C API: a model from memory, the log level, the compute types", "[api][memory][c-api]") {
  const auto files = files_of(kTranslit);
  std::vector<const char*> names_, contents;
  std::vector<size_t> sizes;
  for (const auto& [name, content] : files) {
    names_.push_back(name.c_str());
    contents.push_back(content.data());
    sizes.push_back(content.size());
  }
  attend_model* model = nullptr;
  REQUIRE(attend_model_load_from_memory("translit", files.size(), names_.data(), reinterpret_cast<const void* const*>(contents.data()),
                                        sizes.data(), nullptr, &model) == ATTEND_OK);
  attend_translator* translator = nullptr;
  REQUIRE(attend_translator_create(model, nullptr, &translator) == ATTEND_OK);
  const attend::Model reference = attend::Model::load(kTranslit);
  const auto source = reference.encode_tokens({"آ", "ت", "ز", "م", "و", "ن"});
  const int32_t* rows[] = {source.data()};
  const size_t lengths[] = {source.size()};
  attend_result* result = nullptr;
  REQUIRE(attend_translate_ids(translator, rows, lengths, 1, nullptr, &result) == ATTEND_OK);
  size_t length = 0;
  const int32_t* ids = attend_result_ids(result, 0, 0, &length);
  CHECK(reference.decode_tokens(std::vector<std::int32_t>(ids, ids + length)) ==
        std::vector<std::string>{"a", "t", "z", "m", "o", "n"});
  attend_result_free(result);
  attend_translator_free(translator);
  attend_model_free(model);

  names_[0] = nullptr;
  CHECK(attend_model_load_from_memory("m", files.size(), names_.data(), reinterpret_cast<const void* const*>(contents.data()),
                                      sizes.data(), nullptr, &model) == ATTEND_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(attend_last_error(), Contains("file_names[0] is NULL"));
  const char* twice[] = {"model.bin", "model.bin"};
  const void* bytes[] = {"x", "y"};
  const size_t one[] = {1, 1};
  CHECK(attend_model_load_from_memory("m", 2, twice, bytes, one, nullptr, &model) == ATTEND_ERROR);
  CHECK_THAT(attend_last_error(), Contains("given twice"));
  CHECK(model == nullptr);

  const int level = attend_get_log_level();
  CHECK(attend_set_log_level(ATTEND_LOG_INFO) == ATTEND_OK);
  CHECK(attend_get_log_level() == ATTEND_LOG_INFO);
  CHECK(attend_set_log_level(7) == ATTEND_ERROR_INVALID_ARGUMENT);
  CHECK(attend_set_log_level(level) == ATTEND_OK);
  CHECK_THAT(std::string(attend_supported_compute_types()), Catch::Matchers::StartsWith("float32,int8,int8_float32"));
}
