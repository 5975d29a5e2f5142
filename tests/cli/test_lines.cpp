// One output line per input line, always: whatever the input holds, whatever the mode,
// whatever the model produces — and every problem with a line named by its number.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_runner.hpp"

namespace attend::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

const std::string kFixture = ATTEND_CLI_FIXTURE;
const std::string kModel = kFixture + "/model";                 // target.spm: 120 pieces, EOS id 2
const std::string kBytesModel = kFixture + "/model-bytes";      // target.spm with byte fallback
const std::string kOverflowModel = kFixture + "/model-overflow";// NaN logits
const std::string kLateOverflowModel = kFixture + "/model-late-overflow";  // NaN logits from the second step on
const std::string kCt2Model = std::string(ATTEND_TEST_DATA) + "/models/ct2-aren-transliteration";

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Inputs a hostile user sends: every one must give exactly one output line.
std::vector<std::string> nasty_lines() {
  std::string long_line;
  for (int i = 0; i < 60; ++i) long_line += "the quick brown fox ";
  return {"The quick brown fox.", "", "   ", "\xC2\xA0\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\x8B", "Bad \xff\xfe bytes.",
          "a\rb in the middle", "\x01\x02\x7f", std::string("nul \0 byte", 10), "日本語のテキスト", long_line,
          "A small cat.", "\t"};
}

// "attend ARG ARG …", for a failure's message.
std::string command_line(const std::vector<std::string>& args) {
  std::string out = "attend";
  for (const auto& a : args) out += " " + a;
  return out;
}

