// End-to-end tests of the attend CLI: the binary run as a user runs it, on a small
// model with SentencePiece models trained by make_cli_fixture.sh (ctest fixture).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "attend/options.hpp"
#include "cli_runner.hpp"

namespace attend::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

const std::string kFixture = ATTEND_CLI_FIXTURE;
const std::string kModel = kFixture + "/model";                // source.spm + target.spm, max_positions 64
const std::string kSharedModel = kFixture + "/model-shared";  // vocab.spm
const std::string kModels = std::string(ATTEND_TEST_DATA) + "/models";  // the real CTranslate2 models, committed

std::string corpus_lines(std::size_t first, std::size_t count) {
  std::ifstream in(kFixture + "/corpus.txt");
  std::string out, line;
  for (std::size_t i = 0; i < first + count && std::getline(in, line); ++i)
    if (i >= first) out += line + "\n";
  return out;
}

std::vector<std::string> split_tokens_of(const std::string& line) {
  std::istringstream s(line);
  std::vector<std::string> out;
  for (std::string t; s >> t;) out.push_back(t);
  return out;
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// Translation of one line on its own (greedy, the given extra flags).
std::string translate_alone(const std::string& line, std::vector<std::string> flags = {}) {
  std::vector<std::string> args = {"translate", "-m", kModel, "--max-length", "12", "-q"};
  args.insert(args.end(), flags.begin(), flags.end());
  const auto r = run_attend(args, line + "\n");
  REQUIRE(r.status == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 1);
  return lines[0];
}

CommandResult translate(const std::string& input, std::vector<std::string> flags = {}) {
  std::vector<std::string> args = {"translate", "-m", kModel, "--max-length", "12"};
  args.insert(args.end(), flags.begin(), flags.end());
  return run_attend(args, input);
}

double summary_peak_rss(const std::string& err) {
  std::smatch m;
  const std::regex rss("peak RSS ([0-9.]+) MiB");
  REQUIRE(std::regex_search(err, m, rss));
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE("translate: text goes through SentencePiece exactly as spm_encode / ids / spm_decode", "[cli]") {
  const std::string input = corpus_lines(0, 20) + "Café über naïve straße smörgåsbord.\n";
  const auto text = translate(input, {"-q"});
  REQUIRE(text.status == 0);
  CHECK(text.err.empty());
  const auto text_lines = split_lines(text.out);
  REQUIRE(text_lines.size() == 21);

  // The same pipeline by hand: encode with the source model, add the EOS the model's
  // config asks for (add_source_eos), translate ids, decode with the target model.
  const auto encoded = run_shell("spm_encode --model=" + quote(kFixture + "/src.model") + " --output_format=id", input);
  REQUIRE(encoded.status == 0);
  std::string ids_input;
  for (const auto& l : split_lines(encoded.out)) ids_input += l + " 2\n";
  const auto ids = translate(ids_input, {"-q", "--input-format", "ids"});
  REQUIRE(ids.status == 0);
  REQUIRE(split_lines(ids.out).size() == 21);
  const auto decoded = run_shell("spm_decode --model=" + quote(kFixture + "/tgt.model") + " --input_format=id", ids.out);
  REQUIRE(decoded.status == 0);
  CHECK(split_lines(decoded.out) == text_lines);

  // tokens out: the target model's pieces of the same ids.
  const auto pieces = translate(input, {"-q", "--output-format", "tokens"});
  REQUIRE(pieces.status == 0);
  const auto pieces_decoded = run_shell("spm_decode --model=" + quote(kFixture + "/tgt.model") + " --input_format=piece", pieces.out);
  CHECK(split_lines(pieces_decoded.out) == text_lines);
}

TEST_CASE("translate: the default flags suit a model with only 64 positions", "[cli]") {
  const auto r = run_attend({"translate", "-m", kModel, "-q"}, corpus_lines(0, 3));
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(split_lines(r.out).size() == 3);
  const auto too_long = run_attend({"translate", "-m", kModel, "-q", "--max-length", "65"}, "hello\n");
  CHECK(too_long.status == 2);
  CHECK_THAT(too_long.err, Contains("--max-length 65: must be in [0, 64] (the model has 64 positions"));
}

TEST_CASE("translate: ids in, ids out, within the vocabulary and --max-length", "[cli]") {
  std::mt19937 rng(3);
  std::string input;
  for (int i = 0; i < 30; ++i) {
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) input += std::to_string(4 + rng() % 996) + (k + 1 < n ? " " : "\n");
  }
  const auto r = run_attend({"translate", "--preset", "tiny", "--input-format", "ids", "--max-length", "9", "-q"}, input);
  REQUIRE(r.status == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 30);
  for (const auto& line : lines) {
    std::istringstream s(line);
    int count = 0;
    for (long id; s >> id; ++count) CHECK((id >= 0 && id < 1000));
    CHECK(s.eof());
    CHECK((count >= 1 && count <= 9));
  }
}

TEST_CASE("translate: output keeps input order whatever the lengths and batching", "[cli]") {
  // Lines of very different lengths, shuffled, some repeated.
  std::vector<std::string> lines;
  const auto corpus = split_lines(corpus_lines(100, 60));
  for (std::size_t i = 0; i < corpus.size(); i += 3) {
    std::string joined = corpus[i];
    for (std::size_t k = 1; k <= i % 4; ++k) joined += " " + corpus[(i + k) % corpus.size()];
    lines.push_back(joined);
  }
  lines.push_back(lines[3]);
  lines.push_back(lines[0]);
  std::shuffle(lines.begin(), lines.end(), std::mt19937(5));
  std::string input;
  for (const auto& l : lines) input += l + "\n";

  const auto sorted = translate(input, {"-q"});
  const auto one_by_one = translate(input, {"-q", "--max-batch-size", "1"});
  const auto small = translate(input, {"-q", "--max-batch-size", "3", "--max-batch-tokens", "80"});
  REQUIRE(sorted.status == 0);
  REQUIRE(one_by_one.status == 0);
  REQUIRE(small.status == 0);
  const auto out = split_lines(sorted.out);
  REQUIRE(out.size() == lines.size());
  CHECK(split_lines(one_by_one.out) == out);
  CHECK(split_lines(small.out) == out);
  for (std::size_t i = 0; i < lines.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (lines[i] == lines[j]) CHECK(out[i] == out[j]);
  CHECK(out[2] == translate_alone(lines[2]));
}

TEST_CASE("translate: empty and blank lines give empty outputs, no line is dropped", "[cli]") {
  const auto r = translate("\nThe quick fox.\n   \nA small cat.\n\nThe end", {"-q"});  // no final newline
  REQUIRE(r.status == 0);
  const auto out = split_lines(r.out);
  REQUIRE(out.size() == 6);
  CHECK(out[0].empty());
  CHECK(out[2].empty());
  CHECK(out[4].empty());
  CHECK(out[1] == translate_alone("The quick fox."));
  CHECK(out[3] == translate_alone("A small cat."));
  CHECK(out[5] == translate_alone("The end"));

  const auto nbest = translate("\nThe quick fox.\n", {"-q", "--beam", "2", "--n-best", "2"});
  REQUIRE(nbest.status == 0);
  const auto n = split_lines(nbest.out);
  REQUIRE(n.size() == 4);
  CHECK(n[0] == "0 |||  ||| 0.000000");
  CHECK(n[1] == "0 |||  ||| 0.000000");
  CHECK(n[2].rfind("1 ||| ", 0) == 0);

  const auto summary = translate("\n\nThe fox.\n");
  REQUIRE(summary.status == 0);
  CHECK_THAT(summary.err, Contains("3 lines (2 empty)"));
}

TEST_CASE("translate: over-long lines are truncated with one warning, or rejected with --strict", "[cli]") {
  std::string long_ids, prefix_ids;
  for (int i = 0; i < 100; ++i) long_ids += std::to_string(10 + i) + (i < 99 ? " " : "");
  for (int i = 0; i < 64; ++i) prefix_ids += std::to_string(10 + i) + (i < 63 ? " " : "");
  const std::string input = "5 6 7\n" + long_ids + "\n8 9\n" + long_ids + "\n";

  const auto r = translate(input, {"--input-format", "ids"});
  REQUIRE(r.status == 0);
  const auto out = split_lines(r.out);
  REQUIRE(out.size() == 4);
  CHECK(count(r.err, "truncated") == 1);
  CHECK_THAT(r.err, Contains("2 line(s) longer than the model's limit of 64 source tokens were truncated to it, 72 "
                             "source tokens dropped (first: line 2"));
  CHECK(out[1] == translate_alone(prefix_ids, {"--input-format", "ids"}));  // exactly the first 64 ids
  CHECK(out[3] == out[1]);

  // Text: the truncated source keeps the model's end-of-sequence (add_source_eos).
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "The quick brown fox. ";
  const auto t = translate(long_text + "\n", {"-q"});
  REQUIRE(t.status == 0);
  CHECK(split_lines(t.out).size() == 1);
  CHECK_THAT(t.err, Contains("truncated"));

  const auto strict = translate(input, {"--input-format", "ids", "--strict"});
  CHECK(strict.status == 1);
  CHECK_THAT(strict.err, Contains("line 2: 100 source tokens, more than the model's limit of 64 source tokens"));
}

TEST_CASE("translate: invalid UTF-8 is replaced with a warning naming the line, or an error with --strict", "[cli]") {
  const std::string input = "The fox.\nBad \xff\xfe byte.\nA cat.\nAlso \xc3(\n";
  const auto r = translate(input);
  REQUIRE(r.status == 0);
  const auto out = split_lines(r.out);
  REQUIRE(out.size() == 4);
  CHECK_THAT(r.err, Contains("line 2: invalid UTF-8 at byte 5 (replaced with U+FFFD)"));
  CHECK_THAT(r.err, Contains("line 4: invalid UTF-8 at byte 6"));
  CHECK(out[1] == translate_alone("Bad \xEF\xBF\xBD\xEF\xBF\xBD byte."));
  CHECK(out[2] == translate_alone("A cat."));

  const auto strict = translate(input, {"--strict"});
  CHECK(strict.status == 1);
  CHECK_THAT(strict.err, Contains("line 2: invalid UTF-8 at byte 5"));
  CHECK(split_lines(strict.out).size() == 1);  // what came before the bad line is out

  // Ids: whatever is not an id of the vocabulary is read as <unk> (tests/cli/test_input_lines.cpp has the rest).
  const auto range = run_attend({"translate", "--preset", "tiny", "--input-format", "ids", "--max-length", "3"}, "5 1000 7\n-1\n");
  CHECK(range.status == 0);
  CHECK(split_lines(range.out).size() == 2);
  CHECK_THAT(range.err, Contains("line 1: '1000' is not an id of the source vocabulary [0, 1000) (read as <unk>"));
  CHECK_THAT(range.err, Contains("line 2: '-1' is not an id"));
  CHECK(run_attend({"translate", "--preset", "tiny", "--input-format", "ids", "--strict"}, "5 1000 7\n").status == 1);
}

TEST_CASE("translate: missing models, tokenizers and files are named", "[cli]") {
  const auto no_model = run_attend({"translate", "-m", "/nonexistent/model-dir"}, "x\n");
  CHECK(no_model.status == 1);
  CHECK_THAT(no_model.err, Contains("/nonexistent/model-dir"));

  const fs::path half = fs::path(scratch_directory()) / "half-model";
  fs::create_directories(half);
  for (const char* f : {"config.json", "model.safetensors", "source.spm"})
    fs::copy_file(fs::path(kModel) / f, half / f, fs::copy_options::overwrite_existing);
  const auto no_target = run_attend({"translate", "-m", half.string()}, "x\n");
  CHECK(no_target.status == 1);
  CHECK_THAT(no_target.err, Contains((half / "target.spm").string()));

  const auto no_input = run_attend({"translate", "-m", kModel, "-i", "/nonexistent/input.txt"});
  CHECK(no_input.status == 1);
  CHECK_THAT(no_input.err, Contains("cannot open the input /nonexistent/input.txt"));

  const auto no_tokenizer = run_attend({"translate", "--preset", "tiny"}, "hello\n");
  CHECK(no_tokenizer.status == 1);
  CHECK_THAT(no_tokenizer.err, Contains("--input-format ids"));

  const auto no_prefixes = run_attend({"translate", "-m", kModel, "--target-prefix-file", "/nonexistent/prefixes"}, "x\n");
  CHECK(no_prefixes.status == 1);
  CHECK_THAT(no_prefixes.err, Contains("/nonexistent/prefixes"));
}

TEST_CASE("CLI: bad flags get a clear message and exit status 2", "[cli]") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "A subcommand is required"},
      {{"translate", "-m", kModel, "--frobnicate"}, "--frobnicate"},
      {{"translate", "-m", kModel, "--beam", "0"}, "--beam: must be an integer in [1, 256], got 0"},
      {{"translate", "-m", kModel, "--max-batch-size", "2x"}, "--max-batch-size: '2x' is not an integer in [1, 65536]"},
      {{"translate", "-m", kModel, "--beam", "2", "--n-best", "3"}, "--n-best 3: must be ≤ --beam × --patience = 2"},
      {{"translate", "-m", kModel, "--beam", "2", "--sample-topk", "5"}, "exclude each other"},
      {{"translate", "-m", kModel, "--input-format", "xml"}, "--input-format"},
      {{"translate", "-m", kModel, "--preset", "tiny"}, "excludes"},
      {{"translate"}, "give a model"},
      {{"bench", "--preset", "huge"}, "--preset"},
      {{"bench", "--preset", "tiny", "--src-len", "9:3"}, "--src-len 9:3"},
      {{"bench", "--preset", "tiny", "--src-len", "ten"}, "--src-len ten"},
      {{"bench", "--threads", "-1"}, "--threads: must be an integer in [0, 4096], got -1"},
      {{"plan", "--preset", "tiny", "--max-batch", "many"}, "--max-batch"},
      {{"convert", "only-one-directory"}, "output"},
  };
  for (const auto& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    INFO("attend " << joined);
    const auto r = run_attend(c.args, "");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains(c.message));
    CHECK(r.out.empty());
  }
  CHECK(run_attend({"--help"}).status == 0);
  const auto version = run_attend({"--version"});
  CHECK(version.status == 0);
  CHECK_THAT(version.out, Contains("attend 0."));
}

