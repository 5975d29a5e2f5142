// A model's vocabulary: token strings ↔ ids, looked up without copying the key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace attend::runtime::hf {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Vocab {
 public:
  // A later entry for the same token replaces the earlier one, as in `tokenizers`.
  void add(std::string token, std::int32_t id);
  std::int32_t find(std::string_view token) const {  // -1 if absent
    const auto it = ids_.find(token);
    return it == ids_.end() ? -1 : it->second;
  }
  const std::string* token(std::int32_t id) const {
    const auto it = tokens_.find(id);
    return it == tokens_.end() ? nullptr : &it->second;
  }
  std::int64_t size() const { return static_cast<std::int64_t>(ids_.size()); }

 private:
  std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> ids_;
  std::unordered_map<std::int32_t, std::string> tokens_;
};

}  // namespace attend::runtime::hf
