#include "text/vocabulary.hpp"

#include <nlohmann/json.hpp>

#include "attend/error.hpp"
#include "formats/json_errors.hpp"
#include "formats/model_io.hpp"

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
  return from_text(read_text_file(path), path, unk);  // names the path: missing, a directory, unreadable
}

Vocabulary Vocabulary::from_text(const std::string& text, const std::string& path, const std::string& unk) {
  std::vector<std::string> tokens;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    try {
      const nlohmann::json j = nlohmann::json::parse(text);
      if (!j.is_array()) throw error_of(path, ": a JSON vocabulary must be a list of strings");
      for (const auto& t : j) {
        if (!t.is_string()) throw error_of(path, ": entry ", tokens.size(), " of the vocabulary is not a string");
        tokens.push_back(t.get<std::string>());
      }
    } catch (const nlohmann::json::exception& e) {
      throw error_of(path, ": not valid JSON (", json_reason(e), ")");
    }
  } else {
    // One token per line. Line ends are LF or CRLF (a file saved on Windows), the last
    // line's end optional: a '\r' before the '\n' is never part of a token, or every
    // token would be unknown.
    for (std::size_t at = 0; at < text.size();) {
      std::size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      std::size_t stop = end;
      if (stop > at && text[stop - 1] == '\r') --stop;
      tokens.emplace_back(text, at, stop - at);
      at = end + 1;
    }
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