// Every decoding flag comes from the one description of the options (attend/options.h):
// each bound is tried just outside, and a bad value is a usage error (exit 2) naming the
// flag and the range it accepts.
TEST_CASE("translate: every decoding flag's bounds — exit 2 naming the flag and the range", "[cli]") {
  int tried = 0;
  for (const attend::OptionSpec& spec : attend::kTranslationOptionSpecs) {
    if (spec.flag.empty() || spec.kind == attend::OptionSpec::Kind::flag) continue;
    const std::string flag(spec.flag);
    const bool integer = spec.kind == attend::OptionSpec::Kind::integer;
    std::vector<std::string> outside = {"x"};
    auto number = [&](double v) {
      std::ostringstream s;
      s << v;
      return s.str();
    };
    if (spec.lowest > -ATTEND_UNBOUNDED) outside.push_back(number(integer || spec.lowest_open ? spec.lowest - (integer ? 1 : 0) : spec.lowest - 0.5));
    if (spec.highest < ATTEND_UNBOUNDED) outside.push_back(number(integer || spec.highest_open ? spec.highest + (integer ? 1 : 0) : spec.highest + 0.5));
    if (!integer) outside.push_back("inf"), outside.push_back("nan");
    for (const std::string& value : outside) {
      INFO(flag << " " << value);
      const auto r = run_attend({"translate", "-m", kModel, "-q", flag, value}, "hello\n");
      CHECK(r.status == 2);
      CHECK_THAT(r.err, Contains(flag) && Contains(spec.range()));
      CHECK(r.out.empty());
      ++tried;
    }
  }
  CHECK(tried >= 40);

  // Limits that depend on other flags or on the model, found after parsing: the same terms.
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--min-length", "30", "--max-length", "20"}, "--min-length 30: must be ≤ --max-length (20)"},
      {{"--min-length", "65"}, "--min-length 65: must be ≤ --max-length (64)"},
      {{"--max-length", "100"}, "--max-length 100: must be in [0, 64] (the model has 64 positions"},
      {{"--n-best", "3"}, "--n-best 3: must be ≤ --beam × --patience = 1 (greedy search)"},
      {{"--beam", "4", "--patience", "0.5", "--n-best", "3"}, "--n-best 3: must be ≤ --beam × --patience = 2"},
      {{"--end-token", "no-such-piece"}, "--end-token 'no-such-piece': not a token of the target vocabulary"},
      {{"--suppress-sequences", "</s> no-such-piece"}, "--suppress-sequences 'no-such-piece': not a token of the target vocabulary"},
      {{"--prefix-bias-beta", "0.5", "--sampling"}, "--prefix-bias-beta 0.5: biased decoding is a beam search"},
      {{"--prefix-bias-beta", "0.5", "--return-alternatives"}, "not compatible with --return-alternatives"},
      {{"--replace-unknowns", "--output-format", "ids"}, "--replace-unknowns writes source tokens"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"translate", "-m", kModel, "-q"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    INFO(c.message);
    const auto r = run_attend(args, "hello\n");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains(c.message));
    CHECK(r.out.empty());
  }
  // Values at the bounds are accepted.
  for (const std::vector<std::string>& ok : std::vector<std::vector<std::string>>{
           {"--beam", "4", "--patience", "2", "--n-best", "8"}, {"--temperature", "0"}, {"--sample-topp", "1"},
           {"--prefix-bias-beta", "0"}, {"--max-input-length", "0"}, {"--min-length", "0"},
           {"--min-alternative-expansion-prob", "1", "--return-alternatives"}}) {
    std::vector<std::string> args = {"translate", "-m", kModel, "-q", "--max-length", "6"};
    args.insert(args.end(), ok.begin(), ok.end());
    INFO(ok[0]);
    CHECK(run_attend(args, "hello\n").status == 0);
  }
}

