#include "text/hf/pre_tokenizers.hpp"

#include "text/hf/unicode_data.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

bool is_ascii_punctuation(char32_t c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

// Splits every split at the characters for which `is_delimiter` holds.
template <class Predicate>
void split_at_characters(std::vector<Split>& splits, Predicate is_delimiter, SplitBehavior behavior) {
  split_each(splits, [&](std::string_view text) { return split_matches(character_matches(text, is_delimiter), behavior); });
}

// The matches of std::regex `re` in `text`, and the text between them.
std::vector<Match> regex_matches(std::string_view text, const std::regex& re) {
  std::vector<Match> matches;
  std::size_t last = 0;
  for (auto it = std::cregex_iterator(text.data(), text.data() + text.size(), re); it != std::cregex_iterator(); ++it) {
    const auto begin = static_cast<std::size_t>(it->position()), end = begin + static_cast<std::size_t>(it->length());
    if (begin == end) continue;  // an empty match splits nothing
    if (last < begin) matches.push_back({last, begin, false});
    matches.push_back({begin, end, true});
    last = end;
  }
  if (last < text.size()) matches.push_back({last, text.size(), false});
  return matches;
}

}  // namespace

bool is_bert_punctuation(char32_t c) { return is_ascii_punctuation(c) || (c >= 0x80 && is_punctuation_v8(c)); }

void BertPreTokenizer::pre_tokenize(std::vector<Split>& splits) const {
  split_at_characters(splits, is_white_space, SplitBehavior::removed);
  split_at_characters(splits, is_bert_punctuation, SplitBehavior::isolated);
}

void WhitespacePreTokenizer::pre_tokenize(std::vector<Split>& splits) const {
  split_each(splits, [](std::string_view text) {
    // Maximal runs of one class, word or other; white space separates them.
    enum Kind { space, word, other };
    std::vector<Range> parts;
    Kind run = space;
    for (std::size_t i = 0; i < text.size();) {
      const std::size_t begin = i;
      const char32_t c = next_code_point(text, i);
      const Kind kind = is_word_character(c) ? word : is_white_space(c) ? space : other;
      if (kind != space && kind == run)
        parts.back().size += i - begin;
      else if (kind != space)
        parts.push_back({begin, i - begin});
      run = kind;
    }
    return parts;
  });
}

void WhitespaceSplit::pre_tokenize(std::vector<Split>& splits) const {
  split_at_characters(splits, is_white_space, SplitBehavior::removed);
}

void Punctuation::pre_tokenize(std::vector<Split>& splits) const {
  split_at_characters(splits, is_bert_punctuation, behavior);
}

void Digits::pre_tokenize(std::vector<Split>& splits) const {
  split_at_characters(splits, is_numeric, individual_digits ? SplitBehavior::isolated : SplitBehavior::contiguous);
}

void CharDelimiterSplit::pre_tokenize(std::vector<Split>& splits) const {
  split_at_characters(splits, [d = delimiter](char32_t c) { return c == d; }, SplitBehavior::removed);
}

void SplitPreTokenizer::pre_tokenize(std::vector<Split>& splits) const {
  split_each(splits, [&](std::string_view text) {
    std::vector<Match> matches = is_regex ? regex_matches(text, regex)
                                 : pattern.empty() ? std::vector<Match>{{0, text.size(), false}}
                                                   : string_matches(text, pattern);
    if (invert) hf::invert(matches);
    return split_matches(matches, behavior);
  });
}

void Metaspace::pre_tokenize(std::vector<Split>& splits) const {
  for (Split& s : splits) {
    if (s.token_id >= 0) continue;
    std::string text;
    for (char c : s.text) {
      if (c == ' ')
        text.append(replacement);
      else
        text.push_back(c);
    }
    const bool starts_with_replacement = text.compare(0, replacement.size(), replacement) == 0;
    if (!starts_with_replacement && (prepend == Prepend::always || (prepend == Prepend::first && s.at_text_start)))
      text.insert(0, replacement);
    s.text = std::move(text);
  }
  if (!split) return;
  split_each(splits, [&](std::string_view text) {
    return split_matches(character_matches(text, [&](char32_t c) { return c == replacement_char; }),
                         SplitBehavior::merged_with_next);
  });
}

void PreTokenizerSequence::pre_tokenize(std::vector<Split>& splits) const {
  for (const auto& step : steps) step->pre_tokenize(splits);
}

}  // namespace attend::runtime::hf
