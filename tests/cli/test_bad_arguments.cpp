// What a hostile or careless user gives the CLI besides its input lines: paths that are
// the wrong kind of file or that cannot be written, empty flag values, sources made of
// special tokens. Each gets a message naming what and where, and the documented exit
// status (1: a bad model or input, 2: bad usage) — never a silent guess.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli_runner.hpp"

namespace attend::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

const std::string kAren = std::string(ATTEND_TEST_DATA) + "/models/ct2-aren-transliteration";

}  // namespace

// Every path argument of `attend translate` and `attend convert`, given the wrong kind
// of thing: the message names the path and what is wrong with it, exit status 1.
TEST_CASE("translate and convert: every path argument that is missing, of the wrong kind or unwritable is named", "[cli][arguments]") {
  const std::string file = write_scratch_file("a-file.txt", "آ ت\n");
  const std::string dir = scratch_directory();
  const std::string empty_dir = dir + "/empty-dir";
  fs::create_directories(empty_dir);
  const std::vector<std::string> translate = {"translate", "-m", kAren, "--input-format", "tokens", "-q"};
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = translate;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::vector<Case> cases = {
      {{"translate", "-m", "/nonexistent/model"}, "/nonexistent/model: model directory does not exist"},
      {{"translate", "-m", kAren + "/model.bin"}, kAren + "/model.bin: not a directory"},
      {{"translate", "-m", empty_dir}, empty_dir + ": not a model directory"},
      {with({"-i", "/nonexistent/in.txt"}), "cannot open the input /nonexistent/in.txt"},
      {with({"-i", dir}), "cannot read the input " + dir + ": Is a directory"},
      {with({"-o", dir}), "cannot write the output " + dir + ": Is a directory"},
      {with({"-o", "/nonexistent/dir/out.txt"}), "the output /nonexistent/dir/out.txt"},
      {with({"-o", "/dev/full"}), "cannot write the output /dev/full: No space left on device"},
      {with({"--attention", "/dev/full"}), "cannot write the attention file /dev/full: No space left on device"},
      {with({"--attention", dir}), "cannot write the attention file " + dir + ": Is a directory"},
      {with({"--target-prefix-file", "/nonexistent/prefixes"}), "cannot open the target prefix file /nonexistent/prefixes"},
      {with({"--target-prefix-file", dir}), "cannot read the target prefix file " + dir},
      {{"convert", "/nonexistent/model", dir + "/converted"}, "/nonexistent/model: model directory does not exist"},
      {{"convert", kAren + "/model.bin", dir + "/converted"}, kAren + "/model.bin: not a directory"},
      {{"convert", kAren, file}, file + ": exists and is not a directory"},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    INFO("attend " << joined);
    const auto r = run_attend(c.args, "آ ت\n");
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains(c.message));
  }
  CHECK(read_file(file) == "آ ت\n");  // a failed convert leaves the file as it was
}

// The list flags take tokens: an empty value (an unset shell variable) is refused as a
// bad value, not read as "the model's end token" or "suppress nothing".
TEST_CASE("translate: an empty --end-token or --suppress-sequences is a usage error", "[cli][arguments]") {
  for (const std::string flag : {"--end-token", "--suppress-sequences"})
    for (const std::string value : {"", " ", "\t"}) {
      INFO(flag << " '" << value << "'");
      const auto r = run_attend({"translate", "-m", kAren, "--input-format", "tokens", flag, value}, "آ ت\n");
      CHECK(r.status == 2);
      CHECK_THAT(r.err, Contains(flag + " '" + value + "'"));
      CHECK(r.out.empty());
    }
  const auto two = run_attend({"translate", "-m", kAren, "--input-format", "tokens", "--end-token", "a b"}, "آ ت\n");
  CHECK(two.status == 2);
  CHECK_THAT(two.err, Contains("must be one target token"));
  // Valid values still work: "z" is never generated, and "m" ends the output (left out,
  // as </s> is), so it stops where the output without it has its first "m".
  const std::vector<std::string> suppressed = {"translate", "-m", kAren, "--input-format", "tokens", "-q",
                                               "--suppress-sequences", "z"};
  const auto full = run_attend(suppressed, "آ ت ز م و ن\n");
  REQUIRE(full.status == 0);
  CHECK(full.out.find('z') == std::string::npos);
  std::vector<std::string> ended = suppressed;
  ended.insert(ended.end(), {"--end-token", "m"});
  const auto ok = run_attend(ended, "آ ت ز م و ن\n");
  CHECK(ok.status == 0);
  REQUIRE(full.out.find(" m") != std::string::npos);
  CHECK(ok.out == full.out.substr(0, full.out.find(" m")) + "\n");
}

