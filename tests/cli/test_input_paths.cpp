// Whatever way the input arrives — a file, a pipe, a producer that sends a few bytes at
// a time (cut mid-line, mid-character, mid-byte-order-mark), a second reader (target
// prefixes) — the output is the same: a function of the bytes and the flags alone. Two
// things used to depend on the way: seeded sampling (the random stream followed the
// chunks read) and a UTF-8 byte-order mark (kept as text).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <random>
#include <regex>

#include "cli_runner.hpp"

namespace attend::test {
namespace {

using Catch::Matchers::Contains;

const std::string kFixture = ATTEND_CLI_FIXTURE;
const std::string kModel = kFixture + "/model";  // SentencePiece text
const std::string kAren = std::string(ATTEND_TEST_DATA) + "/models/ct2-aren-transliteration";  // tokens
const std::string kBom = "\xEF\xBB\xBF";

// `lines` names of the transliteration model's letters, a few of them empty (the first
// included, and runs of them), so that the non-empty lines are not the lines.
std::string names_with_empty_lines(int lines) {
  const std::vector<std::string> letters = {"آ", "ت", "ز", "م", "و", "ن", "ش", "ي", "س", "ب", "ر", "ا", "ه"};
  std::mt19937 rng(11);
  std::string out;
  for (int i = 0; i < lines; ++i) {
    if (i == 0 || i % 13 == 5 || i % 29 == 6) {
      out += "\n";
      continue;
    }
    const int n = 2 + static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) out += (k ? " " : "") + letters[rng() % letters.size()];
    out += "\n";
  }
  return out;
}

// A shell command that writes `path`'s bytes cut at `cuts` (byte offsets), pausing
// between the pieces: a slow producer whose pieces end mid-line and mid-character.
std::string slow_writer(const std::string& path, std::vector<std::size_t> cuts, std::size_t size) {
  cuts.push_back(size);
  std::string command = "{ ";
  std::size_t from = 0;
  for (const std::size_t to : cuts) {
    command += "tail -c +" + std::to_string(from + 1) + " " + quote(path) + " | head -c " + std::to_string(to - from) +
               "; sleep 0.05; ";
    from = to;
  }
  return command + "}";
}

// The ways `attend translate` can be given `input`: each a shell command that ends in
// the CLI with `flags` (its own options, -i or stdin, added).
std::vector<std::pair<std::string, std::string>> input_ways(const std::string& input, const std::string& flags,
                                                            const std::string& name) {
  const std::string file = write_scratch_file(name, input);
  const std::string attend = quote(attend_path()) + " translate -q " + flags;
  // Cut inside the first bytes (a byte-order mark's), inside a character, and at odd places.
  std::vector<std::size_t> cuts;
  for (const std::size_t c : {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{97}, input.size() / 3,
                              input.size() / 2 + 1, input.size() - 2})
    if (c > (cuts.empty() ? 0 : cuts.back()) && c < input.size()) cuts.push_back(c);
  return {
      {"-i FILE", attend + " -i " + quote(file)},
      {"stdin from the file", attend + " < " + quote(file)},
      {"a pipe", "cat " + quote(file) + " | " + attend},
      {"a slow pipe, cut mid-line and mid-character", slow_writer(file, cuts, input.size()) + " | " + attend},
      {"-i FILE, batches of 3 on 2 threads", attend + " -i " + quote(file) + " --max-batch-size 3 --inter-threads 2 --intra-threads 1"},
  };
}

// Line for line, field by field (" ||| "): texts exactly, scores to 1e-5. A sentence's
// log-probabilities can differ in the last bit with the batch it is decoded in (the
// GEMM's thin tiles split k over more accumulators), which the sixth decimal of a score
// may show; the draws and texts do not move.
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  for (std::size_t from = 0;;) {
    const std::size_t at = line.find(" ||| ", from);
    fields.push_back(line.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) return fields;
    from = at + 5;
  }
}

void check_same_output(const std::string& got, const std::string& want) {
  const auto a = split_lines(got), b = split_lines(want);
  REQUIRE(a.size() == b.size());
  const std::regex score(R"(-?[0-9]+\.[0-9]{6})");
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("output line " << i + 1 << ": '" << a[i] << "' vs '" << b[i] << "'");
    const auto x = fields_of(a[i]), y = fields_of(b[i]);
    REQUIRE(x.size() == y.size());
    for (std::size_t f = 0; f < x.size(); ++f) {
      if (std::regex_match(x[f], score) && std::regex_match(y[f], score))
        CHECK(std::stod(x[f]) == Approx(std::stod(y[f])).margin(1e-5));
      else
        CHECK(x[f] == y[f]);
    }
  }
}

}  // namespace

