// attend translate --attention-all PATH --attention-lines LIST: one .npz per chosen line,
// read with NumPy (tests/tools/check_attention_npz.py: shapes, distributions, causality,
// the alignment head equal to --attention's); the translation unchanged by it; every bad
// input a clear error that leaves the translation whole; tools/plot_attention.py drawing
// the files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "cli_runner.hpp"

namespace attend::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

const std::string kModel = std::string(ATTEND_CLI_FIXTURE) + "/model";
const std::string kAren = std::string(ATTEND_TEST_DATA) + "/models/ct2-aren-transliteration";
const std::string kTools = std::string(ATTEND_SOURCE_DIR) + "/tools/";
const std::string kPython = "/usr/bin/python3 ";  // Debian's, with python3-numpy and python3-matplotlib

const std::string kInput =
    "The quick brown fox jumps.\nA small red house.\n\nOver the lazy dog, the old river.\nShe was in the tree.\n";

CommandResult translate(const std::vector<std::string>& flags, const std::string& input = kInput,
                        const std::string& model = kModel) {
  std::vector<std::string> args = {"translate", "-m", model, "-q", "--max-length", "12"};
  args.insert(args.end(), flags.begin(), flags.end());
  return run_attend(args, input);
}

std::string fresh(const std::string& name) {
  const std::string path = scratch_directory() + "/" + name;
  fs::remove_all(path);
  return path;
}

}  // namespace

TEST_CASE("translate --attention-all: every head of the chosen lines, as NumPy reads it, the alignment head --attention's",
          "[cli][attention-heads]") {
  const auto plain = translate({"--beam", "2"});
  REQUIRE(plain.status == 0);
  const std::string dir = fresh("heads"), jsonl = scratch_directory() + "/alignment.jsonl";
  const auto r = translate({"--beam", "2", "--attention", jsonl, "--attention-all", dir, "--attention-lines", "0,2-3"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == plain.out);  // the translation is what it is without attention
  CHECK(fs::exists(dir + "/line-0.npz"));
  CHECK(!fs::exists(dir + "/line-1.npz"));  // not chosen
  const auto check = run_shell(kPython + quote(std::string(ATTEND_SOURCE_DIR) + "/tests/tools/check_attention_npz.py") + " " +
                               quote(dir) + " " + quote(jsonl) + " 0 2 3");  // 2: the empty line
  INFO(check.out << check.err);
  REQUIRE(check.status == 0);
  CHECK(check.out == "checked 3 line(s)\n");

  // One line to one file; the grid and one head drawn from it.
  const std::string file = scratch_directory() + "/one.npz";
  REQUIRE(translate({"--attention-all", file, "--attention-lines", "4"}).status == 0);
  const std::string grid = scratch_directory() + "/grid.png", head = scratch_directory() + "/head.png";
  for (const auto& [flags, png] : {std::pair{std::string(" --kind decoder_self"), grid},
                                   std::pair{std::string(" --kind encoder_self --layer 1 --head 3"), head}}) {
    const auto plot = run_shell(kPython + quote(kTools + "plot_attention.py") + " " + quote(file) + flags + " -o " + quote(png));
    INFO(plot.err);
    REQUIRE(plot.status == 0);
    CHECK(read_file(png).substr(0, 8) == "\x89PNG\r\n\x1a\n");
    CHECK(read_file(png).size() > 10000);
  }
  const auto bad_head = run_shell(kPython + quote(kTools + "plot_attention.py") + " " + quote(file) +
                                  " --layer 0 --head 9 -o " + quote(head));
  CHECK(bad_head.status == 1);
  CHECK_THAT(bad_head.err, Contains("--head 9: cross has heads 0..3"));
  // A file with no cross-attention (as an encoder-only model's) asked for cross: named.
  const std::string encoder_only = scratch_directory() + "/encoder-only.npz";
  REQUIRE(run_shell(kPython + "-c " + quote("import numpy as np, sys; z = np.load(sys.argv[1]); "
                                            "np.savez(sys.argv[2], encoder_self=z['encoder_self'], source_tokens=z['source_tokens'])") +
                    " " + quote(file) + " " + quote(encoder_only)).status == 0);
  const auto cross = run_shell(kPython + quote(kTools + "plot_attention.py") + " " + quote(encoder_only) +
                               " --kind cross -o " + quote(grid));
  CHECK(cross.status == 1);
  CHECK_THAT(cross.err, Contains("has no cross attention") && Contains("holds: encoder_self"));
  const auto page = run_shell(kPython + quote(kTools + "attention_view.py") + " " + quote(encoder_only) + " -o " +
                              quote(scratch_directory() + "/encoder-only.html"));
  CHECK(page.status == 0);  // the page offers what the file has
}

TEST_CASE("translate --attention-all on the real model: heads that align, equal to --attention", "[cli][attention-heads]") {
  const std::string dir = fresh("aren"), jsonl = scratch_directory() + "/aren.jsonl";
  const auto r = translate({"--input-format", "tokens", "--attention", jsonl, "--attention-all", dir, "--attention-lines", "all"},
                           "آ ت ز م و ن\nآ ت ش ي س و ن\n", kAren);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == "a t z m o n\na c h i s o n\n");
  const auto check = run_shell(kPython + quote(std::string(ATTEND_SOURCE_DIR) + "/tests/tools/check_attention_npz.py") + " " +
                               quote(dir) + " " + quote(jsonl) + " 0 1");
  INFO(check.out << check.err);
  CHECK(check.status == 0);
}

