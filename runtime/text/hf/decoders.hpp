// tokenizer.json's "decoder": tokens back to text, as `tokenizers` decodes them
// (Tokenizer.decode: ids → tokens, special ones skipped when asked, then the decoder's
// decode_chain, the pieces joined). Each step is one of tokenizers' decoders, step for
// step as its Rust code runs it, quirks included (Metaspace drops every replacement
// character of the first token; WordPiece cleans up each token on its own).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace attend::runtime::hf {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual std::vector<std::string> decode_chain(std::vector<std::string> tokens) const = 0;
};

// "##" pieces joined to the token before, the others after a space; with cleanup, the
// space before punctuation and English contractions removed (token by token).
struct WordPieceDecoder : Decoder {
  std::string prefix = "##";
  bool cleanup = true;
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override;
};

// GPT-2's printable characters back to their bytes, read as UTF-8 (invalid sequences: U+FFFD).
struct ByteLevelDecoder : Decoder {
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override;
};

// The replacement character ("▁") back to a space; none at all in the first token when a
// space was prepended.
struct MetaspaceDecoder : Decoder {
  std::string replacement = "\u2581";
  bool prepended = true;  // prepend_scheme "always"/"first" (add_prefix_space)
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override;
};

// Every occurrence of a string replaced (tokenizer.json's {"String": …} patterns).
struct ReplaceDecoder : Decoder {
  std::string pattern, content;
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override;
};

// Runs of <0xHH> tokens back to the bytes they stand for (U+FFFD per byte if not UTF-8).
struct ByteFallbackDecoder : Decoder {
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override;
};

// All tokens into one.
struct FuseDecoder : Decoder {
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override;
};

// Up to `start` leading and `stop` trailing copies of a character removed from each token.
struct StripDecoder : Decoder {
  std::string content;
  std::size_t start = 0, stop = 0;
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override;
};

// The end-of-word suffix ("</w>") replaced by a space (by nothing in the last token).
struct BpeDecoder : Decoder {
  std::string suffix = "</w>";
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override;
};

struct DecoderSequence : Decoder {
  std::vector<std::unique_ptr<Decoder>> steps;
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override;
};

}  // namespace attend::runtime::hf
