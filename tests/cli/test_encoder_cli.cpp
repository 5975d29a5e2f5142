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
#include <map>

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

// sentence-transformers' prompts (config_sentence_transformers.json): the default prompt
// applies unless --prompt or --prompt-name says otherwise, as encode(prompt=,
// prompt_name=) — embeddings against sentence-transformers' own.
TEST_CASE("embed: --prompt-name and --prompt, else the model's default prompt, as sentence-transformers", "[cli][encoder]") {
  const std::string model = kEncoders + "/st-roberta-prompts";
  json cases;
  for (const json& c : cases_of("st-roberta-prompts"))
    if (c.contains("text")) cases.push_back(c);
  std::string text;
  for (const json& c : cases) text += c["text"].get<std::string>() + "\n";
  auto check = [&](const std::vector<std::string>& flags, const char* field) {
    INFO(field);
    std::vector<std::string> args = {"embed", "-m", model, "-q"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_attend(args, text);
    REQUIRE(r.status == 0);
    const auto rows = split_lines(r.out);
    REQUIRE(rows.size() == cases.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto got = json::parse(rows[i]).get<std::vector<float>>();
      const auto want = cases[i][field].get<std::vector<float>>();
      REQUIRE(got.size() == want.size());
      for (size_t k = 0; k < want.size(); ++k) CHECK(std::abs(got[k] - want[k]) < 1e-4);
    }
  };
  check({}, "embedding");  // default_prompt_name "query"
  check({"--prompt-name", "passage"}, "embedding_passage");
  check({"--prompt", ""}, "embedding_no_prompt");
  check({"--prompt", "search <pad>: "}, "embedding_search_pad");
  check({"--prompt-name", "document"}, "embedding_document");  // known to every model: no prompt here
  std::string ids;
  for (const json& c : cases) {
    for (size_t k = 0; k < c["ids"].size(); ++k) ids.append(k ? " " : "").append(std::to_string(c["ids"][k].get<int>()));
    ids += "\n";
  }
  CHECK(run_attend({"tokenize", "-m", model, "-q"}, text).out == ids);  // what embed feeds: the default prompt too

  const auto unknown = run_attend({"embed", "-m", model, "--prompt-name", "title", "-q"}, "hello\n");
  CHECK(unknown.status == 2);
  CHECK_THAT(unknown.err, Contains("prompt name 'title' is not one of the model's prompts ('document', 'passage', 'query')"));
  const auto on_ids = run_attend({"embed", "-m", model, "--input-format", "ids", "--prompt", "x", "-q"}, "0 2\n");
  CHECK(on_ids.status == 2);
  CHECK_THAT(on_ids.err, Contains("--prompt and --prompt-name apply to text"));
  CHECK(run_attend({"embed", "-m", model, "--prompt", "x", "--prompt-name", "query", "-q"}, "a\n").status == 2);
  const auto inspect = run_attend({"inspect", "-m", model});
  CHECK_THAT(inspect.out, Contains("\"default_prompt_name\": \"query\""));
  CHECK_THAT(inspect.out, Contains("\"similarity\": \"euclidean\""));
}

// Every message names the line (counted from 1), never an index within a chunk; an
// empty ids line is the model's empty input, as an empty text line.
TEST_CASE("encoder commands: ids lines are checked and named by line; an empty ids line embeds the empty text", "[cli][encoder]") {
  const std::string model = kEncoders + "/bert";
  const auto outside = run_attend({"embed", "-m", model, "--input-format", "ids", "-q"}, "2 3\n2 99999 3\n");
  CHECK(outside.status == 1);
  CHECK_THAT(outside.err, Contains("line 2: id 99999 (token 2 of 3) is outside the vocabulary [0, "));
  CHECK_THAT(outside.err, !Contains("sequence"));
  const auto negative = run_attend({"embed", "-m", model, "--input-format", "ids", "-q"}, "2 3\n2 3\n2 -4 3\n");
  CHECK_THAT(negative.err, Contains("line 3: id -4 (token 2 of 3)"));
  const auto empty_ids = run_attend({"embed", "-m", model, "--input-format", "ids", "-q"}, "2 3\n\n   \n");
  REQUIRE(empty_ids.status == 0);
  const auto rows = split_lines(empty_ids.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[1] == rows[0]);  // [CLS] [SEP]: what the tokenizer gives the empty text
  CHECK(rows[2] == rows[0]);
  const auto text_row = json::parse(split_lines(run_attend({"embed", "-m", model, "-q"}, "\n").out)[0]).get<std::vector<float>>();
  const auto ids_row = json::parse(rows[0]).get<std::vector<float>>();
  for (size_t k = 0; k < ids_row.size(); ++k) CHECK(std::abs(text_row[k] - ids_row[k]) < 1e-5);  // another batch: not bit-equal yet
  const auto no_tokenizer = run_attend({"embed", "-m", kEncoders + "/bert-gelu-tanh", "--input-format", "ids", "-q"}, "2 3\n\n");
  CHECK(no_tokenizer.status == 1);
  CHECK_THAT(no_tokenizer.err, Contains("line 2: no token ids, and the model has no tokenizer"));
}

// DistilBERT has no token type embeddings: a pair's types are not used, as in
// transformers — every pair line classified as transformers classifies it.
TEST_CASE("classify: DistilBERT sentence pairs, as transformers", "[cli][encoder]") {
  json pairs;
  for (const json& c : cases_of("distilbert-classifier"))
    if (c.contains("pair")) pairs.push_back(c);
  REQUIRE(pairs.size() == 3);
  std::string lines = "a single sentence\n";
  for (const json& c : pairs) lines += c["pair"][0].get<std::string>() + "\t" + c["pair"][1].get<std::string>() + "\n";
  const auto r = run_attend({"classify", "-m", kEncoders + "/distilbert-classifier", "--output-format", "jsonl", "-q"}, lines);
  REQUIRE(r.status == 0);
  const auto rows = split_lines(r.out);
  REQUIRE(rows.size() == pairs.size() + 1);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const json got = json::parse(rows[i + 1])["scores"];
    const auto logits = pairs[i]["logits"].get<std::vector<double>>();
    const double top = std::max(logits[0], logits[1]);
    const double z = std::exp(logits[0] - top) + std::exp(logits[1] - top);
    CHECK(std::abs(got["LABEL_0"].get<double>() - std::exp(logits[0] - top) / z) < 1e-4);
  }
}