std::size_t count_of(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("translate: one output line per input line (N with --n-best N), in every mode, whatever the input", "[cli][lines]") {
  const std::vector<std::string> inputs = nasty_lines();
  const std::string input = join_lines(inputs);
  struct Mode {
    std::vector<std::string> flags;
    std::size_t per_line = 1;
  };
  const std::vector<Mode> modes = {
      {{"--max-length", "8"}},
      {{"--max-length", "8", "--beam", "3"}},
      {{"--max-length", "8", "--beam", "3", "--n-best", "3"}, 3},
      {{"--max-length", "8", "--sample-topk", "5", "--seed", "3"}},
      {{"--max-length", "8", "--scores"}},
      {{"--max-length", "8", "--beam", "2", "--n-best", "2", "--scores"}, 2},
      {{"--max-length", "1", "--beam", "64", "--n-best", "64"}, 64},  // more hypotheses than the search finds
      {{"--max-length", "8", "--output-format", "tokens"}},
      {{"--max-length", "8", "--output-format", "ids", "--beam", "2"}},
      {{"--max-length", "8", "--max-batch-size", "1"}},
  };
  for (const std::string& model : {kModel, kBytesModel, kOverflowModel})
    for (const Mode& mode : modes) {
      std::vector<std::string> args = {"translate", "-m", model, "-q"};
      args.insert(args.end(), mode.flags.begin(), mode.flags.end());
      INFO(command_line(args));
      const auto r = run_attend(args, input);
      CHECK(r.status == 0);
      const auto lines = split_lines(r.out);
      REQUIRE(lines.size() == inputs.size() * mode.per_line);
      CHECK(r.out.back() == '\n');
      if (mode.per_line > 1)
        for (std::size_t i = 0; i < lines.size(); ++i) CHECK(lines[i].rfind(std::to_string(i / mode.per_line) + " ||| ", 0) == 0);
    }
}

TEST_CASE("translate: a target prefix of only end-of-sequence still gives its line", "[cli][lines]") {
  const std::string input = "5 6 7\n8 9\n";
  for (const std::string beam : {"1", "2", "4"})
    for (const std::string min_length : {"0", "1"}) {
      INFO("beam " << beam << ", min length " << min_length);
      const auto r = run_attend({"translate", "-m", kModel, "--input-format", "ids", "--beam", beam, "--n-best", beam,
                                 "--min-length", min_length, "--target-prefix", "2", "-q"},
                                input);
      CHECK(r.status == 0);
      CHECK(split_lines(r.out).size() == 2 * std::stoul(beam));
    }
}

TEST_CASE("translate: decoded line breaks and control characters are escaped, never split a line", "[cli][lines]") {
  // Byte fallback: the target piece <0x0A> decodes to a newline. Forced by a prefix.
  const auto vocab = run_shell("spm_export_vocab --model=" + quote(kBytesModel + "/target.spm"));
  REQUIRE(vocab.status == 0);
  const auto pieces = split_lines(vocab.out);
  auto id_of = [&](const std::string& piece) {
    for (std::size_t i = 0; i < pieces.size(); ++i)
      if (pieces[i].substr(0, pieces[i].find('\t')) == piece) return std::to_string(i);
    FAIL("no piece " << piece);
    return std::string();
  };
  const std::string prefix = id_of("<0x0A>") + " " + id_of("<0x0D>") + " " + id_of("<0x01>") + " " + id_of("<0x0A>");
  std::string input;
  for (int i = 0; i < 50; ++i) input += "5 6 7\n";
  const auto r = run_attend({"translate", "-m", kBytesModel, "--input-format", "ids", "--output-format", "text",
                             "--target-prefix", prefix, "--max-length", "6", "-q"},
                            input);
  REQUIRE(r.status == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 50);
  for (const auto& l : lines) CHECK(l.rfind("\\n\\r\\x01\\n", 0) == 0);

  // A JSON vocabulary whose tokens hold line breaks (CTranslate2 vocabularies can).
  const fs::path dir = fs::path(scratch_directory()) / "json-vocabulary-model";
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors", "source.spm", "target.spm"})
    fs::copy_file(fs::path(kModel) / f, dir / f, fs::copy_options::overwrite_existing);
  nlohmann::json source = nlohmann::json::array(), target = nlohmann::json::array();
  for (int i = 0; i < 150; ++i) source.push_back(i == 0 ? std::string("<unk>") : std::string("s").append(std::to_string(i)));
  for (int i = 0; i < 120; ++i) target.push_back(i == 0 ? std::string("<unk>") : std::string("t").append(std::to_string(i)));
  target[5] = "a\nb", target[6] = "c\r\nd", target[7] = "e\u2028f", target[8] = std::string("g\x1bh");
  std::ofstream(dir / "source_vocabulary.json") << source.dump();
  std::ofstream(dir / "target_vocabulary.json") << target.dump();
  // Tokens in, tokens out: the prefix token "a\nb" itself (a token may hold a newline).
  const auto tokens = run_attend({"translate", "-m", dir.string(), "--input-format", "tokens", "--target-prefix", "a\nb",
                                  "--max-length", "5", "-q"},
                                 "s5 s6\ns7\n");
  REQUIRE(tokens.status == 0);
  const auto token_lines = split_lines(tokens.out);
  REQUIRE(token_lines.size() == 2);
  for (const auto& l : token_lines) CHECK(l.rfind("a\\nb", 0) == 0);
  const auto forced = run_attend({"translate", "-m", dir.string(), "--input-format", "ids", "--output-format", "tokens",
                                  "--target-prefix", "5 6 7 8", "--max-length", "5", "-q"},
                                 "5 6\n7\n");
  REQUIRE(forced.status == 0);
  const auto forced_lines = split_lines(forced.out);
  REQUIRE(forced_lines.size() == 2);
  for (const auto& l : forced_lines) CHECK(l.rfind("a\\nb c\\r\\nd e\\u2028f g\\x1Bh", 0) == 0);
}

TEST_CASE("translate: non-finite scores are reported by line, written as empty lines, --strict stops there", "[cli][lines]") {
  const std::string input = "\nThe quick fox.\n\nA cat.\n";
  const auto r = run_attend({"translate", "-m", kOverflowModel, "--max-length", "5"}, input);
  CHECK(r.status == 0);
  CHECK(r.out == "\n\n\n\n");
  CHECK_THAT(r.err, Contains("line 2: the model produced NaN or infinite scores"));
  CHECK_THAT(r.err, Contains("line 4: the model produced NaN or infinite scores"));
  CHECK(count_of(r.err, "NaN or infinite") == 2);

  const auto scores = run_attend({"translate", "-m", kOverflowModel, "--max-length", "5", "--scores", "-q"}, input);
  CHECK(scores.out == "\n-inf ||| \n\n-inf ||| \n");

  const auto strict = run_attend({"translate", "-m", kOverflowModel, "--max-length", "5", "--strict", "-q"}, input);
  CHECK(strict.status == 1);
  CHECK(strict.out == "\n");  // the line before the first bad one
  CHECK_THAT(strict.err, Contains("line 2: the model produced NaN or infinite scores"));
}

// The class: whatever the search (greedy, beam, n-best, sampling, alternatives, prefixes,
// batch workers) and whenever the overflow shows (the first step, or only later), a
// sentence with non-finite scores is named, written empty, and never stops the run.
TEST_CASE("translate: non-finite scores are reported in every mode, at the first step or later", "[cli][lines]") {
  const std::string input = "The quick fox.\n\nA cat.\n";
  const std::vector<std::vector<std::string>> modes = {
      {},
      {"--beam", "3"},
      {"--beam", "3", "--n-best", "2"},
      {"--sample-topk", "5", "--seed", "1"},
      {"--sampling", "--n-best", "2"},
      {"--return-alternatives", "--n-best", "2"},
      {"--return-alternatives", "--n-best", "2", "--target-prefix", "A"},
      {"--target-prefix", "A"},
      {"--prefix-bias-beta", "0.5", "--beam", "2", "--target-prefix", "A"},
      {"--inter-threads", "2", "-t", "2", "--max-batch-size", "1"},
      {"--replace-unknowns", "--coverage-penalty", "0.2", "--beam", "2"},
  };
  for (const std::string& model : {kOverflowModel, kLateOverflowModel})
    for (const auto& mode : modes) {
      std::vector<std::string> args = {"translate", "-m", model, "--max-length", "5", "-q"};
      args.insert(args.end(), mode.begin(), mode.end());
      INFO(command_line(args));
      const auto r = run_attend(args, input);
      CHECK(r.status == 0);
      const auto lines = split_lines(r.out);
      const std::size_t per_line = std::find(mode.begin(), mode.end(), "--n-best") != mode.end() ? 2 : 1;
      CHECK(lines.size() == 3 * per_line);
      CHECK_THAT(r.err, Contains("line 1: the model produced NaN or infinite scores"));
      CHECK_THAT(r.err, Contains("line 3: the model produced NaN or infinite scores"));
      CHECK_THAT(r.err, !Contains("line 2:"));
      CHECK_THAT(r.err, !Contains("error"));
      const auto strict = run_attend([&] { auto a = args; a.push_back("--strict"); return a; }(), input);
      CHECK(strict.status == 1);
      CHECK(strict.out.empty());
    }
}

TEST_CASE("translate: blank lines of Unicode spaces are empty lines, --scores keeps empty lines empty", "[cli][lines]") {
  const std::string input = "\xC2\xA0\n\xE3\x80\x80\n\xE2\x80\x8B\n\n \t \nThe fox.\n";
  const auto r = run_attend({"translate", "-m", kModel, "--max-length", "5", "--scores"}, input);
  REQUIRE(r.status == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 6);
  for (std::size_t i = 0; i < 5; ++i) CHECK(lines[i].empty());
  CHECK(std::regex_match(lines[5], std::regex(R"(-[0-9]+\.[0-9]+ \|\|\| .+)")));
  CHECK_THAT(r.err, Contains("6 lines (5 empty)"));

  // Tokens are the vocabulary's own: the transliteration model's source vocabulary holds
  // U+200C (zero-width non-joiner), so a line of it is a line to translate.
  const auto zwnj = run_attend({"translate", "-m", kCt2Model, "--input-format", "tokens", "--max-length", "5", "-q"},
                               "\xE2\x80\x8C \xE2\x80\x8C\n\xC2\xA0\n");
  REQUIRE(zwnj.status == 0);
  const auto zwnj_lines = split_lines(zwnj.out);
  REQUIRE(zwnj_lines.size() == 2);
  CHECK_FALSE(zwnj_lines[0].empty());
}

TEST_CASE("translate --input-format ids: one policy for every bad id, the source side's <unk>, messages cut short", "[cli][input]") {
  // The CTranslate2 model: the source <unk> is 50, the target's 42 ("." in the source).
  const auto unk = run_attend({"translate", "-m", kCt2Model, "--input-format", "ids", "--output-format", "ids", "-q"}, "5 50 7\n");
  REQUIRE(unk.status == 0);
  std::string huge(10 << 20, '7');
  huge[0] = 'x';
  const std::vector<std::string> bad = {"-1", "51", "x3", "99999999999999999999", "1.5", "+3", "0x10", huge};
  for (const std::string& b : bad) {
    INFO("bad id " << b.substr(0, 30));
    const auto r = run_attend({"translate", "-m", kCt2Model, "--input-format", "ids", "--output-format", "ids"}, "5 " + b + " 7\n");
    CHECK(r.status == 0);
    CHECK(r.out == unk.out);  // read as the source <unk>
    CHECK_THAT(r.err, Contains("line 1: '"));
    CHECK_THAT(r.err, Contains("is not an id of the source vocabulary [0, 51) (read as <unk>, source id 50)"));
    CHECK(r.err.size() < 600);  // never the whole 10 MB line
    const auto strict = run_attend({"translate", "-m", kCt2Model, "--input-format", "ids", "--strict"}, "5 6\n5 " + b + " 7\n");
    CHECK(strict.status == 1);
    CHECK(split_lines(strict.out).size() == 1);
    CHECK_THAT(strict.err, Contains("line 2: '"));
    CHECK(strict.err.size() < 600);
  }
  // Target prefixes in ids: the target side's <unk>.
  const auto prefix = run_attend({"translate", "-m", kCt2Model, "--input-format", "ids", "--target-prefix", "-1", "-q"}, "5 6\n");
  CHECK(prefix.status == 0);
  const auto many = run_attend({"translate", "-m", kCt2Model, "--input-format", "ids", "-q"}, "5 -1 -2 x 7\n");
  CHECK(many.status == 0);
}

TEST_CASE("translate: vocabularies with CRLF line ends work, mostly unknown input is never silent", "[cli][input]") {
  const std::string input = "آ ت ز م و ن\nآ ت ش ي س و ن\n";
  const auto lf = run_attend({"translate", "-m", kCt2Model, "--input-format", "tokens", "-q"}, input);
  REQUIRE(lf.status == 0);
  CHECK(lf.out == "a t z m o n\na c h i s o n\n");

  const fs::path crlf = fs::path(scratch_directory()) / "crlf-model";
  fs::create_directories(crlf);
  fs::copy_file(fs::path(kCt2Model) / "model.bin", crlf / "model.bin", fs::copy_options::overwrite_existing);
  for (const char* name : {"source_vocabulary.txt", "target_vocabulary.txt"}) {
    std::string text = read_file((fs::path(kCt2Model) / name).string()), out;
    for (char c : text) out += c == '\n' ? std::string("\r\n") : std::string(1, c);
    out.resize(out.size() - 2);  // and no newline after the last line
    std::ofstream(crlf / name, std::ios::binary) << out;
  }
  const auto r = run_attend({"translate", "-m", crlf.string(), "--input-format", "tokens", "-q"}, input);
  CHECK(r.status == 0);
  CHECK(r.out == lf.out);
  CHECK(r.err.empty());

  // Tokens the vocabulary lacks: named, the line still translated.
  const auto unknown = run_attend({"translate", "-m", kCt2Model, "--input-format", "tokens"}, "x y z\nآ ت\nq\n");
  CHECK(unknown.status == 0);
  CHECK(split_lines(unknown.out).size() == 3);
  CHECK_THAT(unknown.err, Contains("line 1: 3 of 3 tokens are unknown to the source vocabulary ('x', 'y', 'z')"));
  const auto more = run_attend({"translate", "-m", kCt2Model, "--input-format", "tokens"}, "x y z w\n");
  CHECK_THAT(more.err, Contains("line 1: 4 of 4 tokens are unknown to the source vocabulary ('x', 'y', 'z', …)"));
  CHECK_THAT(unknown.err, Contains("line 3: 1 of 1 tokens are unknown"));
  CHECK_THAT(unknown.err, !Contains("line 2:"));
  // Ids: the source <unk> as given is counted; ids read as <unk> were named already.
  const auto ids = run_attend({"translate", "-m", kCt2Model, "--input-format", "ids"}, "50 50 7\n5 50 7\n-1 -2 x 7\n");
  CHECK(ids.status == 0);
  CHECK(split_lines(ids.out).size() == 3);
  CHECK_THAT(ids.err, Contains("line 1: 2 of 3 tokens are unknown to the source vocabulary (id 50, <unk>)"));
  CHECK_THAT(ids.err, !Contains("line 2:"));
  CHECK(count_of(ids.err, "line 3:") == 1);
  CHECK_THAT(ids.err, Contains("line 3: 3 tokens are not ids of the source vocabulary"));
  // Text: the characters SentencePiece does not know.
  const auto text = run_attend({"translate", "-m", kModel, "--max-length", "5"}, "日本語\nThe fox.\n");
  CHECK(text.status == 0);
  CHECK_THAT(text.err, Contains("line 1: 1 of 2 tokens are unknown to the source vocabulary ('日', '本', '語')"));
  CHECK_THAT(text.err, !Contains("line 2:"));
}

TEST_CASE("translate: a read error is an error, never the end of the input", "[cli][input]") {
  const auto dir = run_attend({"translate", "-m", kModel, "-i", scratch_directory()});
  CHECK(dir.status == 1);
  CHECK_THAT(dir.err, Contains("cannot read the input " + scratch_directory() + ": Is a directory"));
  const auto closed = run_shell(quote(attend_path()) + " translate -m " + quote(kModel) + " <&-");
  CHECK(closed.status == 1);
  CHECK_THAT(closed.err, Contains("standard input is closed"));
  const auto prefixes = run_attend({"translate", "-m", kModel, "--target-prefix-file", scratch_directory()}, "x\n");
  CHECK(prefixes.status == 1);
  CHECK_THAT(prefixes.err, Contains("cannot read the target prefix file " + scratch_directory()));
}

TEST_CASE("translate: a bad target prefix stops the run at its line, after every line before it", "[cli][input]") {
  std::string input, prefixes;
  for (int i = 1; i <= 80; ++i) {
    input += "The quick fox " + std::to_string(i) + ".\n";
    prefixes += i == 70 ? "A B C D E F G H I J K L M N O P Q R S T\n" : "A\n";  // line 70: more than --max-length
  }
  const std::string prefix_file = write_scratch_file("prefixes-70.txt", prefixes);
  const auto r = run_attend({"translate", "-m", kModel, "--max-length", "12", "-q", "--target-prefix-file", prefix_file}, input);
  CHECK(r.status == 1);
  CHECK(split_lines(r.out).size() == 69);
  CHECK_THAT(r.err, Contains("line 70: the target prefix has"));
  CHECK_THAT(r.err, Contains("more than the 12 a translation may have"));

  std::string forty;
  for (int i = 0; i < 40; ++i) forty += "A\n";
  const std::string short_file = write_scratch_file("prefixes-short.txt", forty);
  const auto short_run = run_attend({"translate", "-m", kModel, "--max-length", "12", "-q", "--target-prefix-file", short_file}, input);
  CHECK(short_run.status == 1);
  const auto written = split_lines(short_run.out).size();
  CHECK(written == 40);
  CHECK_THAT(short_run.err, Contains("has no target prefix"));

  const auto both_stdin = run_attend({"translate", "-m", kModel, "--target-prefix-file", "-"}, input);
  CHECK(both_stdin.status == 2);
  CHECK_THAT(both_stdin.err, Contains("would both read standard input"));
}

TEST_CASE("translate: works as a coprocess — each answer comes when its line is in, not after 64 more", "[cli][input]") {
  // bash's coproc keeps the pipe to attend open between lines, as a service would.
  const std::string script = "coproc T { " + quote(attend_path()) +
                             " translate --preset tiny --input-format ids --max-length 3 -q; }\n"
                             "for i in 1 2 3; do echo \"5 6 $i\" >&${T[1]}; read -t 20 -u ${T[0]} reply || exit 9; "
                             "echo \"$reply\"; done\n"
                             "exec {T[1]}>&-; wait";
  const auto r = run_shell("bash -c " + quote(script));
  CHECK(r.status == 0);
  CHECK(split_lines(r.out).size() == 3);
}

TEST_CASE("translate -o FILE: the file is replaced only when the run succeeds", "[cli][output]") {
  const std::string out = write_scratch_file("precious.txt", "keep me\n");
  const auto missing = run_attend({"translate", "-m", "/nonexistent/model", "-o", out}, "The fox.\n");
  CHECK(missing.status == 1);
  CHECK(read_file(out) == "keep me\n");

  // In place: -i F -o F.
  const std::string both = write_scratch_file("in-place.txt", "The fox.\nA cat.\n");
  const auto expected = run_attend({"translate", "-m", kModel, "--max-length", "6", "-q"}, "The fox.\nA cat.\n");
  const auto in_place = run_attend({"translate", "-m", kModel, "--max-length", "6", "-q", "-i", both, "-o", both});
  CHECK(in_place.status == 0);
  CHECK(read_file(both) == expected.out);

  // A failure mid-way (--strict, line 3): the file keeps its contents, the lines before are kept aside.
  const auto strict = run_attend({"translate", "-m", kModel, "--max-length", "6", "--strict", "-o", out},
                                 "The fox.\nA cat.\nBad \xff.\n");
  CHECK(strict.status == 1);
  CHECK(read_file(out) == "keep me\n");
  CHECK(split_lines(read_file(out + ".partial")).size() == 2);
  CHECK_THAT(strict.err, Contains(out + ".partial"));

  // Success: replaced, and its permissions kept.
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  const auto ok = run_attend({"translate", "-m", kModel, "--max-length", "6", "-q", "-o", out}, "The fox.\nA cat.\n");
  CHECK(ok.status == 0);
  CHECK(read_file(out) == expected.out);
  CHECK(fs::status(out).permissions() == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  std::size_t leftovers = 0;
  for (const auto& e : fs::directory_iterator(scratch_directory())) leftovers += e.path().filename().string().find(".attend-") != std::string::npos;
  CHECK(leftovers == 0);

  CHECK(run_attend({"translate", "-m", kModel, "--max-length", "6", "-q", "-o", "/dev/null"}, "The fox.\n").status == 0);
  const auto into_dir = run_attend({"translate", "-m", kModel, "-q", "-o", scratch_directory()}, "The fox.\n");
  CHECK(into_dir.status == 1);
  CHECK_THAT(into_dir.err, Contains("Is a directory"));
}

TEST_CASE("translate and plan: absurd limits are usage errors, never an overflow", "[cli][limits]") {
  const std::string huge = "9223372036854775807";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  // Each names the flag and its range (include/attend/limits.h), never an engine field.
  const std::vector<Case> cases = {
      {{"translate", "--preset", "tiny", "--input-format", "ids", "--max-batch-size", huge, "--max-batch-tokens", "0"},
       "--max-batch-size: must be an integer in [1, 65536], got " + huge},
      {{"translate", "--preset", "tiny", "--input-format", "ids", "--max-batch-tokens", huge},
       "--max-batch-tokens: must be an integer in [0, 16777216], got " + huge},
      {{"translate", "--preset", "tiny", "--input-format", "ids", "--beam", huge}, "beam"},
      {{"plan", "--preset", "tiny", "--max-batch", huge, "--max-batch-tokens", "0"}, "--max-batch: must be an integer in [1, 65536]"},
      {{"plan", "--preset", "tiny", "--max-batch", "65536", "--max-batch-tokens", "0", "--beam", "256"}, "more than the 1024 GiB"},
      {{"translate", "--preset", "tiny", "--input-format", "ids", "--inter-threads", "100000"},
       "--inter-threads: must be an integer in [0, 1024], got 100000"},
      {{"translate", "--preset", "tiny", "--input-format", "ids", "--threads", "100000"},
       "--threads: must be an integer in [0, 4096], got 100000"},
      {{"bench", "--preset", "tiny", "--sentences", huge}, "--sentences: must be an integer in [1, 10000000], got " + huge},
      {{"bench", "--preset", "tiny", "--src-len", "1:" + huge}, "at most the model's 512 positions"},
      {{"bench", "--preset", "tiny", "--batch", huge}, "--batch: must be an integer in [1, 65536], got " + huge},
      {{"bench", "--preset", "tiny", "--inter-threads", "100000"}, "--inter-threads: must be an integer in [0, 1024], got 100000"},
  };
  for (const Case& c : cases) {
    INFO(command_line(c.args));
    const auto r = run_attend(c.args, "5 6 7\n");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains(c.message));
    CHECK(r.out.empty());
  }
  // The token cap bounds the sentences: the largest sentence limit under it is fine.
  const auto capped = run_attend({"plan", "--preset", "tiny", "--max-batch", "65536", "--max-batch-tokens", "4096"});
  CHECK(capped.status == 0);
  CHECK_THAT(capped.out, Contains("limits: batch 4096"));
  CHECK_THAT(capped.out, !Contains("saves -"));
}

// Peak RSS means nothing under ASan: [memory] runs in release builds only.
TEST_CASE("translate: one short line costs what one short line needs, whatever --max-batch-size", "[cli][limits][memory]") {
  const auto small = run_attend({"translate", "--preset", "tiny", "--input-format", "ids", "--max-length", "5"}, "5 6 7\n");
  const auto large = run_attend({"translate", "--preset", "tiny", "--input-format", "ids", "--max-length", "5",
                                 "--max-batch-size", "20000"}, "5 6 7\n");
  REQUIRE(small.status == 0);
  REQUIRE(large.status == 0);
  CHECK(large.out == small.out);
  auto peak = [](const std::string& err) {
    std::smatch m;
    REQUIRE(std::regex_search(err, m, std::regex("peak RSS ([0-9.]+) MiB")));
    return std::stod(m[1]);
  };
  INFO("peak RSS " << peak(small.err) << " MiB at the default limit, " << peak(large.err) << " MiB with 20000");
  CHECK(peak(large.err) < peak(small.err) + 16);
}

}  // namespace attend::test

