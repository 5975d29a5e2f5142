// nlohmann::json's messages begin with the library's own tag
// ("[json.exception.parse_error.101] parse error at line 1, column 15: …"); a user gets
// the part after it, which names the line, column and reason.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace attend::runtime {

inline std::string json_reason(const nlohmann::json::exception& e) {
  std::string s = e.what();
  if (s.rfind("[json.exception.", 0) == 0)
    if (const auto end = s.find("] "); end != std::string::npos) s.erase(0, end + 2);
  return s;
}

}  // namespace attend::runtime