// Hostile model directories: each out-of-range or unknown field refused naming the
// file and the field — never a tensor count, an internal name or a crash.
TEST_CASE("encoder directories: out-of-range fields and bad Dense weights are refused by their own names", "[cli][encoder]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(scratch_directory()) / "hostile";
  auto with_json = [&](const std::string& from, const std::string& file, const std::function<void(json&)>& change) {
    fs::remove_all(dir);
    fs::copy(kEncoders + "/" + from, dir, fs::copy_options::recursive);
    std::ifstream in(dir / file);
    json c = json::parse(in);
    change(c);
    std::ofstream(dir / file) << c.dump();
    return run_attend({"embed", "-m", dir.string(), "--input-format", "ids", "-q"}, "2 3\n");
  };
  struct Case {
    const char* from;
    const char* field;
    json value;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"bert", "num_hidden_layers", 0, "config.json: field 'num_hidden_layers' must be in [1, 1024], got 0"},
      {"bert", "num_hidden_layers", -3, "field 'num_hidden_layers' must be in [1, 1024], got -3"},
      {"bert", "hidden_size", 0, "field 'hidden_size' must be in [1, 65536], got 0"},
      {"bert", "num_attention_heads", -1, "field 'num_attention_heads' must be in [1, 1024], got -1"},
      {"bert", "intermediate_size", 0, "field 'intermediate_size' must be in [1, 262144], got 0"},
      {"bert", "vocab_size", 0, "field 'vocab_size' must be in [1, 16777216], got 0"},
      {"bert", "max_position_embeddings", -64, "field 'max_position_embeddings' must be in [1, 1048576], got -64"},
      {"bert", "type_vocab_size", -1, "field 'type_vocab_size' must be in [0, 65536], got -1"},
      {"bert", "pad_token_id", 100000000000LL, "field 'pad_token_id' must be in [0, "},
      {"distilbert", "n_layers", 0, "config.json: field 'n_layers' must be in [1, 1024], got 0"},
      {"distilbert", "dim", -32, "field 'dim' must be in [1, 65536], got -32"},
      {"bert-classifier", "problem_type", "ranking", "field 'problem_type' is 'ranking'"},
  };
  for (const Case& c : cases) {
    INFO(c.from << ": " << c.field << " = " << c.value.dump());
    const auto r = with_json(c.from, "config.json", [&](json& j) { j[c.field] = c.value; });
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains(c.message));
  }
  const auto labels = with_json("bert-classifier", "config.json", [](json& j) {
    j.erase("id2label"), j.erase("label2id"), j["num_labels"] = -2;
  });
  CHECK_THAT(labels.err, Contains("field 'num_labels' must be in [1, 1048576], got -2"));
  // A Dense module whose weight does not fit its config: named by its file and stored name.
  const auto dense = with_json("st-all-poolings", "2_Dense/config.json", [](json& j) { j["out_features"] = 15; });
  CHECK(dense.status == 1);
  CHECK_THAT(dense.err, Contains("2_Dense/model.safetensors: linear.bias has shape [16], the configuration implies [15]"));
  CHECK_THAT(dense.err, !Contains("dense.0"));
  const auto out_of_range = with_json("st-all-poolings", "2_Dense/config.json", [](json& j) { j["out_features"] = 0; });
  CHECK_THAT(out_of_range.err, Contains("2_Dense/config.json: field 'out_features' must be in [1, 1048576], got 0"));
  const auto prompt = with_json("st-roberta-prompts", "config_sentence_transformers.json", [](json& j) {
    j["default_prompt_name"] = "title";
  });
  CHECK(prompt.status == 1);
  CHECK_THAT(prompt.err, Contains("config_sentence_transformers.json: field 'default_prompt_name' is 'title'"));
  const auto similarity = with_json("st-roberta-prompts", "config_sentence_transformers.json", [](json& j) {
    j["similarity_fn_name"] = "jaccard";
  });
  CHECK_THAT(similarity.err, Contains("field 'similarity_fn_name' is 'jaccard'"));
}

