// The encoder commands (embed, classify, tokenize) and the encoder forms of bench,
// inspect and plan, run as a user runs them, on the committed fixtures of
// tests/data/encoders (make_fixtures.py: outputs of sentence-transformers itself).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "cli_runner.hpp"

namespace attend::test {
namespace {

using Catch::Matchers::Contains;
using json = nlohmann::json;
const std::string kEncoders = std::string(ATTEND_TEST_DATA) + "/encoders";

json cases_of(const std::string& name) {
  std::ifstream in(kEncoders + "/" + name + "/cases.json");
  return json::parse(in)["cases"];
}

std::string ids_lines(const json& cases) {
  std::string out;
  for (const json& c : cases) {
    for (size_t k = 0; k < c["ids"].size(); ++k) out.append(k ? " " : "").append(std::to_string(c["ids"][k].get<int>()));
    out += "\n";
  }
  return out;
}

// A .npy file's shape and float32 data.
std::pair<std::vector<long>, std::vector<float>> read_npy(const std::string& path) {
  const std::string bytes = read_file(path);
  REQUIRE(bytes.substr(0, 6) == "\x93NUMPY");
  const std::size_t header = 10 + static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
  const std::string dict = bytes.substr(10, header - 10);
  REQUIRE_THAT(dict, Contains("'descr': '<f4'"));
  const auto open = dict.find("'shape': (") + 10, close = dict.find(')', open);
  const std::string shape = dict.substr(open, close - open);
  std::vector<long> dims = {std::stol(shape), std::stol(shape.substr(shape.find(',') + 1))};
  std::vector<float> data((bytes.size() - header) / 4);
  std::memcpy(data.data(), bytes.data() + header, data.size() * 4);
  return {dims, data};
}

TEST_CASE("embed: one row per line, in order, sentence-transformers' vectors, npy, jsonl and tsv agree", "[cli][encoder]") {
  const json cases = cases_of("st-all-poolings");
  const std::string input = ids_lines(cases) + ids_lines(cases);  // twice: lengths interleave across batches
  const auto jsonl = run_attend({"embed", "-m", kEncoders + "/st-all-poolings", "--input-format", "ids", "--max-batch-size", "3", "-q"}, input);
  REQUIRE(jsonl.status == 0);
  const auto rows = split_lines(jsonl.out);
  REQUIRE(rows.size() == 2 * cases.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto got = json::parse(rows[i]).get<std::vector<float>>();
    const auto want = cases[i % cases.size()]["embedding"].get<std::vector<float>>();
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) CHECK(std::abs(got[k] - want[k]) < 1e-4);  // test_encoder_fixtures.cpp: why 1e-4
  }
  const std::string npy = scratch_directory() + "/embeddings.npy";
  REQUIRE(run_attend({"embed", "-m", kEncoders + "/st-all-poolings", "--input-format", "ids", "--max-batch-size", "3", "-o", npy, "-q"}, input).status == 0);
  const auto [shape, data] = read_npy(npy);
  CHECK(shape == std::vector<long>{static_cast<long>(rows.size()), 16});
  REQUIRE(data.size() == rows.size() * 16);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto text_row = json::parse(rows[i]).get<std::vector<float>>();
    for (size_t k = 0; k < 16; ++k) CHECK(data[i * 16 + k] == text_row[k]);  // shortest decimals read back exactly
  }
  const auto tsv = run_attend({"embed", "-m", kEncoders + "/st-all-poolings", "--input-format", "ids", "--output-format", "tsv", "-q"}, input);
  REQUIRE(tsv.status == 0);
  CHECK(split_lines(tsv.out).size() == rows.size());
}

TEST_CASE("embed: --normalize and --no-normalize override the model's Normalize module", "[cli][encoder]") {
  const std::string input = "2 30 31 54 3\n2 3\n";
  auto norms = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"embed", "-m", kEncoders + "/bert", "--input-format", "ids", "-q"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_attend(args, input);
    REQUIRE(r.status == 0);
    std::vector<double> out;
    for (const auto& row : split_lines(r.out)) {
      double sum = 0;
      for (float v : json::parse(row).get<std::vector<float>>()) sum += double(v) * v;
      out.push_back(std::sqrt(sum));
    }
    return out;
  };
  for (double n : norms({"--normalize"})) CHECK(std::abs(n - 1) < 1e-5);
  for (double n : norms({})) CHECK(std::abs(n - 1) > 1e-2);  // a plain BertModel: mean pooling, no Normalize
  CHECK(run_attend({"embed", "-m", kEncoders + "/bert", "--normalize", "--no-normalize"}, input).status == 2);
}

