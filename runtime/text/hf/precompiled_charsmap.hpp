// SentencePiece's normalization rules as a model file carries them (the
// `precompiled_charsmap` of tokenizer.json's "Precompiled" normalizer, base64): a
// darts-clone double-array trie over UTF-8 byte strings whose values point into a blob of
// NUL-terminated replacements.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attend::runtime::hf {

class PrecompiledCharsmap {
 public:
  // Parses the decoded bytes: a little-endian u32 trie size in bytes, the trie's u32
  // units, then the replacements. Throws attend::Error on a malformed map.
  explicit PrecompiledCharsmap(std::string_view bytes);

  // The replacement of the shortest rule that matches a prefix of `chunk` (as
  // spm_precompiled, which `tokenizers` uses, takes the first result of a common-prefix
  // search), or nothing.
  std::optional<std::string_view> transform(std::string_view chunk) const;

  // Hugging Face's Precompiled normalizer: each extended grapheme cluster shorter than 6
  // bytes is replaced whole if a rule matches it, otherwise each of its characters is.
  std::string normalize(std::string_view text) const;

 private:
  std::vector<std::uint32_t> units_;
  std::string replacements_;
};

// Standard base64 (RFC 4648, padding optional). Throws attend::Error naming `what` on a
// character outside the alphabet.
std::string decode_base64(std::string_view text, std::string_view what);

}  // namespace attend::runtime::hf
