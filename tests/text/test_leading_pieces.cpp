// Tokenizing only what truncation keeps (Tokenizers::leading_pieces): the first N ids of
// a long text must be exactly those SentencePiece gives when it tokenizes the whole
// text — the oracle here is SentencePiece itself, on the whole text — for BPE and
// Unigram models, with the noise real lines have (runs of spaces and tabs, words of
// thousands of characters, accents, CJK, invalid-looking bytes); and a text cut short
// (a line read in part) says whether its kept ids can be trusted.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "text/tokenizers.hpp"

namespace attend::runtime {
namespace {

namespace fs = std::filesystem;
const fs::path kSpm = fs::path(ATTEND_CLI_FIXTURE) / "spm";

// A directory holding `model` as vocab.spm, and the tokenizers read from it.
Tokenizers tokenizers_of(const std::string& model) {
  const fs::path dir = fs::temp_directory_path() / ("attend-leading-" + model + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kSpm / (model + ".model"), dir / "vocab.spm", fs::copy_options::overwrite_existing);
  ModelConfig c;
  c.src_vocab_size = c.tgt_vocab_size = 150;
  c.bos_id = 1, c.eos_id = 2, c.add_source_eos = true;
  Tokenizers t = Tokenizers::from_directory(dir.string(), c);
  fs::remove_all(dir);
  return t;
}

// About `bytes` of text of the corpus' words and the noise of real lines.
std::string noisy_text(std::size_t bytes, std::uint32_t seed) {
  static const std::vector<std::string> words = {"the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "café",
                                                 "naïve", "straße", "über", "smörgåsbord", "House", "RIVER", "Stone",
                                                 "日本語", "テキスト", "e\xCC\x81", "x1", "42", ",", ".", "!"};
  std::mt19937 rng(seed);
  std::string text;
  while (text.size() < bytes) {
    const unsigned kind = rng() % 100;
    if (kind < 80) text += words[rng() % words.size()];
    else if (kind < 85) text.append(1 + rng() % 40, 'a' + static_cast<char>(rng() % 26));  // a long "word"
    else if (kind < 88) text.append(2000 + rng() % 3000, 'q');                             // a very long one
    else if (kind < 92) text.append(1 + rng() % 5, ' ');                                   // a run of spaces
    else if (kind < 95) text += "\t";
    else text += "\xE3\x80\x80";  // an ideographic space
    text += rng() % 7 == 0 ? "" : " ";
  }
  return text;
}

std::vector<std::int32_t> first(const std::vector<std::int32_t>& ids, std::int64_t n) {
  return {ids.begin(), ids.begin() + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(ids.size()), n)};
}

// encode_text less the EOS it appends to sources (add_source_eos): the text's pieces.
std::vector<std::int32_t> pieces_of(const Tokenizers& t, const std::string& text) {
  std::vector<std::int32_t> ids = t.encode_text(text, Side::source);
  ids.pop_back();
  return ids;
}

}  // namespace

TEST_CASE("leading_pieces: the first N ids are those of the whole text, for BPE and Unigram", "[text][truncation]") {
  for (const std::string model : {"bpe", "unigram", "unigram-spans"}) {
    INFO(model);
    const Tokenizers t = tokenizers_of(model);
    for (std::uint32_t seed = 1; seed <= 4; ++seed) {
      const std::string text = noisy_text(seed % 2 ? 60'000 : 280'000, seed);
      const std::vector<std::int32_t> whole = pieces_of(t, text);
      for (const std::int64_t n : {0, 1, 7, 100, 1000, 4000}) {
        INFO("seed " << seed << ", " << n << " pieces of " << whole.size());
        const LeadingPieces p = t.leading_pieces(text, Side::source, n);
        CHECK(p.ids == first(whole, n));
        CHECK(p.exact);
        if (p.more) {
          CHECK(p.seen <= static_cast<std::int64_t>(whole.size()));
          CHECK(p.seen >= n);
        } else {
          CHECK(p.seen == static_cast<std::int64_t>(whole.size()));
        }
        // A text cut short: what it calls exact is the whole text's.
        const LeadingPieces cut = t.leading_pieces(text.substr(0, text.size() / 3), Side::source, n, true);
        CHECK(cut.more);
        if (cut.exact) CHECK(cut.ids == first(whole, n));
      }
    }
  }
}

TEST_CASE("leading_pieces: a long text costs what its first pieces cost", "[text][truncation]") {
  const Tokenizers t = tokenizers_of("bpe");
  const std::string text = noisy_text(4'000'000, 99);
  const LeadingPieces p = t.leading_pieces(text, Side::source, 20);
  CHECK(p.more);  // only a window was tokenized
  CHECK(p.ids == first(pieces_of(t, text.substr(0, 1 << 16)), 20));
  CHECK(t.leading_pieces("   ", Side::source, 5).ids.empty());  // blank: no pieces, as encode_text
  CHECK(t.leading_pieces("", Side::source, 5).seen == 0);
}

}  // namespace attend::runtime