// CTranslate2 4.8.1 translates a source with no content (a lone <s> or </s>, a leading
// <s>, a trailing </s> or </s> + one more token) to an empty hypothesis without running
// the model; so does attend, on every way a source arrives (the CLI writes an empty line).
TEST_CASE("translate: sources of special tokens are empty lines, as CTranslate2 returns empty hypotheses", "[cli][arguments]") {
  const std::vector<std::pair<std::string, bool>> sources = {
      {"</s>", true},       {"<s>", true},        {"</s> آ", true},     {"<s> </s>", true},
      {"<s> </s> آ", true}, {"آ </s>", false},    {"</s> </s>", false}, {"<s> آ </s>", false},
  };
  std::string input;
  for (const auto& [line, empty] : sources) input += line + "\n";
  for (const std::string beam : {"1", "3"}) {
    const auto r = run_attend({"translate", "-m", kAren, "--input-format", "tokens", "-q", "--beam", beam}, input);
    REQUIRE(r.status == 0);
    const auto lines = split_lines(r.out);
    REQUIRE(lines.size() == sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      INFO("beam " << beam << ": '" << sources[i].first << "' → '" << lines[i] << "'");
      CHECK(lines[i].empty() == sources[i].second);
    }
  }
  // Through ids too: the same ids, the same answer.
  const auto ids = run_attend({"translate", "-m", kAren, "--input-format", "ids", "-q"}, "2\n1\n2 5\n5 2\n");
  CHECK(ids.status == 0);
  const auto id_lines = split_lines(ids.out);
  REQUIRE(id_lines.size() == 4);
  CHECK((id_lines[0].empty() && id_lines[1].empty() && id_lines[2].empty() && !id_lines[3].empty()));
}

// A full disk (/dev/full: every write fails with ENOSPC) behind every option that names
// a file a command writes: the message names the file and why, exit status 1 — never a
// bare "No space left on device" or a generic "writing failed".
TEST_CASE("every output option of every command, on a full disk, names its file", "[cli][arguments]") {
  const std::string encoders = std::string(ATTEND_TEST_DATA) + "/encoders";
  const std::string bert = encoders + "/bert", classifier = encoders + "/bert-classifier";
  const std::string full = "/dev/full", no_space = ": No space left on device";
  const std::vector<std::string> translate = {"translate", "-m", kAren, "--input-format", "tokens", "-q"};
  auto plus = [](std::vector<std::string> args, const std::vector<std::string>& extra) {
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {plus(translate, {"-o", full}), "cannot write the output /dev/full" + no_space},
      {plus(translate, {"-o", full, "--n-best", "2", "--beam", "2"}), "cannot write the output /dev/full" + no_space},
      {plus(translate, {"-o", "/dev/null", "--attention", full}), "cannot write the attention file /dev/full" + no_space},
      {plus(translate, {"-o", "/dev/null", "--attention-all", full, "--attention-lines", "0"}),
       "cannot write the attention file /dev/full" + no_space},
      {{"embed", "-m", bert, "-q", "-o", full}, "cannot write the output /dev/full" + no_space},
      {{"embed", "-m", bert, "-q", "-o", full, "--output-format", "npy"}, "cannot write the output /dev/full" + no_space},
      {{"embed", "-m", bert, "-q", "-o", full, "--output-format", "tsv"}, "cannot write the output /dev/full" + no_space},
      {{"embed", "-m", bert, "-q", "-o", "/dev/null", "--attention-all", full, "--attention-lines", "0"},
       "cannot write the attention file /dev/full" + no_space},
      {{"classify", "-m", classifier, "-q", "-o", full}, "cannot write the output /dev/full" + no_space},
      {{"classify", "-m", classifier, "-q", "-o", full, "--output-format", "jsonl"}, "cannot write the output /dev/full" + no_space},
      {{"tokenize", "-m", bert, "-q", "-o", full}, "cannot write the output /dev/full" + no_space},
      {{"tokenize", "-m", bert, "-q", "-o", full, "--output-format", "tokens"}, "cannot write the output /dev/full" + no_space},
      {{"convert", kAren, full}, "/dev/full: exists and is not a directory"},
  };
  for (const auto& [args, message] : cases) {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    INFO("attend " << joined);
    const bool encoder = args[0] != "translate";
    const auto r = run_attend(args, encoder ? "hello world\nthe cat\n" : "آ ت\nز م\n");
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains(message));
  }
}

}  // namespace attend::test