TEST_CASE("classify: labels and scores of a classifier, one line per input line", "[cli][encoder]") {
  const json cases = cases_of("bert-classifier");
  const auto r = run_attend({"classify", "-m", kEncoders + "/bert-classifier", "--input-format", "ids", "--output-format", "jsonl", "-q"},
                            ids_lines(cases));
  REQUIRE(r.status == 0);
  const auto rows = split_lines(r.out);
  REQUIRE(rows.size() == cases.size());
  const std::vector<std::string> labels = {"negative", "neutral", "positive"};
  for (size_t i = 0; i < rows.size(); ++i) {
    const json j = json::parse(rows[i]);
    const auto logits = cases[i]["logits"].get<std::vector<float>>();
    const auto best = std::max_element(logits.begin(), logits.end()) - logits.begin();
    CHECK(j["label"] == labels[best]);
    double sum = 0;
    for (const auto& [label, score] : j["scores"].items()) sum += score.get<double>();
    CHECK(std::abs(sum - 1) < 1e-5);  // softmax
  }
  const auto plain = run_attend({"embed", "-m", kEncoders + "/bert", "--input-format", "ids", "-q"}, "2 3\n");
  CHECK(plain.status == 0);
  const auto none = run_attend({"classify", "-m", kEncoders + "/bert", "--input-format", "ids", "-q"}, "2 3\n");
  CHECK(none.status == 1);
  CHECK_THAT(none.err, Contains("no classification head"));
}

TEST_CASE("encoder commands: bad input is named, over-long lines truncated with one warning", "[cli][encoder]") {
  const std::string model = kEncoders + "/bert";  // 64 positions
  std::string long_line;
  for (int i = 0; i < 100; ++i) long_line += "5 ";
  const auto r = run_attend({"embed", "-m", model, "--input-format", "ids"}, long_line + "\n2 3\n" + long_line + "\n");
  REQUIRE(r.status == 0);
  CHECK(split_lines(r.out).size() == 3);
  CHECK_THAT(r.err, Contains("2 line(s) longer than 64 tokens were truncated (first: line 1)"));
  const auto bad = run_attend({"embed", "-m", model, "--input-format", "ids", "-q"}, "2 3\n2 x3 3\n");
  CHECK(bad.status == 1);
  CHECK_THAT(bad.err, Contains("line 2: 'x3' is not a token id"));
  const auto outside = run_attend({"embed", "-m", model, "--input-format", "ids", "-q"}, "2 99999 3\n");
  CHECK(outside.status == 1);
  CHECK_THAT(outside.err, Contains("outside the vocabulary"));
  const auto missing = run_attend({"embed", "-m", kEncoders + "/no-such-model", "-q"}, "x\n");
  CHECK(missing.status == 1);
  CHECK_THAT(missing.err, Contains("no-such-model"));
}

// Text in, through the model's tokenizer.json: the ids Hugging Face's tokenizers gave
// (stored in the fixtures), one output line per input line — the empty line, a blank one
// and a line of Unicode spaces all the empty text ([CLS] [SEP]); invalid UTF-8 replaced
// as tokenizers replace it, with a warning naming the line; lines past the model's
// length cut to it, with one warning counting them.
TEST_CASE("embed, classify and tokenize read text: Hugging Face's ids, every line one row, warnings by line",
          "[cli][encoder]") {
  const std::string model = kEncoders + "/st-all-poolings";
  const json cases = cases_of(model.substr(model.rfind('/') + 1));
  std::string text, ids;
  for (const json& c : cases) {
    text += c["text"].get<std::string>() + "\n";
    for (size_t k = 0; k < c["ids"].size(); ++k) ids.append(k ? " " : "").append(std::to_string(c["ids"][k].get<int>()));
    ids += "\n";
  }
  const auto tokenized = run_attend({"tokenize", "-m", model, "-q"}, text);
  REQUIRE(tokenized.status == 0);
  CHECK(tokenized.out == ids);
  const auto embedded = run_attend({"embed", "-m", model, "-q"}, text);
  REQUIRE(embedded.status == 0);
  const auto rows = split_lines(embedded.out);
  REQUIRE(rows.size() == cases.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto got = json::parse(rows[i]).get<std::vector<float>>();
    const auto want = cases[i]["embedding"].get<std::vector<float>>();
    for (size_t k = 0; k < want.size(); ++k) CHECK(std::abs(got[k] - want[k]) < 1e-4);
  }

  // Empty, blank and Unicode-blank lines; invalid UTF-8 (a lone byte, a cut sequence).
  const std::string bert = kEncoders + "/bert";
  const auto odd = run_attend({"embed", "-m", bert}, "\n \t \n\u3000\u00a0\nhello \xff world\nhello world\nabc \xe2\x82 def\n");
  REQUIRE(odd.status == 0);
  const auto odd_rows = split_lines(odd.out);
  REQUIRE(odd_rows.size() == 6);
  CHECK(odd_rows[1] == odd_rows[0]);
  CHECK(odd_rows[2] == odd_rows[0]);
  CHECK(odd_rows[3] == odd_rows[4]);  // BertNormalizer drops U+FFFD
  CHECK_THAT(odd.err, Contains("line 4: invalid UTF-8 at byte 7, replaced by U+FFFD"));
  CHECK_THAT(odd.err, Contains("line 6: invalid UTF-8 at byte 5, replaced by U+FFFD"));
  CHECK(run_attend({"tokenize", "-m", bert, "--output-format", "tokens", "-q"}, "\n   \nHello world!\n").out ==
        "[CLS] [SEP]\n[CLS] [SEP]\n[CLS] hello world ! [SEP]\n");

  // Longer than the model's 64 positions: cut to 64 tokens, one warning for both lines.
  std::string long_line;
  for (int i = 0; i < 100; ++i) long_line += "hello ";
  const auto cut = run_attend({"tokenize", "-m", bert}, long_line + "\nhello\n" + long_line + "\n");
  REQUIRE(cut.status == 0);
  const auto cut_rows = split_lines(cut.out);
  REQUIRE(cut_rows.size() == 3);
  CHECK(std::count(cut_rows[0].begin(), cut_rows[0].end(), ' ') == 63);
  CHECK_THAT(cut.err, Contains("2 line(s) longer than 64 tokens were truncated (first: line 1)"));
  CHECK(split_lines(run_attend({"embed", "-m", bert, "-q"}, long_line + "\n").out).size() == 1);

  // Sentence pairs, tab-separated, for a cross-encoder: its logits through a sigmoid.
  const json pairs = cases_of("bert-cross-encoder");
  std::string pair_lines;
  for (const json& c : pairs) pair_lines += c["pair"][0].get<std::string>() + "\t" + c["pair"][1].get<std::string>() + "\n";
  const auto scored = run_attend({"classify", "-m", kEncoders + "/bert-cross-encoder", "-q"}, pair_lines);
  REQUIRE(scored.status == 0);
  const auto score_rows = split_lines(scored.out);
  REQUIRE(score_rows.size() == pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    const double score = std::stod(score_rows[i].substr(score_rows[i].find('\t') + 1));
    CHECK(std::abs(score - 1 / (1 + std::exp(-pairs[i]["logits"][0].get<double>()))) < 1e-4);
  }
}

