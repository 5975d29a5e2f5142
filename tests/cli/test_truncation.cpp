// Lines longer than the limit: the message names the limit actually applied
// (--max-input-length, or the model's positions) and counts the tokens dropped; only
// what the limit keeps is tokenized, so a line of tens of megabytes costs what its first
// tokens cost — with the very ids (and so the very translation) the whole line gives.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>

#include "cli_runner.hpp"

namespace attend::test {
namespace {

using Catch::Matchers::Contains;

const std::string kModel = std::string(ATTEND_CLI_FIXTURE) + "/model";  // 64 positions; sources get an EOS

std::string ids_line(int count, int first = 4) {
  std::string out;
  for (int i = 0; i < count; ++i) out.append(i ? " " : "").append(std::to_string(first + i % 100));
  return out;
}

double peak_rss(const std::string& err) {
  std::smatch m;
  REQUIRE(std::regex_search(err, m, std::regex("peak RSS ([0-9.]+) MiB")));
  return std::stod(m[1]);
}

std::uint64_t summary_source_tokens(const std::string& err) {
  std::smatch m;
  REQUIRE(std::regex_search(err, m, std::regex("([0-9]+) source tokens \\(")));
  return std::stoull(m[1]);
}

// `words` of the corpus, then `filler` bytes of more words: a line far over any limit.
std::string long_text_line(const std::string& words, std::size_t filler) {
  std::string line = words;
  static const std::string more = " the quick brown fox jumps over the lazy dog café naïve straße";
  line.reserve(words.size() + filler + more.size());
  while (line.size() < words.size() + filler) line += more;
  return line;
}

}  // namespace

TEST_CASE("truncation: the warning names the limit applied and counts the tokens dropped", "[cli][truncation]") {
  const std::string input = ids_line(100) + "\n" + ids_line(5) + "\n" + ids_line(30) + "\n";
  SECTION("--max-input-length below the model's positions") {
    const CommandResult r = run_attend({"translate", "-m", kModel, "--input-format", "ids", "--max-length", "4",
                                        "--max-input-length", "10"}, input);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.err, Contains("2 line(s) longer than --max-input-length 10 were truncated to it, 110 source tokens "
                               "dropped (first: line 1"));
    CHECK(summary_source_tokens(r.err) == 10 + 5 + 10);  // what was translated
  }
  SECTION("the model's positions below --max-input-length") {
    const CommandResult r = run_attend({"translate", "-m", kModel, "--input-format", "ids", "--max-length", "4"}, input);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.err, Contains("1 line(s) longer than the model's limit of 64 source tokens were truncated to it, "
                               "36 source tokens dropped (first: line 1"));
    CHECK(summary_source_tokens(r.err) == 64 + 5 + 30);
  }
  SECTION("--strict names the same limit, for the line") {
    const CommandResult r = run_attend({"translate", "-m", kModel, "--input-format", "ids", "--max-length", "4",
                                        "--max-input-length", "10", "--strict"}, input);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains("line 1: 100 source tokens, more than --max-input-length 10"));
  }
  SECTION("text: the tokens SentencePiece gives, the EOS the model adds counted") {
    const CommandResult r = run_attend({"translate", "-m", kModel, "--max-length", "4", "--max-input-length", "3"},
                                       "a b c d e\n");
    REQUIRE(r.status == 0);
    CHECK_THAT(r.err, Contains("1 line(s) longer than --max-input-length 3 were truncated to it"));
    CHECK(summary_source_tokens(r.err) == 3);
  }
}

// Release builds only ([memory]: RSS means nothing under ASan).
TEST_CASE("truncation: a line of 40 MB costs what its kept tokens cost, with the whole line's translation",
          "[cli][truncation][memory]") {
  const std::string words = "The quick brown fox jumps over the lazy dog. A small cat sat on the old stone.";
  struct Case {
    std::string format, head, line;
  };
  const std::vector<Case> cases = {
      {"text", words, long_text_line(words, 40u << 20)},
      {"ids", ids_line(200) + " 2 9", ""},  // an EOS and a language code at the end: truncation keeps them
      {"tokens", "▁the ▁quick ▁brown ▁fox ▁the ▁quick ▁brown ▁fox ▁the ▁quick ▁brown ▁fox ▁the ▁quick ▁brown ▁fox ▁over", ""},
  };
  for (const Case& c : cases) {
    INFO(c.format);
    std::string line = c.line;
    if (c.format == "ids") {  // 200 ids, 40 MB of ids, then the EOS and the code the short line ends with too
      line = ids_line(200);
      while (line.size() < (40u << 20)) line += " 17 18 19 20 21 22 23 24";
      line += " 2 9";
    } else if (c.format == "tokens") {
      line = c.head;
      while (line.size() < (40u << 20)) line += " ▁the ▁lazy ▁dog";
    }
    const std::string big = write_scratch_file("long-" + c.format + ".txt", line + "\n");
    const std::string small = write_scratch_file("short-" + c.format + ".txt", c.head + "\n");
    const std::vector<std::string> flags = {"translate", "-m", kModel, "--input-format", c.format, "--max-length", "8",
                                            "--max-input-length", "16"};
    auto args_for = [&](const std::string& path) {
      std::vector<std::string> a = flags;
      a.insert(a.end(), {"-i", path});
      return a;
    };
    const CommandResult whole = run_attend(args_for(big));
    REQUIRE(whole.status == 0);
    const CommandResult reference = run_attend(args_for(small));
    REQUIRE(reference.status == 0);
    CHECK(whole.out == reference.out);  // the ids the limit keeps are the whole line's
    INFO(whole.err);
    CHECK(peak_rss(whole.err) < 150);   // was ~17 bytes of memory per byte of the line
    CHECK_THAT(whole.err, Contains("longer than --max-input-length 16 were truncated to it"));
  }
}