TEST_CASE("translate: CTranslate2's decoding flags change the output as documented", "[cli]") {
  std::string line = corpus_lines(0, 1);
  line.pop_back();  // its newline
  const std::string plain = translate_alone(line, {"--output-format", "tokens"});
  const auto tokens = split_tokens_of(plain);
  REQUIRE(tokens.size() >= 2);
  // --end-token: the first generated token ends the output (and is left out of it) —
  // once --min-length 0 allows an end token first (the default 1, as CTranslate2's, does not).
  CHECK(translate_alone(line, {"--output-format", "tokens", "--min-length", "0", "--end-token", tokens[0]}).empty());
  CHECK(translate_alone(line, {"--output-format", "tokens", "--min-length", "0", "--end-token", tokens[0], "--return-end-token"}) ==
        tokens[0]);
  CHECK(split_tokens_of(translate_alone(line, {"--output-format", "tokens", "--end-token", tokens[0]})).at(0) != tokens[0]);
  // --suppress-sequences with one token: it never appears.
  const auto suppressed = split_tokens_of(translate_alone(line, {"--output-format", "tokens", "--suppress-sequences", tokens[0]}));
  CHECK(std::find(suppressed.begin(), suppressed.end(), tokens[0]) == suppressed.end());
  // --no-repeat-ngram-size 1: no token twice.
  auto once = split_tokens_of(translate_alone(line, {"--output-format", "tokens", "--no-repeat-ngram-size", "1"}));
  std::sort(once.begin(), once.end());
  CHECK(std::adjacent_find(once.begin(), once.end()) == once.end());
  // --return-alternatives --n-best 3: three outputs that differ in their first token.
  const auto alternatives = translate(line, {"-q", "--return-alternatives", "--n-best", "3", "--output-format", "tokens"});
  REQUIRE(alternatives.status == 0);
  const auto lines = split_lines(alternatives.out);
  REQUIRE(lines.size() == 3);
  std::set<std::string> first_tokens;
  for (const auto& l : lines) first_tokens.insert(split_tokens_of(l.substr(l.find("||| ") + 4)).at(0));
  CHECK(first_tokens.size() == 3);
  // --replace-unknowns: a forced <unk> becomes a source token.
  const std::string source_tokens = "▁The ▁quick ▁fox .";
  const auto replaced = run_attend({"translate", "-m", kModel, "-q", "--max-length", "4", "--input-format", "tokens",
                                    "--target-prefix", "<unk>", "--replace-unknowns"},
                                   source_tokens + "\n");
  REQUIRE(replaced.status == 0);
  const auto first = split_tokens_of(replaced.out).at(0);
  const auto given = split_tokens_of(source_tokens);
  CHECK(std::find(given.begin(), given.end(), first) != given.end());
}

