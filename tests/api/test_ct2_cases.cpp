// CTranslate2 as the oracle of the decoding options: every case CTranslate2 4.8.1
// decoded on the fixture models of each family (tests/data/ct2-variants/<family>/
// cases.jsonl, and the shared copy, which may hold other seeds), plus the cases it
// decoded for the options those leave out (tests/data/ct2-options/<family>.jsonl, made
// by tests/ct2/make_option_cases.py), run through the public API: the same hypotheses,
// scores within 1e-3 relative, attention within 1e-3 absolute.
//
// A family attend cannot load yet is reported (and must fail with a message naming the
// file); its cases run as soon as it loads.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "attend/attend.hpp"
#include "api/ct2_options.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct CaseFile {
  std::string family;
  fs::path model, cases;
};

std::vector<CaseFile> case_files() {
  std::vector<CaseFile> out;
  const fs::path source(ATTEND_SOURCE_DIR);
  // The committed fixtures only (tests/data/ct2-variants/README.md: copied from the
  // project's shared material), so a fresh clone runs exactly what any other checkout runs.
  for (const auto& dir : fs::directory_iterator(source / "tests/data/ct2-variants"))
    if (fs::exists(dir.path() / "cases.jsonl"))
      out.push_back({dir.path().filename().string(), dir.path(), dir.path() / "cases.jsonl"});
  const fs::path options = source / "tests/data/ct2-options";
  if (fs::exists(options))
    for (const auto& f : fs::directory_iterator(options))
      if (f.path().extension() == ".jsonl")
        out.push_back({f.path().stem().string(), source / "tests/data/ct2-variants" / f.path().stem(), f.path()});
  return out;
}

bool close(double got, double want, double relative) { return std::abs(got - want) <= relative * std::max(1.0, std::abs(want)); }

// Runs one file's cases; returns how many ran.
int run_cases(const CaseFile& file, const attend::Model& model) {
  const attend::Translator translator(model, {.threads = 2, .max_batch_size = 4, .max_target_length = 64, .max_beam_size = 8});
  std::ifstream in(file.cases);
  int count = 0;
  for (std::string line; std::getline(in, line); ++count) {
    const json c = json::parse(line);
    INFO(file.cases.string() << " line " << count + 1 << ": " << c["options"].dump());
    const auto options = attend::test::options_from_ct2(c["options"]);
    std::vector<std::vector<std::string>> prefixes;
    if (c.contains("target_prefix")) prefixes.push_back(c["target_prefix"]);
    const auto result = translator.translate_tokens({c["source"].get<std::vector<std::string>>()}, options, prefixes);
    const auto& want = c["hypotheses"];
    REQUIRE(result.at(0).hypotheses.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      INFO("hypothesis " << k);
      const auto& h = result[0].hypotheses[k];
      CHECK(h.tokens == want[k].get<std::vector<std::string>>());
      CHECK(close(h.score, c["scores"][k].get<double>(), 1e-3));
      if (c.contains("attention")) {
        const auto& a = c["attention"][k];
        REQUIRE(h.attention.size() == a.size());
        for (std::size_t t = 0; t < a.size(); ++t) {
          REQUIRE(h.attention[t].size() == a[t].size());
          for (std::size_t s = 0; s < a[t].size(); ++s) CHECK(std::abs(h.attention[t][s] - a[t][s].get<double>()) <= 1e-3);
        }
      }
    }
  }
  return count;
}

}  // namespace

TEST_CASE("CTranslate2's outputs for its decoding options, on every family", "[api][ct2]") {
  const auto files = case_files();
  REQUIRE(!files.empty());
  std::map<std::string, int> ran;
  for (const CaseFile& file : files) {
    INFO(file.cases.string());
    // Every fixture's model must load (a failure here fails: no case file is left out).
    ran[file.family] += run_cases(file, attend::Model::load(file.model.string()));
  }
  for (const auto& [family, n] : ran) WARN(family << ": " << n << " CTranslate2 cases");
  // Every family loads: each must have run its fixture cases and its option cases.
  for (const char* family : {"bart", "marian", "mbart", "nllb", "onmt_relative", "t5"}) CHECK(ran[family] >= 84);
}