// A line over the reading cap (16 MiB at this limit) is read only that far, its rest
// dropped as it arrives: memory follows the cap, and the warning says so.
TEST_CASE("truncation: a line far over the limit is never held whole", "[cli][truncation][memory]") {
  const CommandResult r = run_shell("{ yes 'the quick brown fox' | head -c 300000000 | tr '\\n' ' '; echo; "
                                    "echo 'a small cat'; } | " + quote(attend_path()) + " translate -m " + quote(kModel) +
                                    " --max-length 8 --max-input-length 16");
  REQUIRE(r.status == 0);
  CHECK(split_lines(r.out).size() == 2);
  CHECK_THAT(r.err, Contains("1 line(s) longer than 16777216 bytes were read only up to that") && Contains("line 1, 300000000 bytes"));
  INFO(r.err);
  CHECK(peak_rss(r.err) < 150);
}

// embed and tokenize read a line only up to 1 MiB: a 40 MB line embeds as its start does.
TEST_CASE("truncation: embed of a 40 MB line costs what the encoder keeps of it", "[cli][truncation][memory]") {
  const std::string encoder = std::string(ATTEND_TEST_DATA) + "/encoders/bert";  // 64 tokens at most
  const std::string head = "the quick brown fox jumps over the lazy dog";
  std::string line;
  while (line.size() < (40u << 20)) line += head + " ";
  const std::string big = write_scratch_file("long-embed.txt", line + "\n");
  const std::string small = write_scratch_file("short-embed.txt", line.substr(0, 4000) + "\n");
  const CommandResult whole = run_attend({"embed", "-m", encoder, "--output-format", "tsv", "-i", big});
  REQUIRE(whole.status == 0);
  const CommandResult reference = run_attend({"embed", "-m", encoder, "--output-format", "tsv", "-q", "-i", small});
  REQUIRE(reference.status == 0);
  CHECK(whole.out == reference.out);
  CHECK_THAT(whole.err, Contains("1 line(s) longer than 1048576 bytes were read only up to that"));
  INFO("attend embed of a 40 MB line: peak RSS " << whole.peak_rss_mib << " MiB");
  CHECK(whole.peak_rss_mib < 150);  // was ~35 bytes of memory per byte of the line
}


// classify reads a sentence pair text by text: each text up to 1 MiB, so a cut never
// drops the second text, and a pair of 40 MB costs what the model keeps of it.
TEST_CASE("truncation: classify reads each text of a pair up to 1 MiB and never drops the second",
          "[cli][truncation][memory]") {
  const std::string encoder = std::string(ATTEND_TEST_DATA) + "/encoders/bert-cross-encoder";  // 64 tokens at most
  const std::string head = "the quick brown fox jumps over the lazy dog";
  std::string long_text;
  while (long_text.size() < (40u << 20)) long_text += head + " naïve ";
  const std::string second = "a small cat sat on the old stone";
  const std::string mid = std::string(700'000, 'a') + " dog";  // two of them: over 1 MiB, each under
  const std::string big = write_scratch_file("long-pairs.txt", long_text + "\t" + second + "\n" + second + "\t" +
                                                                   long_text + "\r\n" + mid + "\t" + mid + "\n");
  const std::string small = write_scratch_file("short-pairs.txt", long_text.substr(0, 4000) + "\t" + second + "\n" +
                                                                      second + "\t" + long_text.substr(0, 4000) + "\n" +
                                                                      mid + "\t" + mid + "\n");
  const CommandResult whole = run_attend({"classify", "-m", encoder, "-i", big});
  REQUIRE(whole.status == 0);
  const CommandResult reference = run_attend({"classify", "-m", encoder, "-q", "-i", small});
  REQUIRE(reference.status == 0);
  CHECK(split_lines(whole.out).size() == 3);
  CHECK(whole.out == reference.out);  // the second text kept, the first's kept tokens the whole text's
  CHECK_THAT(whole.err, Contains("2 line(s) with a text longer than 1048576 bytes were read only up to that") &&
                            Contains("(first: line 1, " + std::to_string(long_text.size() + 1 + second.size()) + " bytes)"));
  INFO("attend classify of 80 MB of pairs: peak RSS " << whole.peak_rss_mib << " MiB");
  CHECK(whole.peak_rss_mib < 150);  // was the whole line, several times over (~300 MiB for 73 MB)
}

}  // namespace attend::test