TEST_CASE("translate --attention: one JSON line per input line, drawn by tools/plot_attention.py", "[cli]") {
  const std::string file = scratch_directory() + "/attention.jsonl";
  const auto r = translate(corpus_lines(0, 2) + "\n" + corpus_lines(2, 1), {"-q", "--beam", "2", "--attention", file});
  REQUIRE(r.status == 0);
  const auto lines = split_lines(read_file(file));
  REQUIRE(lines.size() == 4);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    INFO("line " << i);
    const auto j = nlohmann::json::parse(lines[i]);
    CHECK(j["line"] == i);
    const auto source = j["source"].get<std::vector<std::string>>();
    const auto target = j["target"].get<std::vector<std::string>>();
    const auto attention = j["attention"].get<std::vector<std::vector<double>>>();
    if (i == 2) {  // the empty input line
      CHECK(source.empty());
      CHECK(attention.empty());
      continue;
    }
    CHECK(source.back() == "</s>");  // the model adds EOS to sources: the encoder saw it
    REQUIRE(attention.size() == target.size());
    REQUIRE(!attention.empty());
    for (const auto& row : attention) {
      REQUIRE(row.size() == source.size());
      double total = 0;
      for (double a : row) {
        CHECK((a >= 0 && a <= 1));
        total += a;
      }
      CHECK(total == Approx(1.0).margin(1e-4));  // a distribution over the source positions
    }
  }
  const std::string png = scratch_directory() + "/attention.png";
  const auto plot = run_shell("/usr/bin/python3 " + quote(std::string(ATTEND_SOURCE_DIR) + "/tools/plot_attention.py") + " " +
                              quote(file) + " --line 1 -o " + quote(png));
  INFO(plot.err);
  REQUIRE(plot.status == 0);
  CHECK(read_file(png).substr(0, 8) == "\x89PNG\r\n\x1a\n");
  CHECK(read_file(png).size() > 5000);
}