TEST_CASE("translate: seeded sampling is the same for a file, a pipe, a slow producer and any batching", "[cli][input]") {
  const std::string input = names_with_empty_lines(150);  // more than the first chunk (64 lines)
  for (const std::string sampling : {"--sample-topk 10 --temperature 1.5 --seed 7",
                                     "--sampling --seed 3 --n-best 2 --scores --max-length 12"}) {
    const std::string flags = "-m " + quote(kAren) + " --input-format tokens " + sampling;
    const auto ways = input_ways(input, flags, "sampled-names.txt");
    const auto reference = run_shell(ways[0].second);
    REQUIRE(reference.status == 0);
    REQUIRE(!reference.out.empty());
    for (const auto& [way, command] : ways) {
      INFO(sampling << ", " << way);
      const auto r = run_shell(command);
      CHECK(r.status == 0);
      check_same_output(r.out, reference.out);
    }
    // A line's draws follow its line number, not its neighbours: the same lines with
    // others in between the empty ones draw the same where they stand.
    std::string fuller = input;
    for (std::size_t at = fuller.find("\n\n"); at != std::string::npos; at = fuller.find("\n\n", at + 3))
      fuller.replace(at, 2, "\nآ\n");
    const auto shifted = run_shell(input_ways(fuller, flags, "sampled-fuller.txt")[0].second);
    REQUIRE(shifted.status == 0);
    const auto a = split_lines(reference.out), b = split_lines(shifted.out);
    REQUIRE(a.size() == b.size());
    const auto in_lines = split_lines(input);
    const std::size_t per_line = a.size() / in_lines.size();
    std::string kept_a, kept_b;  // the lines that are the same input in both
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!in_lines[i / per_line].empty()) kept_a += a[i] + "\n", kept_b += b[i] + "\n";
    check_same_output(kept_a, kept_b);
  }
}

TEST_CASE("translate: a UTF-8 byte-order mark is dropped on every input path, text, tokens and ids", "[cli][input]") {
  struct Format {
    std::string flags, input;
  };
  const std::vector<Format> formats = {
      {"-m " + quote(kAren) + " --input-format tokens", "آ ت ز م و ن\nآ ت ش ي س و ن\n"},
      {"-m " + quote(kAren) + " --input-format ids --max-length 8", "5 6 7\n8 9\n"},
      {"-m " + quote(kModel) + " --max-length 12", "The quick brown fox.\nA small cat.\n"},
  };
  for (const Format& f : formats) {
    const auto plain = run_shell(input_ways(f.input, f.flags, "plain.txt")[0].second);
    REQUIRE(plain.status == 0);
    for (const auto& [way, command] : input_ways(kBom + f.input, f.flags, "with-bom.txt")) {
      INFO(f.flags << ", " << way);
      const auto r = run_shell(command);
      CHECK(r.status == 0);
      CHECK(r.out == plain.out);
      CHECK(r.err.empty());  // not a repaired or unknown character either
    }
  }
  // The target prefix file is read the same way; a mark only opens a stream (one inside
  // a line is the character U+FEFF, kept).
  const std::string input = write_scratch_file("bom-input.txt", "آ ت ز م و ن\nآ ت ز م و ن\n");
  const std::string prefixes = write_scratch_file("bom-prefixes.txt", kBom + "a t s\na t s\n");
  const auto prefixed = run_attend({"translate", "-m", kAren, "--input-format", "tokens", "-q", "-i", input,
                                    "--target-prefix-file", prefixes});
  CHECK(prefixed.status == 0);
  CHECK(prefixed.out == "a t s u m o n\na t s u m o n\n");
  const auto inside = run_attend({"translate", "-m", kAren, "--input-format", "tokens"}, "آ ت\n" + kBom + "آ ت\n");
  CHECK(inside.status == 0);
  CHECK_THAT(inside.err, Contains("line 2: 1 of 2 tokens are unknown"));  // line 2's mark is kept: a token the vocabulary lacks
}

// Every other command that reads text lines reads them as translate does (LineReader):
// the mark is dropped from a file and from standard input. Token ids show it — a kept
// mark makes the first id unreadable ('\uFEFF2' is not a token id); BERT's own text
// normalisation drops format characters, so the text paths would hide it.
TEST_CASE("embed, classify, tokenize and bench: a UTF-8 byte-order mark is dropped from their input", "[cli][input]") {
  const std::string encoders = std::string(ATTEND_TEST_DATA) + "/encoders";
  const std::string bert = encoders + "/bert", classifier = encoders + "/bert-classifier";
  const std::string ids = "2 7 9 3\n2 11 3\n", text = "hello world\nthe cat\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> commands = {
      {{"embed", "-m", bert, "--input-format", "ids", "--output-format", "tsv"}, ids},
      {{"embed", "-m", bert, "--output-format", "tsv"}, text},
      {{"classify", "-m", classifier, "--input-format", "ids"}, ids},
      {{"classify", "-m", classifier}, text},
      {{"tokenize", "-m", bert, "--output-format", "tokens"}, text},
  };
  for (const auto& [args, input] : commands) {
    std::vector<std::string> quiet = args;
    quiet.push_back("-q");
    const auto plain = run_attend(quiet, input);
    REQUIRE(plain.status == 0);
    const std::string file = write_scratch_file("bom-encoder-input.txt", kBom + input);
    std::vector<std::string> from_file = quiet;
    from_file.insert(from_file.end(), {"-i", file});
    for (const auto& [way, r] : {std::pair{"stdin", run_attend(quiet, kBom + input)}, std::pair{"-i FILE", run_attend(from_file)}}) {
      INFO(args[0] << " " << args[args.size() - 1] << ", " << way);
      CHECK(r.status == 0);
      CHECK(r.out == plain.out);
      CHECK(r.err.empty());
    }
  }
  // bench --input reads its workload the same way: the same sentences and tokens.
  auto workload = [&](const std::string& name, const std::string& contents) {
    const auto r = run_attend({"bench", "-m", bert, "--input", write_scratch_file(name, contents), "--input-format",
                               "ids", "--repeat", "1", "--json"});
    CHECK(r.status == 0);
    const auto j = nlohmann::json::parse(r.out)["workload"];
    return std::pair{j["sentences"].get<int>(), j["tokens"].get<int>()};
  };
  const auto plain = workload("bench-input.txt", ids);
  CHECK(plain.first == 2);
  CHECK(workload("bom-bench-input.txt", kBom + ids) == plain);
}

}  // namespace attend::test