namespace attend::test {

TEST_CASE("convert: a failure half-way never leaves a partial model under the name asked for", "[cli][output]") {
  const fs::path out = fs::path(scratch_directory()) / "converted-under-limit";
  auto leftovers = [&] {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(scratch_directory())) n += e.path().filename().string().find("attend-partial") != std::string::npos;
    return n;
  };
  // A write fails (EFBIG past a 64 KiB file size limit, the signal ignored): an error, nothing left.
  const std::string convert = quote(attend_path()) + " convert " + quote(kCt2Model) + " " + quote(out.string());
  const auto failed = run_shell("bash -c " + quote("trap '' XFSZ; ulimit -f 64; exec " + convert));
  CHECK(failed.status == 1);
  CHECK_THAT(failed.err, Contains("write failed"));
  CHECK_FALSE(fs::exists(out));
  CHECK(leftovers() == 0);
  // Killed by the limit's signal: still no model under that name.
  const auto killed = run_shell("bash -c " + quote("ulimit -f 64; exec " + convert));
  CHECK(killed.status != 0);
  CHECK_FALSE(fs::exists(out));
  // Then a run that can write succeeds, and the result loads.
  const auto ok = run_shell(convert + "/");
  CHECK(ok.status == 0);
  CHECK(fs::exists(out / "model.safetensors"));
  const auto translated = run_attend({"translate", "-m", out.string(), "--input-format", "tokens", "-q"}, "آ ت ز م و ن\n");
  CHECK(translated.out == "a t z m o n\n");
}

}  // namespace attend::test