TEST_CASE("bench --json: one JSON object with every figure", "[cli]") {
  // One batch at a time: each batch's latency is measured (the chosen split may overlap
  // batches, below).
  const auto r = run_attend({"bench", "--preset", "tiny", "--sentences", "6", "--batch", "4", "--tgt-len", "5",
                             "--inter-threads", "1", "--json"});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);  // throws (fails the test) unless the output is exactly one object
  REQUIRE(j.is_object());
  for (const char* key : {"generated_tokens_per_second", "source_tokens_per_second", "sentences_per_second", "seconds",
                          "peak_rss_mib", "load_seconds", "arena_mib"}) {
    INFO(key);
    REQUIRE(j.contains(key));
    CHECK(j[key].is_number());
    CHECK(j[key].get<double>() > 0);
  }
  // Resident memory on 2 MiB pages: how much depends on the kernel (THP "never": none).
  REQUIRE(j["huge_page_rss_mib"].is_number());
  CHECK(j["huge_page_rss_mib"].get<double>() >= 0);
  CHECK(j["huge_page_rss_mib"].get<double>() <= j["peak_rss_mib"].get<double>());
  const std::string thp = j["transparent_huge_pages"].get<std::string>();
  CHECK((thp == "always" || thp == "madvise" || thp == "never" || thp.empty()));
  CHECK(j["generated_tokens"] == 6 * 5);
  CHECK(j["workload"]["sentences"] == 6);
  CHECK(j["workload"]["batches_per_pass"] == 2);
  CHECK(j["threads"].get<int>() >= 1);
  CHECK(j["model"] == "preset tiny (seed 1)");
  const auto& lat = j["batch_latency_ms"];
  CHECK(lat["p50"].get<double>() <= lat["p90"].get<double>());
  CHECK(lat["p90"].get<double>() <= lat["p99"].get<double>());
  REQUIRE(j["time_by_step"].is_array());
  REQUIRE(j["time_by_step"].size() > 5);
  double percent = 0;
  bool has_gemm = false;
  for (const auto& s : j["time_by_step"]) {
    for (const char* key : {"phase", "kind", "name"}) CHECK(s[key].is_string());
    percent += s["percent"].get<double>();
    has_gemm = has_gemm || s["kind"] == "gemm";
  }
  CHECK(has_gemm);
  CHECK(percent == Approx(100).margin(1));

  const auto text = run_attend({"bench", "--preset", "tiny", "--sentences", "4", "--tgt-len", "3", "--inter-threads", "1"});
  REQUIRE(text.status == 0);
  for (const char* what : {"generated tokens/s", "source tokens/s", "sentences/s", "p50", "p90", "p99", "peak RSS",
                           "on 2 MiB pages", "transparent huge pages:", "time by plan step"})
    CHECK_THAT(text.out, Contains(what));
  // Two batches side by side: no per-batch latency, and the output says why.
  const auto overlapped = run_attend({"bench", "--preset", "tiny", "--sentences", "8", "--batch", "4", "--tgt-len", "3",
                                      "--inter-threads", "2", "--intra-threads", "1"});
  REQUIRE(overlapped.status == 0);
  CHECK_THAT(overlapped.out, Contains("2 batches overlapped"));

  // A real input file (text through the fixture's tokenizer).
  const std::string file = write_scratch_file("bench-input.txt", corpus_lines(0, 10));
  const auto real = run_attend({"bench", "-m", kModel, "--input", file, "--tgt-len", "4", "--json"});
  REQUIRE(real.status == 0);
  const auto rj = nlohmann::json::parse(real.out);
  CHECK(rj["workload"]["sentences"] == 10);
  CHECK(rj["generated_tokens"] == 40);
}