TEST_CASE("translate --attention-all: bad lines and paths are clear errors, the translation is written whole",
          "[cli][attention-heads]") {
  const auto plain = translate({});
  REQUIRE(plain.status == 0);
  SECTION("a line past the input: exit 1 after every line is written") {
    const auto r = translate({"--attention-all", fresh("past"), "--attention-lines", "1,9"});
    CHECK(r.status == 1);
    CHECK(r.out == plain.out);
    CHECK_THAT(r.err, Contains("--attention-lines 9: the input has 5 line(s), numbered from 0"));
  }
  SECTION("/dev/full: exit 1 naming it, the translation whole") {
    const auto r = translate({"--attention-all", "/dev/full", "--attention-lines", "1"});
    CHECK(r.status == 1);
    CHECK(r.out == plain.out);
    CHECK_THAT(r.err, Contains("cannot write the attention file /dev/full: No space left on device"));
  }
  SECTION("a directory that cannot be made: exit 1 before anything is translated") {
    const std::string blocker = scratch_directory() + "/a-file";
    std::ofstream(blocker) << "x";
    const auto r = translate({"--attention-all", blocker + "/sub", "--attention-lines", "0"});
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("cannot create the attention directory " + blocker + "/sub"));
  }
  SECTION("usage: one .npz for several lines, a list that does not parse, one flag without the other") {
    for (const auto& [flags, message] :
         std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--attention-all", scratch_directory() + "/two.npz", "--attention-lines", "0,1"}, "is one file, for one line"},
             {{"--attention-all", fresh("d"), "--attention-lines", "3-1"}, "the range 3-1 ends before it starts"},
             {{"--attention-all", fresh("d"), "--attention-lines", "x"}, "'x' is not a line number"},
             {{"--attention-all", fresh("d")}, "--attention-all needs --attention-lines"},
             {{"--attention-lines", "1"}, "--attention-lines needs --attention-all"}}) {
      const auto r = translate(flags);
      INFO(message);
      CHECK(r.status == 2);
      CHECK(r.out.empty());
      CHECK_THAT(r.err, Contains(message));
    }
  }
}

TEST_CASE("embed --attention-all: an encoder-only model's self-attention, the embeddings unchanged", "[cli][attention-heads]") {
  const std::string model = std::string(ATTEND_TEST_DATA) + "/encoders/st-mean", input = "2 10 11 12 3\n2 14 15 3\n";
  const auto plain = run_attend({"embed", "-m", model, "-q", "--input-format", "ids"}, input);
  REQUIRE(plain.status == 0);
  const std::string dir = fresh("embed-heads");
  const auto r = run_attend({"embed", "-m", model, "-q", "--input-format", "ids", "--attention-all", dir, "--attention-lines", "1"},
                            input);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == plain.out);
  const auto check = run_shell(kPython + "-c " + quote("import numpy as np, sys; z = np.load(sys.argv[1]); w = z['encoder_self']; "
                                                      "assert sorted(z.files) == ['encoder_self', 'line', 'model', 'source_ids', 'source_tokens'], z.files; "
                                                      "assert w.shape[2:] == (4, 4) and np.allclose(w.sum(-1), 1, atol=1e-5), w.shape; "
                                                      "print(list(z['source_ids']))") +
                               " " + quote(dir + "/line-1.npz"));
  INFO(check.err);
  CHECK(check.status == 0);
  CHECK(check.out == "[2, 14, 15, 3]\n");
  const auto cross = run_shell(kPython + quote(kTools + "plot_attention.py") + " " + quote(dir + "/line-1.npz") +
                               " --kind cross -o " + quote(scratch_directory() + "/x.png"));
  CHECK(cross.status == 1);
  CHECK_THAT(cross.err, Contains("has no cross attention"));
  const auto past = run_attend({"embed", "-m", model, "-q", "--input-format", "ids", "--attention-all", fresh("e2"),
                                "--attention-lines", "5"}, input);
  CHECK(past.status == 1);
  CHECK(past.out == plain.out);
  CHECK_THAT(past.err, Contains("--attention-lines 5: the input has 2 line(s)"));
}

