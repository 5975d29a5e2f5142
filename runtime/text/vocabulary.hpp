// A token vocabulary: ids ↔ token strings, read from CTranslate2-style files (one token
// per line, or a JSON list of strings). Used where text arrives as tokens
// (`--input-format tokens`) and for models without a SentencePiece model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace attend::runtime {

class Vocabulary {
 public:
  Vocabulary() = default;
  // `unk` is appended when the list lacks it (CTranslate2's rule: OpenNMT vocabularies
  // leave <unk> out and the embedding table has one more row for it).
  Vocabulary(std::vector<std::string> tokens, const std::string& unk);

  // Reads `path`: .json (a list of strings) or anything else as one token per line
  // (LF or CRLF line ends, the last one optional). Errors name the file.
  static Vocabulary from_file(const std::string& path, const std::string& unk);
  // The same from the file's content; `origin` names it (and .json says JSON).
  static Vocabulary from_text(const std::string& text, const std::string& origin, const std::string& unk);

  std::int64_t size() const { return static_cast<std::int64_t>(tokens_.size()); }
  const std::string& token(std::int32_t id) const;  // throws on an id outside [0, size)
  std::optional<std::int32_t> find(const std::string& token) const;
  std::int32_t id_or_unk(const std::string& token) const { return find(token).value_or(unk_id_); }
  std::int32_t unk_id() const { return unk_id_; }
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int32_t> ids_;
  std::int32_t unk_id_ = 0;
};

}  // namespace attend::runtime