TEST_CASE("inspect and plan describe the model", "[cli]") {
  const auto j = run_attend({"inspect", "-m", kModel, "--json"});
  REQUIRE(j.status == 0);
  const auto info = nlohmann::json::parse(j.out);
  CHECK(info["parameters"].get<long>() > 0);
  CHECK(info["config"]["max_positions"] == 64);
  CHECK(info["tensors"].size() > 10);
  CHECK(info["checks"].size() >= 3);
  CHECK_THAT(info["text_tokenizer"].get<std::string>(), Contains("source.spm"));

  const auto text = run_attend({"inspect", "-m", kModel});
  REQUIRE(text.status == 0);
  for (const char* what : {"parameters:", "file size:", "tensors (", "checked when loading", "encoder.layers.0"})
    CHECK_THAT(text.out, Contains(what));

  const auto plan = run_attend({"plan", "--preset", "tiny", "--max-batch", "4", "--max-src-len", "20", "--beam", "2"});
  REQUIRE(plan.status == 0);
  for (const char* what : {"arena:", "liveness sharing", "encoder phase", "decoder phase", "limits: batch 4, source ≤ 20"})
    CHECK_THAT(plan.out, Contains(what));
}

TEST_CASE("translate: n-best, scores, target prefixes, sampling and files", "[cli]") {
  const std::string input = corpus_lines(200, 5);
  const auto nbest = translate(input, {"-q", "--beam", "3", "--n-best", "3"});
  REQUIRE(nbest.status == 0);
  const auto lines = split_lines(nbest.out);
  REQUIRE(lines.size() == 15);
  const std::regex format(R"((\d+) \|\|\| (.*) \|\|\| (-?[0-9]+\.[0-9]+))");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    INFO(lines[i]);
    REQUIRE(std::regex_match(lines[i], m, format));
    CHECK(std::stoul(m[1]) == i / 3);
    if (i % 3 > 0) {
      std::smatch previous;
      std::regex_match(lines[i - 1], previous, format);
      CHECK(std::stod(m[3]) <= std::stod(previous[3]));  // best first
    }
  }

  const auto scored = translate(input, {"-q", "--scores"});
  REQUIRE(scored.status == 0);
  for (const auto& l : split_lines(scored.out)) CHECK(std::regex_match(l, std::regex(R"(-[0-9]+\.[0-9]+ \|\|\| .*)")));

  // Forced prefixes come out first (the target SentencePiece model is upper case).
  const auto prefixed = translate(input, {"-q", "--target-prefix", "THE QUICK"});
  REQUIRE(prefixed.status == 0);
  for (const auto& l : split_lines(prefixed.out)) CHECK(l.rfind("THE QUICK", 0) == 0);
  const std::string prefixes = write_scratch_file("prefixes.txt", "A\n\nRED FOX\nTHE\nOVER\n");
  const auto per_line = translate(input, {"-q", "--target-prefix-file", prefixes});
  REQUIRE(per_line.status == 0);
  const auto p = split_lines(per_line.out);
  REQUIRE(p.size() == 5);
  CHECK(p[0].rfind("A", 0) == 0);
  CHECK(p[2].rfind("RED FOX", 0) == 0);
  CHECK(p[4].rfind("OVER", 0) == 0);
  const std::string short_prefixes = write_scratch_file("short-prefixes.txt", "A\n");
  const auto mismatch = translate(input, {"-q", "--target-prefix-file", short_prefixes});
  CHECK(mismatch.status == 1);
  CHECK_THAT(mismatch.err, Contains("ends at line 1: input line 2 has no target prefix"));
  CHECK(split_lines(mismatch.out).size() == 1);  // the line that had its prefix

  // Sampling: reproducible with a seed.
  const auto s1 = translate(input, {"-q", "--sample-topk", "20", "--seed", "5"});
  const auto s2 = translate(input, {"-q", "--sample-topk", "20", "--seed", "5"});
  const auto s3 = translate(input, {"-q", "--sample-topk", "20", "--seed", "6"});
  REQUIRE(s1.status == 0);
  CHECK(s1.out == s2.out);
  CHECK(s1.out != s3.out);

  // Files instead of stdin/stdout.
  const std::string in_file = write_scratch_file("in.txt", input);
  const std::string out_file = scratch_directory() + "/out.txt";
  const auto files = run_attend({"translate", "-m", kModel, "--max-length", "12", "-q", "-i", in_file, "-o", out_file});
  REQUIRE(files.status == 0);
  CHECK(files.out.empty());
  CHECK(read_file(out_file) == translate(input, {"-q"}).out);
}