// Text in: the tokens are the model's tokenizer.json's (not ids), the file keeps the text
// and which tokens the tokenizer added; a pair (classify, a cross-encoder) marks which
// sentence each token came from, as the type ids the model saw do.
TEST_CASE("embed and classify --attention-all: the tokenizer's tokens, the text, a pair's sentences A and B",
          "[cli][attention-heads]") {
  const std::string bert = std::string(ATTEND_TEST_DATA) + "/encoders/bert";
  const std::string cross = std::string(ATTEND_TEST_DATA) + "/encoders/bert-cross-encoder";
  const std::string read = "import numpy as np, sys; z = np.load(sys.argv[1]); "
                           "print(' '.join(z['source_tokens'])); print(list(z['source_sequence_ids'])); "
                           "print(list(z['source_type_ids'])); print(' | '.join(z['source_texts'])); print(str(z['model']))";
  const std::string embedded = fresh("embed-text.npz");
  const auto tokens = run_attend({"tokenize", "-m", bert, "--output-format", "tokens"}, "Hello world!\n");
  REQUIRE(tokens.status == 0);
  const auto e = run_attend({"embed", "-m", bert, "-q", "--attention-all", embedded, "--attention-lines", "0"},
                            "Hello world!\n");
  INFO(e.err);
  REQUIRE(e.status == 0);
  const auto got = run_shell(kPython + "-c " + quote(read) + " " + quote(embedded));
  INFO(got.err);
  REQUIRE(got.status == 0);
  CHECK(got.out == tokens.out + "[-1, 0, 0, 0, -1]\n[0, 0, 0, 0, 0]\nHello world!\n" + bert + "\n");

  const std::string pair = fresh("pair.npz");
  const std::string input = "is a model good?\ta model\n";
  const auto c = run_attend({"classify", "-m", cross, "-q", "--attention-all", pair, "--attention-lines", "0"}, input);
  INFO(c.err);
  REQUIRE(c.status == 0);
  CHECK(c.out == run_attend({"classify", "-m", cross, "-q"}, input).out);  // the scores unchanged
  const auto p = run_shell(kPython + "-c " + quote(read) + " " + quote(pair));
  INFO(p.err);
  REQUIRE(p.status == 0);
  // As Hugging Face's tokenizers gives them (sequence_ids None as -1).
  CHECK(p.out == "[CLS] is a model good ? [SEP] a model [SEP]\n[-1, 0, 0, 0, 0, 0, -1, 1, 1, -1]\n"
                 "[0, 0, 0, 0, 0, 0, 0, 1, 1, 1]\nis a model good? | a model\n" + cross + "\n");

  // Ids in: the tokens still the model's own, from tokenizer.json; no text, no sequence ids.
  const std::string ids = fresh("ids.npz");
  REQUIRE(run_attend({"embed", "-m", bert, "-q", "--input-format", "ids", "--attention-all", ids, "--attention-lines", "0"},
                     "2 4 3\n").status == 0);
  const auto i = run_shell(kPython + "-c " + quote("import numpy as np, sys; z = np.load(sys.argv[1]); "
                                                   "print(' '.join(z['source_tokens']), sorted(z.files))") + " " + quote(ids));
  CHECK(i.out == "[CLS] [MASK] [SEP] ['encoder_self', 'line', 'model', 'source_ids', 'source_tokens']\n");
  const auto lines = run_attend({"classify", "-m", cross, "-q", "--attention-lines", "0"}, input);
  CHECK(lines.status == 2);
  CHECK_THAT(lines.err, Contains("--attention-lines needs --attention-all"));
}

}  // namespace attend::test
