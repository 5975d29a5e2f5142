// Hugging Face tokenizers (runtime/text/hf): each pipeline piece on hand-checked cases,
// the committed fixtures against the outputs of `tokenizers` stored beside them
// (tests/data/tokenizers, made by make_tokenizer_fixtures.py), errors, threads.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "attend/error.hpp"
#include "text/hf/byte_level.hpp"
#include "text/hf/models.hpp"
#include "text/hf/normalizers.hpp"
#include "text/hf/pre_tokenizers.hpp"
#include "text/hf/precompiled_charsmap.hpp"
#include "text/hf/utf8.hpp"
#include "text/hf_tokenizer.hpp"

namespace fs = std::filesystem;
using attend::runtime::Encoding;
using attend::runtime::HfTokenizer;
using attend::runtime::TokenizeOptions;
using namespace attend::runtime::hf;

namespace {

const fs::path data = fs::path(ATTEND_SOURCE_DIR) / "tests/data/tokenizers";

std::vector<std::string> texts(const std::vector<Split>& splits) {
  std::vector<std::string> out;
  for (const Split& s : splits) out.push_back(s.text);
  return out;
}

std::vector<std::string> pre_tokenize(const PreTokenizer& p, const std::string& text) {
  std::vector<Split> splits{{text, -1, true}};
  p.pre_tokenize(splits);
  return texts(splits);
}

std::vector<std::string> tokens(const Model& m, const std::string& word) {
  std::vector<Token> out;
  m.tokenize(word, out);
  std::vector<std::string> values;
  for (const Token& t : out) values.push_back(t.value);
  return values;
}

// A tokenizer.json written to a fresh file.
fs::path write_json(const std::string& name, const nlohmann::json& j) {
  const fs::path dir = fs::temp_directory_path() / ("attend_hf_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path) << j.dump();
  return path;
}

nlohmann::json minimal_wordpiece() {
  return {{"version", "1.0"},
          {"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"vocab", {{"[UNK]", 0}, {"a", 1}, {"##b", 2}}}}}};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const attend::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("hf utf8: invalid bytes become U+FFFD, one per maximal subpart", "[hf]") {
  bool replaced = false;
  CHECK(valid_utf8("héllo", replaced) == "héllo");
  CHECK_FALSE(replaced);
  CHECK(valid_utf8("a\xff" "b", replaced) == "a\uFFFDb");
  CHECK(replaced);
  CHECK(valid_utf8("\xe2\x82", replaced) == "\uFFFD");           // a truncated 3-byte sequence: one
  CHECK(valid_utf8("\xe2\x82x", replaced) == "\uFFFDx");
  CHECK(valid_utf8("\xf0\x80\x80\x80", replaced) == "\uFFFD\uFFFD\uFFFD\uFFFD");  // overlong: each byte
  CHECK(valid_utf8("\xed\xa0\x80", replaced) == "\uFFFD\uFFFD\uFFFD");           // a surrogate
  CHECK(valid_utf8("\xf4\x90\x80\x80", replaced) == "\uFFFD\uFFFD\uFFFD\uFFFD");  // past U+10FFFF
  CHECK(valid_utf8(std::string("a\0b", 3), replaced) == std::string("a\0b", 3));
  CHECK_FALSE(replaced);
}

TEST_CASE("hf BertNormalizer: cleaning, CJK, accents follow lowercase unless set", "[hf]") {
  BertNormalizer n;  // clean_text, handle_chinese_chars, lowercase, strip_accents unset
  CHECK(n.normalize("Héllo\tWÖRLD\u200b\u0007!\u00a0x") == "hello world! x");
  CHECK(n.normalize(std::string("a\0b", 3)) == "ab");
  CHECK(n.normalize("ab中文c") == "ab 中  文 c");
  CHECK(n.normalize("\uFFFD\u0007") == "");
  n.lowercase = false;
  CHECK(n.normalize("Héllo") == "Héllo");  // cased: accents kept
  n.strip_accents = true;
  CHECK(n.normalize("Héllo") == "Hello");
  n.lowercase = true, n.strip_accents = false;
  CHECK(n.normalize("HÉLLO") == "héllo");
  CHECK(n.normalize("İ") == "i\u0307");  // full lowercase mapping
}

TEST_CASE("hf normalizers: Unicode forms, Lowercase, StripAccents, Strip, Replace, Sequence", "[hf]") {
  CHECK(UnicodeNormalizer(NormalForm::nfd).normalize("é") == "e\u0301");
  CHECK(UnicodeNormalizer(NormalForm::nfc).normalize("e\u0301") == "é");
  CHECK(UnicodeNormalizer(NormalForm::nfkc).normalize("ﬁ①ｆ") == "fi1f");
  CHECK(UnicodeNormalizer(NormalForm::nfkd).normalize("½") == "1\u20442");
  // U+1F16C (Unicode 12.0) has a compatibility decomposition that tokenizers' Unicode 9.0
  // tables lack: it stays.
  CHECK(UnicodeNormalizer(NormalForm::nfkc).normalize("\U0001F16C") == "\U0001F16C");
  CHECK(Lowercase().normalize("ÀΣΑΣ") == "àσασ");
  CHECK(StripAccents().normalize("e\u0301a\u0308") == "ea");
  Strip strip;
  CHECK(strip.normalize(" \t x y \u3000") == "x y");
  strip.left = false;
  CHECK(strip.normalize("  x  ") == "  x");
  Replace replace;
  replace.pattern = "``", replace.content = "\"";
  CHECK(replace.normalize("``a`` `b") == "\"a\" `b");
  NormalizerSequence seq;
  seq.steps.push_back(std::make_unique<UnicodeNormalizer>(NormalForm::nfd));
  seq.steps.push_back(std::make_unique<StripAccents>());
  seq.steps.push_back(std::make_unique<Lowercase>());
  CHECK(seq.normalize("Ça Déjà") == "ca deja");
}

TEST_CASE("hf pre-tokenizers split as tokenizers does", "[hf]") {
  using V = std::vector<std::string>;
  CHECK(pre_tokenize(BertPreTokenizer(), "Hello, world!$5  a-b") == V{"Hello", ",", "world", "!", "$", "5", "a", "-", "b"});
  CHECK(pre_tokenize(WhitespacePreTokenizer(), "Hey man!! it's 3.5") == V{"Hey", "man", "!!", "it", "'", "s", "3", ".", "5"});
  CHECK(pre_tokenize(WhitespaceSplit(), " a\u3000b\tc ") == V{"a", "b", "c"});
  Digits digits;
  CHECK(pre_tokenize(digits, "ab123c4") == V{"ab", "123", "c", "4"});
  digits.individual_digits = true;
  CHECK(pre_tokenize(digits, "a12") == V{"a", "1", "2"});
  Punctuation merged;
  merged.behavior = SplitBehavior::merged_with_previous;
  CHECK(pre_tokenize(merged, "a,b..c") == V{"a,", "b.", ".", "c"});
  Metaspace meta;
  CHECK(pre_tokenize(meta, "Hello  world") == V{"\u2581Hello", "\u2581", "\u2581world"});
  meta.prepend = Metaspace::Prepend::never;
  CHECK(pre_tokenize(meta, "Hello world") == V{"Hello", "\u2581world"});
  SplitPreTokenizer split;
  split.pattern = "-", split.behavior = SplitBehavior::isolated;
  CHECK(pre_tokenize(split, "a-b--c") == V{"a", "-", "b", "-", "-", "c"});
}

TEST_CASE("hf ByteLevel: GPT-2's pattern and byte characters", "[hf]") {
  std::vector<std::string> parts;
  const std::string text = "Hello world's  test\n\t1990s!?";
  for (const Range& r : gpt2_split(text)) parts.push_back(text.substr(r.begin, r.size));
  // Space before a word: all but the last character of the run, which cannot join "1990".
  CHECK(parts == std::vector<std::string>{"Hello", " world", "'s", " ", " test", "\n", "\t", "1990", "s", "!?"});
  CHECK(bytes_to_unicode(" a\n") == "\u0120a\u010a");  // Ġ a Ċ
  CHECK(bytes_to_unicode("é") == "\u00c3\u00a9");
  ByteLevel pre;
  CHECK(pre_tokenize(pre, "Hi there") == std::vector<std::string>{"\u0120Hi", "\u0120there"});
}

TEST_CASE("hf WordPiece: longest match first, ## continuations, whole word unknown", "[hf]") {
  WordPiece m;
  for (const char* t : {"[UNK]", "un", "##aff", "##able", "u", "##n"}) m.vocab.add(t, static_cast<std::int32_t>(m.vocab.size()));
  m.max_input_chars_per_word = 12;
  CHECK(tokens(m, "unaffable") == std::vector<std::string>{"un", "##aff", "##able"});
  CHECK(tokens(m, "unx") == std::vector<std::string>{"[UNK]"});  // one unknown part: the whole word
  CHECK(tokens(m, "unaffableaff") == std::vector<std::string>{"un", "##aff", "##able", "##aff"});
  CHECK(tokens(m, "unaffableaffa") == std::vector<std::string>{"[UNK]"});  // 13 characters > 12
}

TEST_CASE("hf Unigram: the best segmentation, unknown characters fused", "[hf]") {
  // The example of tokenizers' documentation.
  Unigram m({{"<unk>", 0}, {"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}, {"cd", 1}, {"ab", 2}, {"abc", 5}, {"abcd", 10}}, 0,
            false);
  CHECK(tokens(m, "abcdacdxx") == std::vector<std::string>{"abcd", "a", "cd", "xx"});
  std::vector<Token> out;
  m.tokenize("xx", out);
  CHECK(out.size() == 1);
  CHECK(out[0].id == 0);
}

TEST_CASE("hf BPE: merges by rank", "[hf]") {
  Bpe m;
  int id = 0;
  for (const char* t : {"a", "b", "c", "ab", "bc", "abc"}) m.vocab.add(t, id++);
  m.set_merges({{"b", "c"}, {"a", "b"}, {"a", "bc"}});
  CHECK(tokens(m, "abc") == std::vector<std::string>{"abc"});  // b+c first (rank 0), then a+bc
  CHECK(tokens(m, "abab") == std::vector<std::string>{"ab", "ab"});
  CHECK(tokens(m, "axb") == std::vector<std::string>{"ab"});  // no unk_token: x is dropped, a and b merge
}

TEST_CASE("hf Precompiled: SentencePiece's charsmap from the XLM-R fixture", "[hf]") {
  const auto j = nlohmann::json::parse(std::ifstream(data / "xlmr-unigram.json"));
  const std::string map = j["normalizer"]["normalizers"][0]["precompiled_charsmap"];
  const PrecompiledCharsmap charsmap(decode_base64(map, "charsmap"));
  CHECK(charsmap.normalize("ｆｕｌｌ①") == "full1");
  CHECK(charsmap.normalize("e\u0301") == "é");  // a grapheme replaced whole
  CHECK(charsmap.normalize("plain") == "plain");
  CHECK_THROWS_AS(PrecompiledCharsmap("\x08\x00\x00\x00"), attend::Error);
}

TEST_CASE("hf fixtures: identical to the stored outputs of tokenizers", "[hf]") {
  std::vector<nlohmann::json> cases;
  std::ifstream in(data / "expected/cases.jsonl");
  for (std::string line; std::getline(in, line);) cases.push_back(nlohmann::json::parse(line));
  REQUIRE(cases.size() > 300);
  for (const char* name : {"bert-uncased", "bert-cased", "bert-strip-accents", "xlmr-unigram", "roberta-bpe",
                           "mix-wordlevel", "mix-unigram", "mix-bpe"}) {
    INFO(name);
    const HfTokenizer t = HfTokenizer::load(data / (std::string(name) + ".json"));
    std::ifstream expected_in(data / "expected" / (std::string(name) + ".jsonl"));
    std::size_t n = 0;
    for (std::string line; std::getline(expected_in, line); ++n) {
      REQUIRE(n < cases.size());
      const auto& c = cases[n];
      const auto expected = nlohmann::json::parse(line);
      const auto text = [&](const char* key) {
        const std::string b64 = std::string(key) + "_base64";
        return c.contains(b64) ? decode_base64(c[b64].get<std::string>(), b64) : c[key].get<std::string>();
      };
      TokenizeOptions o;
      o.max_length = c.value("max_length", 0);
      o.add_special_tokens = c.value("add_special_tokens", true);
      const Encoding e = c.contains("b") ? t.encode_pair(text("a"), text("b"), o) : t.encode(text("a"), o);
      INFO("case " << n << ": " << c.dump());
      CHECK(e.ids == expected["ids"].get<std::vector<std::int32_t>>());
      CHECK(e.type_ids == expected["type_ids"].get<std::vector<std::int32_t>>());
      CHECK(e.tokens == expected["tokens"].get<std::vector<std::string>>());
      CHECK(e.invalid_utf8 == c.contains("a_base64"));
    }
    CHECK(n == cases.size());
  }
}

TEST_CASE("hf truncation: longest_first, special tokens counted", "[hf]") {
  const HfTokenizer t = HfTokenizer::load(data / "bert-uncased.json");
  const std::string ten = "a b c d e f g h i j", three = "a b c";
  TokenizeOptions o;
  o.max_length = 11;  // [CLS] A [SEP] B [SEP]: 8 of the 13 sequence tokens stay
  Encoding e = t.encode_pair(ten, three, o);
  CHECK(e.truncated);
  CHECK(e.ids.size() == 11);
  CHECK(std::count(e.type_ids.begin(), e.type_ids.end(), 1) == 4);  // B kept whole (3) and its [SEP]
  e = t.encode_pair(ten, ten, o);  // both cut: 4 and 4
  CHECK(std::count(e.type_ids.begin(), e.type_ids.end(), 1) == 5);
  o.max_length = 12;  // odd: the second gets the extra token
  e = t.encode_pair(ten, ten, o);
  CHECK(std::count(e.type_ids.begin(), e.type_ids.end(), 1) == 6);
  o.max_length = 5;
  e = t.encode(ten, o);
  CHECK(e.tokens == std::vector<std::string>{"[CLS]", "a", "b", "c", "[SEP]"});
  o.max_length = 100;
  CHECK_FALSE(t.encode(ten, o).truncated);
  o.max_length = 1;  // tokenizers would silently not truncate at all
  CHECK_THROWS_WITH(t.encode(ten, o), Catch::Contains("max_length 1 leaves no room") && Catch::Contains("2 special tokens"));
  o.max_length = 3, o.add_special_tokens = false;
  CHECK(t.encode(ten, o).tokens == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("hf HfTokenizer: lookups, pad id, description", "[hf]") {
  const HfTokenizer t = HfTokenizer::load(data / "bert-uncased.json");
  CHECK(t.token_to_id("[CLS]") >= 0);
  CHECK(t.id_to_token(t.token_to_id("[SEP]")) == "[SEP]");
  CHECK(t.token_to_id("no such token") == -1);
  CHECK_THROWS_AS(t.id_to_token(1 << 30), attend::Error);
  CHECK(t.vocab_size() == 2500);
  CHECK(t.pad_id() == t.token_to_id("[PAD]"));
  CHECK(t.describe().find("WordPiece") == 0);
  CHECK(t.describe().find("BertNormalizer (lowercase") != std::string::npos);
  const Encoding empty = t.encode("");
  CHECK(empty.tokens == std::vector<std::string>{"[CLS]", "[SEP]"});
  CHECK(HfTokenizer::load(data / "roberta-bpe.json").encode("a", {0, true}).type_ids == std::vector<std::int32_t>{0, 0, 0});
}

TEST_CASE("hf errors name the file and the field", "[hf]") {
  CHECK_THAT(error_of([] { HfTokenizer::load("/no/such/tokenizer.json"); }), Catch::Contains("/no/such/tokenizer.json: cannot open"));
  const fs::path bad = write_json("bad.json", nullptr);
  std::ofstream(bad) << "{\"model\": ";
  CHECK_THAT(error_of([&] { HfTokenizer::load(bad); }), Catch::Contains("bad.json: not valid JSON"));

  auto j = minimal_wordpiece();
  CHECK(HfTokenizer::load(write_json("ok.json", j)).encode("ab", {0, true}).tokens == std::vector<std::string>{"a", "##b"});
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Nmt"}}}}};
  CHECK_THAT(error_of([&] { HfTokenizer::load(write_json("nmt.json", j)); }),
             Catch::Contains("nmt.json: normalizer.normalizers[1].type: \"Nmt\" is not a normalizer attend supports"));
  j = minimal_wordpiece();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "\\s+"}}}, {"behavior", "Removed"}, {"invert", false}};
  CHECK_THAT(error_of([&] { HfTokenizer::load(write_json("regex.json", j)); }),
             Catch::Contains("pre_tokenizer.pattern.Regex: the regular expression \"\\s+\" has \\s"));
  j = minimal_wordpiece();
  j["model"].erase("vocab");
  CHECK_THAT(error_of([&] { HfTokenizer::load(write_json("novocab.json", j)); }), Catch::Contains("model.vocab: missing"));
  j = {{"model", {{"type", "BPE"}, {"dropout", 0.1}, {"vocab", {{"a", 0}}}, {"merges", nlohmann::json::array()}}}};
  CHECK_THAT(error_of([&] { HfTokenizer::load(write_json("dropout.json", j)); }), Catch::Contains("model.dropout: BPE dropout"));
  j = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", {"a b"}}}}};
  CHECK_THAT(error_of([&] { HfTokenizer::load(write_json("merge.json", j)); }),
             Catch::Contains("merge.json: model: BPE merge 0: \"b\" is not in the vocabulary"));
  j = minimal_wordpiece();
  j["model"]["vocab"].erase("[UNK]");
  const HfTokenizer no_unk = HfTokenizer::load(write_json("nounk.json", j));
  CHECK_THAT(error_of([&] { no_unk.encode("zzz"); }), Catch::Contains("unk_token \"[UNK]\", which is not in the vocabulary"));
}

TEST_CASE("hf threads share one tokenizer", "[hf]") {
  const HfTokenizer t = HfTokenizer::load(data / "xlmr-unigram.json");
  std::vector<std::string> lines;
  std::ifstream in(data / "expected/cases.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto c = nlohmann::json::parse(line);
    if (c.contains("a")) lines.push_back(c["a"]);
  }
  std::vector<std::vector<std::int32_t>> serial;
  for (const auto& l : lines) serial.push_back(t.encode(l).ids);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      const HfTokenizer copy = t;  // copies share the pipeline
      for (int round = 0; round < 3; ++round)
        for (std::size_t i = 0; i < lines.size(); ++i) mismatches[k] += copy.encode(lines[i]).ids != serial[i];
    });
  for (auto& th : threads) th.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}

namespace {

// The fixture directories without a tokenizer.json (make_vocab_file_fixtures.py) and the
// file attend builds each one's tokenizer from.
struct VocabFileFixture {
  const char* name;
  const char* file;
  const char* model_type;
};
constexpr VocabFileFixture vocab_file_fixtures[] = {
    {"bert-lower", "vocab.txt", "bert"},
    {"bert-cased", "vocab.txt", "bert"},
    {"bert-added", "vocab.txt", "bert"},
    {"xlmr-unigram", "sentencepiece.bpe.model", "xlm-roberta"},
    {"xlmr-bpe", "sentencepiece.bpe.model", "xlm-roberta"},
    {"xlmr-user-symbols", "sentencepiece.bpe.model", "xlm-roberta"},
    {"camembert-unigram", "sentencepiece.bpe.model", "camembert"},
};

}  // namespace

// vocab.txt (+ tokenizer_config.json) and sentencepiece.bpe.model directories give the ids,
// type ids and tokens of the tokenizer transformers builds from them (its backend's
// outputs, stored by make_vocab_file_fixtures.py).
TEST_CASE("vocab files: the tokenizer transformers builds from vocab.txt or sentencepiece.bpe.model", "[hf]") {
  std::vector<nlohmann::json> cases;
  std::ifstream in(data / "expected/cases.jsonl");
  for (std::string line; std::getline(in, line);) cases.push_back(nlohmann::json::parse(line));
  for (const VocabFileFixture& f : vocab_file_fixtures) {
    INFO(f.name);
    const HfTokenizer t = HfTokenizer::load(data / "vocab-files" / f.name / f.file, f.model_type);
    std::ifstream expected_in(data / "expected" / (std::string("vocab-files-") + f.name + ".jsonl"));
    std::size_t n = 0;
    for (std::string line; std::getline(expected_in, line); ++n) {
      REQUIRE(n < cases.size());
      const auto& c = cases[n];
      const auto expected = nlohmann::json::parse(line);
      const auto text = [&](const char* key) {
        const std::string b64 = std::string(key) + "_base64";
        return c.contains(b64) ? decode_base64(c[b64].get<std::string>(), b64) : c[key].get<std::string>();
      };
      TokenizeOptions o;
      o.max_length = c.value("max_length", 0);
      o.add_special_tokens = c.value("add_special_tokens", true);
      const Encoding e = c.contains("b") ? t.encode_pair(text("a"), text("b"), o) : t.encode(text("a"), o);
      INFO("case " << n << ": " << c.dump());
      CHECK(e.ids == expected["ids"].get<std::vector<std::int32_t>>());
      CHECK(e.type_ids == expected["type_ids"].get<std::vector<std::int32_t>>());
      CHECK(e.tokens == expected["tokens"].get<std::vector<std::string>>());
    }
    CHECK(n == cases.size());
  }
  CHECK_THROWS_WITH(HfTokenizer::load(data / "vocab-files/xlmr-bpe/sentencepiece.bpe.model", "bert"),
                    Catch::Matchers::Contains("a SentencePiece model for a 'bert' model"));
  CHECK_THROWS_WITH(HfTokenizer::load(data / "vocab-files/bert-lower/config.json.model", "xlm-roberta"),
                    Catch::Matchers::Contains("cannot open"));
}

// A long text with a max_length is read piece by piece (text_pieces.hpp): exactly the
// tokens of the whole text's truncation — checked against the whole text encoded
// without truncation and cut as longest_first cuts, for every fixture whose pipeline
// reads in pieces, single texts and pairs (an odd limit whose longer side keeps the
// extra token), pieces cut in runs of spaces and lines.
TEST_CASE("hf truncation of long texts reads only what it keeps, with the whole text's ids", "[hf]") {
  std::string base;
  for (int k = 0; k < 400; ++k)
    base += "The quick brown fox, naïve café 東京 — jumps over the lazy dog #" + std::to_string(k) + "!  \n  ";
  const std::string long_a = base + base, long_b = base.substr(0, 20000);
  std::size_t in_pieces = 0;
  for (const char* name : {"bert-uncased", "bert-cased", "bert-strip-accents", "xlmr-unigram", "roberta-bpe",
                           "mix-wordlevel", "mix-unigram", "mix-bpe"}) {
    INFO(name);
    const HfTokenizer t = HfTokenizer::load(data / (std::string(name) + ".json"));
    const bool pieces = t.reads_in_pieces();
    in_pieces += pieces;
    if (std::string(name) == "bert-uncased" || std::string(name) == "roberta-bpe") CHECK(pieces);
    TokenizeOptions none;
    none.add_special_tokens = false;
    const auto whole_a = t.encode(long_a, none).ids, whole_b = t.encode(long_b, none).ids;
    for (const std::int64_t max_length : {9, 64, 257, 1024}) {
      INFO("max_length " << max_length);
      TokenizeOptions o;
      o.max_length = max_length;
      const Encoding single = t.encode(long_a, o);
      CHECK(single.truncated);
      CHECK(single.ids.size() == static_cast<std::size_t>(max_length));
      const Encoding cut_whole = t.encode(long_a.substr(0, 12000), o);  // a prefix long enough, read whole
      CHECK(single.ids == cut_whole.ids);
      const Encoding no_specials = t.encode(long_a, [&] { TokenizeOptions x = o; x.add_special_tokens = false; return x; }());
      REQUIRE(no_specials.ids.size() == static_cast<std::size_t>(max_length));
      CHECK(std::equal(no_specials.ids.begin(), no_specials.ids.end(), whole_a.begin()));
      const Encoding pair = t.encode_pair(long_a, long_b, o);
      TokenizeOptions x = o;
      x.add_special_tokens = false;
      const Encoding pair_plain = t.encode_pair(long_a, long_b, x);
      const std::size_t limit = static_cast<std::size_t>(max_length);
      const std::size_t n1 = limit / 2 + (whole_a.size() > whole_b.size() ? limit % 2 : 0);
      REQUIRE(pair_plain.ids.size() == limit);
      CHECK(std::equal(whole_a.begin(), whole_a.begin() + n1, pair_plain.ids.begin()));
      CHECK(std::equal(whole_b.begin(), whole_b.begin() + (limit - n1), pair_plain.ids.begin() + n1));
      CHECK(pair.ids.size() == limit);
      CHECK(pair.truncated);
    }
  }
  CHECK(in_pieces >= 3);
}