TEST_CASE("translate: progress bar only on a terminal, summary unless --quiet", "[cli]") {
  const std::string input = corpus_lines(0, 20);
  const auto piped = translate(input);
  REQUIRE(piped.status == 0);
  CHECK(piped.err.find('\r') == std::string::npos);
  CHECK(count(piped.err, "\n") == 1);  // the summary only
  CHECK_THAT(piped.err, Contains("attend translate: 20 lines (0 empty)"));
  const auto quiet = translate(input, {"-q"});
  CHECK(quiet.err.empty());

  // On a terminal (script(1) gives the command a pseudo-terminal): the progress line,
  // with the total since the input is a regular file.
  const std::string in_file = write_scratch_file("progress-in.txt", input);
  const std::string command = quote(attend_path()) + " translate -m " + quote(kModel) + " --max-length 12 -i " +
                              quote(in_file) + " -o " + quote(scratch_directory() + "/progress-out.txt");
  const auto tty = run_shell("script -qec " + quote(command) + " /dev/null");
  REQUIRE(tty.status == 0);
  CHECK_THAT(tty.out, Contains("\r"));
  CHECK_THAT(tty.out, Contains("/20 lines"));
  CHECK_THAT(tty.out, Contains("tok/s"));
}

TEST_CASE("translate: streams — the first lines of an endless input come out at once", "[cli]") {
  const auto start = std::chrono::steady_clock::now();
  const auto head = run_shell("yes '5 6 7 8' | timeout 120 " + quote(attend_path()) +
                              " translate --preset tiny --input-format ids --max-length 3 -q | head -n 3");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(split_lines(head.out).size() == 3);
  CHECK(seconds < 60);
}

