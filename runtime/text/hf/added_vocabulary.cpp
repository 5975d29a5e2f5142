#include "text/hf/added_vocabulary.hpp"

#include <algorithm>

#include "text/hf/unicode_data.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {
namespace {

char32_t last_code_point(std::string_view s) {
  std::size_t start = s.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
  return next_code_point(s, start);
}

// The offset where the white space at the end of s[0, end) begins.
std::size_t trailing_space_start(std::string_view s, std::size_t end) {
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
    std::size_t i = start;
    if (!is_white_space(next_code_point(s, i))) break;
    end = start;
  }
  return end;
}

// The offset where the white space that begins at s[begin] ends.
std::size_t leading_space_end(std::string_view s, std::size_t begin) {
  while (begin < s.size()) {
    std::size_t i = begin;
    if (!is_white_space(next_code_point(s, i))) break;
    begin = i;
  }
  return begin;
}

}  // namespace

void AddedVocabulary::add(std::vector<AddedToken> tokens, const Model& model, const Normalizer* normalizer) {
  std::int32_t next_id = static_cast<std::int32_t>(model.vocab_size());
  for (AddedToken& t : tokens) {
    if (t.content.empty()) continue;
    if (const std::int32_t id = find(t.content); id >= 0) {
      t.id = id;
    } else if (const std::int32_t model_id = model.token_to_id(t.content); model_id >= 0) {
      t.id = model_id;
    } else {
      t.id = next_id++;
    }
    std::erase_if(tokens_, [&](const AddedToken& old) { return old.id == t.id || old.content == t.content; });
    tokens_.push_back(std::move(t));
  }
  raw_ = {}, normalized_ = {};
  for (std::size_t k = 0; k < tokens_.size(); ++k) {
    const AddedToken& t = tokens_[k];
    std::string text = t.normalized && normalizer ? normalizer->normalize(t.content) : t.content;
    if (text.empty()) continue;  // matches nothing
    (t.normalized ? normalized_ : raw_).patterns.push_back({std::move(text), k});
  }
  raw_.index(), normalized_.index();
}

void AddedVocabulary::PatternSet::index() {
  std::stable_sort(patterns.begin(), patterns.end(), [](const Pattern& a, const Pattern& b) {
    const auto fa = static_cast<unsigned char>(a.text[0]), fb = static_cast<unsigned char>(b.text[0]);
    return fa != fb ? fa < fb : a.text.size() > b.text.size();
  });
  by_first_byte.fill({0, 0});
  for (std::size_t k = 0; k < patterns.size(); ++k) {
    auto& range = by_first_byte[static_cast<unsigned char>(patterns[k].text[0])];
    if (range.first == range.second) range.first = k;
    range.second = k + 1;
  }
}

void AddedVocabulary::split_at(std::vector<Split>& splits, const PatternSet& set) const {
  if (set.patterns.empty()) return;
  std::vector<Split> out;
  for (Split& s : splits) {
    if (s.token_id >= 0) {
      out.push_back(std::move(s));
      continue;
    }
    const std::string_view text = s.text;
    std::size_t done = 0;  // text before this is in `out`
    const auto emit = [&](std::size_t begin, std::size_t end, std::int32_t id) {
      if (begin < end) out.push_back(Split{std::string(text.substr(begin, end - begin)), id, s.at_text_start && begin == 0});
    };
    for (std::size_t pos = 0; pos < text.size();) {
      // The longest pattern at the leftmost position where one matches.
      const Pattern* match = nullptr;
      const auto [first, last] = set.by_first_byte[static_cast<unsigned char>(text[pos])];
      for (std::size_t k = first; k < last && !match; ++k)
        if (text.compare(pos, set.patterns[k].text.size(), set.patterns[k].text) == 0) match = &set.patterns[k];
      if (!match) {
        ++pos;
        continue;
      }
      const AddedToken& token = tokens_[match->token];
      std::size_t begin = pos, end = pos + match->text.size();
      pos = end;
      if (token.single_word) {
        const bool word_before = begin > 0 && is_word_character(last_code_point(text.substr(0, begin)));
        std::size_t i = end;
        const bool word_after = end < text.size() && is_word_character(next_code_point(text, i));
        if (word_before || word_after) continue;
      }
      if (token.lstrip) begin = std::max(trailing_space_start(text, begin), done);
      if (token.rstrip) end = leading_space_end(text, end);
      emit(done, begin, -1);
      emit(begin, end, token.id);
      done = end;
    }
    emit(done, text.size(), -1);
  }
  splits = std::move(out);
}

std::vector<Split> AddedVocabulary::extract_and_normalize(std::string_view text, const Normalizer* normalizer) const {
  std::vector<Split> splits;
  if (text.empty()) return splits;
  splits.push_back(Split{std::string(text), -1, true});
  split_at(splits, raw_);
  for (Split& s : splits)
    if (s.token_id < 0 && normalizer) s.text = normalizer->normalize(s.text);
  std::erase_if(splits, [](const Split& s) { return s.text.empty(); });
  split_at(splits, normalized_);
  return splits;
}

std::int32_t AddedVocabulary::find(std::string_view content) const {
  for (const AddedToken& t : tokens_)
    if (t.content == content) return t.id;
  return -1;
}

const std::string* AddedVocabulary::content(std::int32_t id) const {
  for (const AddedToken& t : tokens_)
    if (t.id == id) return &t.content;
  return nullptr;
}

std::int32_t AddedVocabulary::max_id() const {
  std::int32_t m = -1;
  for (const AddedToken& t : tokens_) m = std::max(m, t.id);
  return m;
}

}  // namespace attend::runtime::hf