namespace attend::test {

// Every numeric flag of every command shows its range in --help; the translator's and
// encoder's settings have one range each (include/attend/limits.h), the same for
// translate and embed, and a value outside is a usage error (exit 2) naming the flag.
TEST_CASE("every numeric flag shows its range in --help, and out of range is exit 2 naming the flag", "[cli][arguments][limits]") {
  for (const std::string command : {"translate", "bench", "plan", "embed", "classify", "tokenize"}) {
    const CommandResult help = run_attend({command, "--help"});
    REQUIRE(help.status == 0);
    std::size_t numeric = 0;
    for (const std::string& line : split_lines(help.out)) {
      const bool is_flag = line.rfind("  -", 0) == 0;
      if (!is_flag || (line.find(" INT:") == std::string::npos && line.find(" UINT:") == std::string::npos &&
                       line.find(" FLOAT:") == std::string::npos && line.find(" INT ") == std::string::npos &&
                       line.find(" FLOAT ") == std::string::npos))
        continue;
      ++numeric;
      INFO(command << ": " << line);
      CHECK((line.find(" in [") != std::string::npos || line.find(" in (") != std::string::npos ||
             line.find("≥") != std::string::npos || line.find("a finite number") != std::string::npos));
    }
    INFO(command);
    CHECK(numeric >= 3);
  }
  const std::string model = std::string(ATTEND_CLI_FIXTURE) + "/model";
  const std::string encoder = std::string(ATTEND_TEST_DATA) + "/encoders/bert";  // 64 positions
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"translate", "-m", model, "--max-batch-size", "65537"}, "--max-batch-size: must be an integer in [1, 65536]"},
      {{"embed", "-m", encoder, "--max-batch-size", "65537"}, "--max-batch-size: must be an integer in [1, 65536]"},
      {{"translate", "-m", model, "--max-batch-tokens", "-1"}, "--max-batch-tokens: must be an integer in [0, 16777216]"},
      {{"embed", "-m", encoder, "--max-batch-tokens", "0"}, "--max-batch-tokens: must be an integer in [1, 16777216]"},
      {{"embed", "-m", encoder, "--threads", "5000"}, "--threads: must be an integer in [0, 4096]"},
      {{"translate", "-m", model, "--inter-threads", "100", "--intra-threads", "100"},
       "--inter-threads 100: × --intra-threads 100 = 10000: at most 4096 in all"},
      {{"embed", "-m", encoder, "--inter-threads", "100", "--intra-threads", "100"},
       "--inter-threads 100: × --intra-threads 100 = 10000: at most 4096 in all"},
      {{"embed", "-m", encoder, "--max-length", "100000"}, "--max-length 100000: must be in [0, 64]"},
      {{"bench", "--preset", "tiny", "--batch", "70000"}, "--batch: must be an integer in [1, 65536]"},
      {{"plan", "--preset", "tiny", "--beam", "300"}, "--beam: must be an integer in [1, 256]"},
  };
  for (const Case& c : cases) {
    const CommandResult r = run_attend(c.args, "a line\n");
    INFO(c.args[0] << " " << c.args[c.args.size() - 2] << " " << c.args.back() << ": " << r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains(c.message));
    CHECK_THAT(r.err, !Contains("max_batch ") && !Contains("error:"));
  }
}

}  // namespace attend::test
