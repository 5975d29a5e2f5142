#include "text/vocabulary_map.hpp"

#include <algorithm>

namespace attend::runtime {

// Parsed as CTranslate2 parses it, byte for byte: a tab ends the n-gram (spaces inside
// it separate its tokens), spaces separate the target tokens (empty ones skipped), a
// '\r' before the line end is dropped. A later line for the same n-gram replaces an
// earlier one.
VocabularyMap::VocabularyMap(const std::string& text, const std::function<std::int32_t(const std::string&)>& target_id,
                             std::vector<std::int32_t> always)
    : always_(std::move(always)) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::size_t stop = end;
    if (stop > at && text[stop - 1] == '\r') --stop;
    std::string key, token;
    std::vector<std::int32_t> values;
    bool target = false;
    std::size_t ngram = 1;
    for (std::size_t i = at; i < stop; ++i) {
      const char c = text[i];
      if (c == '\t') {
        target = true;
        std::swap(key, token);
      } else if (c == ' ' && target) {
        if (!token.empty()) values.push_back(target_id(token));
        token.clear();
      } else {
        if (c == ' ') ++ngram;
        token += c;
      }
    }
    if (!token.empty()) values.push_back(target_id(token));
    if (ngram > rules_.size()) rules_.resize(ngram);
    rules_[ngram - 1][key] = std::move(values);
    at = end + 1;
  }
  if (!rules_.empty()) {
    const auto common = rules_[0].find("");
    if (common != rules_[0].end()) always_.insert(always_.end(), common->second.begin(), common->second.end());
  }
  std::sort(always_.begin(), always_.end());
  always_.erase(std::unique(always_.begin(), always_.end()), always_.end());
}

std::vector<std::int32_t> VocabularyMap::candidates(const std::vector<std::string>& source,
                                                    const std::vector<std::int32_t>& target_prefix) const {
  std::vector<std::int32_t> out = always_;
  std::string ngram;
  for (std::size_t i = 0; i < source.size(); ++i) {
    ngram.clear();
    for (std::size_t h = 0; h < rules_.size() && i + h < source.size(); ++h) {
      if (h > 0) ngram += ' ';
      ngram += source[i + h];
      const auto it = rules_[h].find(ngram);
      if (it != rules_[h].end()) out.insert(out.end(), it->second.begin(), it->second.end());
    }
  }
  out.insert(out.end(), target_prefix.begin(), target_prefix.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::size_t VocabularyMap::rules() const {
  std::size_t n = 0;
  for (const auto& r : rules_) n += r.size();
  return n;
}

}  // namespace attend::runtime