// A line of 10^7 characters is read only as far as truncation keeps (the tokenizer reads
// it piece by piece): the ids of a short prefix of it, read whole, and a peak RSS that is
// the line's own bytes and the model's, not ~300 bytes per character.
TEST_CASE("embed and tokenize: a 10^7-character line costs what its kept tokens cost, the same ids", "[cli][encoder][memory]") {
  const std::string model = kEncoders + "/st-all-poolings";
  std::string line;
  line.reserve(10'000'100);
  for (int k = 0; line.size() < 10'000'000; ++k) line += (k % 7 == 0 ? "Hello, World! " : "the quick brown fox ");
  const auto head = run_attend({"tokenize", "-m", model, "-q"}, line.substr(0, 2000) + "\n");
  const auto whole = run_attend({"tokenize", "-m", model, "-q"}, line + "\n");
  REQUIRE(whole.status == 0);
  CHECK(whole.out == head.out);
  const std::string file = write_scratch_file("long-line.txt", line + "\n");
  const auto r = run_attend({"embed", "-m", model, "-q", "-i", file});
  REQUIRE(r.status == 0);
  const double mib = r.peak_rss_mib;
  INFO("attend embed of one 10^7-character line: peak RSS " << mib << " MiB");
  CHECK(mib < 150);
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

// Issue 34: where an encoder's time goes — tokenisation, activation quantisation, each
// GEMM kind, attention, LayerNorm, pooling — each part measured (never negative), the
// parts summing to the measured time, the GEMMs' multiply-adds those of the model's
// shapes (its config.json), and the fraction of a --machine-limits peak that follows
// from them. No speed is asserted.
TEST_CASE("bench on an encoder says where the time goes and the fraction of the peak", "[cli][encoder]") {
  const std::string model = kEncoders + "/bert";
  std::string text;
  for (int i = 0; i < 12; ++i) text += "the quick brown fox number " + std::to_string(i) + " jumps over the lazy dog\n";
  const std::string input = write_scratch_file("bench-breakdown.txt", text);
  const std::vector<std::string> args = {"bench", "-m", model, "--input", input, "--compute-type", "int8", "--batch", "4"};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const auto first = run_attend(json_args);
  REQUIRE(first.status == 0);
  const std::string isa = json::parse(first.out)["isa"];
  const std::string limits = write_scratch_file(
      "machine-limits.json", R"({"rates": [], "copy_gbytes_per_s": 10.0, "attend": {"isa": ")" + isa +
                                 R"(", "float32": {"kernel": "k", "step": null, "gops_per_core": null},
                                 "int8": {"kernel": "k", "step": "int8_dot_)" + isa + R"(", "gops_per_core": 100.0}}})");
  json_args.insert(json_args.end(), {"--machine-limits", limits});
  const auto r = run_attend(json_args);
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  REQUIRE(j["compute_type"] == "int8");
  const json& b = j["breakdown"];
  const double total = b["total_seconds"];
  CHECK(total == Approx(j["seconds"].get<double>()));
  std::map<std::string, json> parts;
  double sum = 0;
  for (const json& p : b["parts"]) {
    INFO(p.dump());
    CHECK(p["seconds"].get<double>() >= 0);
    sum += p["seconds"].get<double>();
    parts[p["part"]] = p;
  }
  CHECK(sum >= total * 0.999);
  CHECK(sum <= total * 1.02 + 1e-4);  // the profiled steps lie inside the measured time
  // Every part this model runs is measured.
  for (const char* part : {"tokenization", "embedding", "activation_quantization", "outlier_rows", "gemm_qkv",
                           "gemm_attention_output", "gemm_ffn_up", "gemm_ffn_down", "attention", "layer_norm", "pooling"}) {
    INFO(part);
    REQUIRE(parts.count(part) == 1);
    CHECK(parts[part]["seconds"].get<double>() > 0);
  }
  CHECK(parts.count("heads") == 1);
  CHECK(parts.count("other") == 1);
  CHECK(b["fused"][0]["part"] == "gelu");
  CHECK(b["fused"][0]["into"] == "gemm_ffn_up");
  // Multiply-adds from the model's shapes: tokens × N × K per layer, over the passes.
  std::ifstream config_file(model + "/config.json");
  const json config = json::parse(config_file);
  const double D = config["hidden_size"], F = config["intermediate_size"], L = config["num_hidden_layers"];
  const double tokens = j["workload"]["tokens"].get<double>() * j["workload"]["passes"].get<double>();
  CHECK(parts["gemm_qkv"]["multiply_adds"].get<double>() == Approx(tokens * 3 * D * D * L));
  CHECK(parts["gemm_attention_output"]["multiply_adds"].get<double>() == Approx(tokens * D * D * L));
  CHECK(parts["gemm_ffn_up"]["multiply_adds"].get<double>() == Approx(tokens * F * D * L));
  CHECK(parts["gemm_ffn_down"]["multiply_adds"].get<double>() == Approx(tokens * D * F * L));
  CHECK(parts["attention"]["multiply_adds"].get<double>() > 0);
  // The fraction of the peak: 2 operations per multiply-add over the time × threads × peak.
  const json& peak = b["peak"];
  const double threads = j["threads"];
  REQUIRE(!peak["percent"].is_null());
  CHECK(peak["gops_per_core"].get<double>() == 100.0);
  CHECK(peak["percent"].get<double>() == Approx(100 * 2 * peak["multiply_adds"].get<double>() / total / (100e9 * threads)));
  const json& qkv = parts["gemm_qkv"];
  CHECK(qkv["peak_percent"].get<double>() ==
        Approx(100 * 2 * qkv["multiply_adds"].get<double>() / qkv["seconds"].get<double>() / (100e9 * threads)));
  CHECK(parts["layer_norm"]["peak_percent"].is_null());  // no multiply-adds counted
  // The text report shows the same parts.
  std::vector<std::string> text_args = args;
  text_args.insert(text_args.end(), {"--machine-limits", limits});
  const auto t = run_attend(text_args);
  REQUIRE(t.status == 0);
  for (const char* label : {"where the time goes", "tokenisation", "activation quantisation (int8)", "GEMM QKV",
                            "GEMM attention output", "GEMM FFN up (+ GELU)", "GEMM FFN down", "attention", "LayerNorm",
                            "pooling", "gelu: fused into gemm_ffn_up", "of the peak end to end"})
    CHECK_THAT(t.out, Contains(label));
  // A peak measured at other kernels is not used; no file says why there is no fraction.
  const std::string other_isa = write_scratch_file(
      "machine-limits-other.json", R"({"attend": {"isa": "not-)" + isa + R"(", "int8": {"gops_per_core": 100.0}}})");
  const json other = json::parse(run_attend({"bench", "-m", model, "--sentences", "4", "--src-len", "2:12", "--compute-type",
                                             "int8", "--json", "--machine-limits", other_isa})
                                     .out)["breakdown"]["peak"];
  CHECK(other["percent"].is_null());
  CHECK_THAT(other["why_not"].get<std::string>(), Contains("these run at " + isa));
  CHECK_THAT(run_attend({"bench", "-m", model, "--sentences", "4", "--src-len", "2:12"}).out,
             Contains("fraction of peak n/a: no --machine-limits"));
  // A file that is not machine_limits' JSON: exit 1, naming the flag and the file.
  const std::string bad = write_scratch_file("machine-limits-bad.json", "GFLOP/s: many\n");
  const auto b2 = run_attend({"bench", "-m", model, "--sentences", "4", "--machine-limits", bad});
  CHECK(b2.status == 1);
  CHECK_THAT(b2.err, Contains("--machine-limits " + bad));
}

}  // namespace
}  // namespace attend::test
