#include "text/vocabulary.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attend/error.hpp"

namespace attend::runtime {

Vocabulary::Vocabulary(std::vector<std::string> tokens, const std::string& unk) : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) ids_.emplace(tokens_[i], static_cast<std::int32_t>(i));  // first wins
  if (!ids_.count(unk)) {
    ids_.emplace(unk, static_cast<std::int32_t>(tokens_.size()));
    tokens_.push_back(unk);
  }
  unk_id_ = ids_.at(unk);
}

Vocabulary Vocabulary::from_file(const std::string& path, const std::string& unk) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_of(path, ": cannot open the vocabulary file");
  std::vector<std::string> tokens;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    try {
      const nlohmann::json j = nlohmann::json::parse(in);
      if (!j.is_array()) throw error_of(path, ": a JSON vocabulary must be a list of strings");
      for (const auto& t : j) {
        if (!t.is_string()) throw error_of(path, ": entry ", tokens.size(), " of the vocabulary is not a string");
        tokens.push_back(t.get<std::string>());
      }
    } catch (const nlohmann::json::exception& e) {
      throw error_of(path, ": not valid JSON (", e.what(), ")");
    }
  } else {
    bool all_crlf = true;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line.back() != '\r') all_crlf = false;
      tokens.push_back(std::move(line));
    }
    if (all_crlf && !tokens.empty())
      for (auto& t : tokens) t.pop_back();
  }
  if (tokens.empty()) throw error_of(path, ": the vocabulary is empty");
  return Vocabulary(std::move(tokens), unk);
}

const std::string& Vocabulary::token(std::int32_t id) const {
  if (id < 0 || id >= size()) throw error_of("token id ", id, " is outside the vocabulary [0, ", size(), ")");
  return tokens_[id];
}

std::optional<std::int32_t> Vocabulary::find(const std::string& token) const {
  const auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace attend::runtime
