// GPT-2's byte-level pre-tokenizer (RoBERTa's, tokenizer.json's "ByteLevel"): the text is
// split as GPT-2's regular expression splits it, then every byte becomes one of 256
// printable characters, so the BPE model never meets an unknown character.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "text/hf/pipeline.hpp"

namespace attend::runtime::hf {

struct ByteLevel : PreTokenizer {
  bool add_prefix_space = true;  // a ' ' before each split that lacks one
  bool use_regex = true;
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return "ByteLevel"; }
  bool splits_at_spaces() const override { return use_regex; }  // its pattern ends no word at a space before text
};

// The parts GPT-2's pattern finds in `text`:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (they cover the text).
std::vector<Range> gpt2_split(std::string_view text);

// `text` with each byte replaced by its printable character (GPT-2's bytes_to_unicode).
std::string bytes_to_unicode(std::string_view text);

}  // namespace attend::runtime::hf
