// The normalizers of `tokenizers` (tokenizer.json's "normalizer"): each turns a text into
// the text the pre-tokenizer splits. Regular expressions: see literal_regex.hpp.
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "text/hf/pipeline.hpp"
#include "text/hf/precompiled_charsmap.hpp"
#include "text/hf/unicode_data.hpp"

namespace attend::runtime::hf {

// BERT's: control characters dropped and white space made ' ' (clean_text), spaces around
// CJK ideographs, accents stripped (NFD, then nonspacing marks dropped), lowercase.
// strip_accents unset follows lowercase.
struct BertNormalizer : Normalizer {
  bool clean_text = true, handle_chinese_chars = true, lowercase = true;
  std::optional<bool> strip_accents;
  std::string normalize(std::string_view text) const override;
  std::string describe() const override;
};

struct UnicodeNormalizer : Normalizer {  // NFC, NFD, NFKC, NFKD
  explicit UnicodeNormalizer(NormalForm f) : form(f) {}
  NormalForm form;
  std::string normalize(std::string_view text) const override { return hf::normalize(text, form); }
  std::string describe() const override;
};

struct Lowercase : Normalizer {
  std::string normalize(std::string_view text) const override;
  std::string describe() const override { return "Lowercase"; }
};

struct StripAccents : Normalizer {  // drops every combining mark (use after NFD/NFKD)
  std::string normalize(std::string_view text) const override;
  std::string describe() const override { return "StripAccents"; }
};

struct Strip : Normalizer {  // white space at either end
  bool left = true, right = true;
  std::string normalize(std::string_view text) const override;
  std::string describe() const override;
  bool local() const override { return false; }  // a piece's ends are not the text's
};

// Every occurrence of a string, or every match of a regular expression, replaced.
struct Replace : Normalizer {
  std::string pattern;  // as tokenizer.json gives it
  bool is_regex = false;
  std::regex regex;     // when is_regex
  std::string content;
  std::string normalize(std::string_view text) const override;
  std::string describe() const override;
  bool local() const override;  // a pattern that cannot match across a space before text
};

struct Prepend : Normalizer {  // a string before non-empty text
  std::string prefix;
  std::string normalize(std::string_view text) const override;
  std::string describe() const override { return "Prepend"; }
  bool local() const override { return false; }
};

struct Precompiled : Normalizer {  // SentencePiece's rules (precompiled_charsmap.hpp)
  explicit Precompiled(PrecompiledCharsmap m) : charsmap(std::move(m)) {}
  PrecompiledCharsmap charsmap;
  std::string normalize(std::string_view text) const override { return charsmap.normalize(text); }
  std::string describe() const override { return "Precompiled (SentencePiece charsmap)"; }
};

struct NormalizerSequence : Normalizer {
  std::vector<std::unique_ptr<Normalizer>> steps;
  std::string normalize(std::string_view text) const override;
  std::string describe() const override { return describe_steps(steps); }
  bool local() const override {
    for (const auto& step : steps)
      if (!step->local()) return false;
    return true;
  }
};

}  // namespace attend::runtime::hf
