// The pre-tokenizers of `tokenizers` (tokenizer.json's "pre_tokenizer"): each splits the
// normalized text into the words the model tokenizes one by one.
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "text/hf/pipeline.hpp"
#include "text/hf/split_pattern.hpp"

namespace attend::runtime::hf {

// BERT's: white space removed, each punctuation character (ASCII symbols included) a word.
struct BertPreTokenizer : PreTokenizer {
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return "BertPreTokenizer"; }
  bool splits_at_spaces() const override { return true; }
};

// Runs of word characters and runs of other non-space characters (\w+|[^\w\s]+).
struct WhitespacePreTokenizer : PreTokenizer {
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return "Whitespace"; }
  bool splits_at_spaces() const override { return true; }
};

struct WhitespaceSplit : PreTokenizer {  // split at white space, which is removed
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return "WhitespaceSplit"; }
  bool splits_at_spaces() const override { return true; }
};

struct Punctuation : PreTokenizer {
  SplitBehavior behavior = SplitBehavior::isolated;
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return "Punctuation"; }
};

struct Digits : PreTokenizer {  // numbers apart from the rest, each digit alone if individual
  bool individual_digits = false;
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return "Digits"; }
};

struct CharDelimiterSplit : PreTokenizer {
  char32_t delimiter = U' ';
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return "CharDelimiterSplit"; }
};

// Split at a string or a regular expression (literal_regex.hpp).
struct SplitPreTokenizer : PreTokenizer {
  std::string pattern;
  bool is_regex = false;
  std::regex regex;
  SplitBehavior behavior = SplitBehavior::removed;
  bool invert = false;
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return "Split (" + pattern + ")"; }
};

// SentencePiece's spaces: ' ' becomes the replacement (▁), which is prepended to the
// text ("always"; "first": only where the text begins; "never"), and words begin at it.
struct Metaspace : PreTokenizer {
  enum class Prepend { always, first, never };
  std::string replacement = "\u2581";
  char32_t replacement_char = U'\u2581';
  Prepend prepend = Prepend::always;
  bool split = true;
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return "Metaspace"; }
  bool splits_at_spaces() const override { return split; }  // a word begins at each ▁
};

struct PreTokenizerSequence : PreTokenizer {
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  void pre_tokenize(std::vector<Split>& splits) const override;
  std::string describe() const override { return describe_steps(steps); }
  // The first step splits at spaces; the later ones split its words further.
  bool splits_at_spaces() const override { return !steps.empty() && steps.front()->splits_at_spaces(); }
};

// ASCII punctuation or a Unicode 8.0 punctuation character (BERT's and Punctuation's).
bool is_bert_punctuation(char32_t c);

}  // namespace attend::runtime::hf