// Excluded from sanitizer builds (tests/CMakeLists.txt): ASan's quarantine and shadow
// memory make RSS meaningless there, and 100k lines take minutes.
TEST_CASE("translate: memory stays flat however long the input", "[cli][memory]") {
  // Peak RSS after 100k lines is that after 4k: chunks, not the whole file.
  auto peak_for = [](int lines) {
    const auto r = run_shell("yes '5 6 7 8 9 10' | head -n " + std::to_string(lines) + " | " + quote(attend_path()) +
                             " translate --preset tiny --input-format ids --max-length 1 > /dev/null");
    REQUIRE(r.status == 0);
    return summary_peak_rss(r.err);
  };
  const double small = peak_for(4000), large = peak_for(100000);
  INFO("peak RSS " << small << " MiB for 4k lines, " << large << " MiB for 100k lines");
  CHECK(large < small + 8);
}

TEST_CASE("translate: the real CTranslate2 model, tokens in and out", "[cli]") {
  const std::string model = kModels + "/ct2-aren-transliteration";
  const std::string input = "آ ت ز م و ن\nآ ت ش ي س و ن\n";
  const auto r = run_attend({"translate", "-m", model, "--input-format", "tokens", "-q"}, input);
  REQUIRE(r.status == 0);
  CHECK(r.out == "a t z m o n\na c h i s o n\n");
  const auto beam = run_attend({"translate", "-m", model, "--input-format", "tokens", "--beam", "4", "-q"}, input);
  CHECK(beam.out == "a t z m o n\na c h i s o n\n");
  const auto prefixed = run_attend({"translate", "-m", model, "--input-format", "tokens", "--target-prefix", "a t s", "-q"},
                                   "آ ت ز م و ن\n");
  CHECK(prefixed.out == "a t s u m o n\n");
  for (const char* variant : {"-int8", "-int16"}) {
    const auto q = run_attend({"translate", "-m", model + variant, "--input-format", "tokens", "-q"}, input);
    CHECK(q.out == r.out);
  }

  // attend convert, then the converted model gives the same output.
  const std::string converted = scratch_directory() + "/converted";
  const auto conv = run_attend({"convert", model + "-int8", converted});
  REQUIRE(conv.status == 0);
  CHECK_THAT(conv.out, Contains("→"));
  const auto again = run_attend({"translate", "-m", converted, "--input-format", "tokens", "-q"}, input);
  CHECK(again.out == r.out);
  const auto twice = run_attend({"convert", converted, scratch_directory() + "/converted-twice"});
  CHECK(twice.status == 1);
  CHECK_THAT(twice.err, Contains("already in attend's format"));
}

}  // namespace attend::test