TEST_CASE("encoder directories: an unsupported architecture or field is refused by name", "[cli][encoder]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(scratch_directory()) / "refused";
  auto with_config = [&](const std::function<void(json&)>& change) {
    fs::remove_all(dir);
    fs::copy(kEncoders + "/bert", dir);
    std::ifstream in(dir / "config.json");
    json c = json::parse(in);
    change(c);
    std::ofstream(dir / "config.json") << c.dump();
    return run_attend({"embed", "-m", dir.string(), "--input-format", "ids", "-q"}, "2 3\n");
  };
  auto r = with_config([](json& c) { c["position_embedding_type"] = "relative_key"; });
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Contains("config.json: field 'position_embedding_type' is 'relative_key'"));
  r = with_config([](json& c) { c["architectures"] = {"BertForQuestionAnswering"}; });
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Contains("field 'architectures' is 'BertForQuestionAnswering'"));
  r = with_config([](json& c) { c["model_type"] = "gpt2"; });
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Contains("field 'model_type' is 'gpt2'"));
  r = with_config([](json& c) { c.erase("hidden_size"); });
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Contains("field 'hidden_size' is missing"));
}

TEST_CASE("inspect, plan and bench take an encoder directory, an unknown command is exit 2", "[cli][encoder]") {
  const std::string model = kEncoders + "/st-all-poolings";
  const auto inspect = run_attend({"inspect", "-m", model});
  CHECK(inspect.status == 0);
  CHECK_THAT(inspect.out, Contains("sentence-transformers (Transformer, Pooling, Dense, Normalize)"));
  const auto plan = run_attend({"plan", "-m", model});
  CHECK(plan.status == 0);
  CHECK_THAT(plan.out, Contains("packed (no padding)"));
  CHECK_THAT(plan.out, Contains("pool weightedmean"));
  const auto bench = run_attend({"bench", "-m", model, "--sentences", "8", "--src-len", "2:12", "--json"});
  REQUIRE(bench.status == 0);
  const json j = json::parse(bench.out);
  CHECK(j["sentences_per_second"].get<double>() > 0);
  CHECK(j["workload"]["sentences"] == 8);
  // The compute type and why, in every form (bfloat16 says where it is slower than float32;
  // the rates it quotes are measured by each process, so they are left out of the match).
  for (const std::string type : {"default", "bfloat16"}) {
    const std::vector<std::string> bench_args = {"bench", "-m", model, "--sentences", "4", "--src-len", "2:12", "--compute-type", type};
    std::vector<std::string> json_args = bench_args;
    json_args.push_back("--json");
    std::string reason = json::parse(run_attend(json_args).out)["compute_type_reason"];
    REQUIRE(!reason.empty());
    reason = reason.substr(0, reason.find(" runs "));
    const std::string name = type == "default" ? "float32" : "bfloat16";
    CHECK_THAT(run_attend(bench_args).out, Contains("compute type: " + name + " — " + reason));
    CHECK_THAT(run_attend({"inspect", "-m", model, "--compute-type", type}).out, Contains("compute:     " + name + " — " + reason));
  }
  CHECK(run_attend({"embed", "--help"}).status == 0);
  const auto unknown = run_attend({"frobnicate", "--help"});
  CHECK(unknown.status == 2);
  CHECK_THAT(unknown.err, Contains("unknown command 'frobnicate'"));
}

}  // namespace
}  // namespace attend::test
