#include "text/hf/literal_regex.hpp"

#include "attend/error.hpp"

namespace attend::runtime::hf {

std::regex compile_literal_regex(const std::string& pattern) {
  const auto refuse = [&](std::string_view why) {
    return error_of("the regular expression \"", pattern, "\" ", why,
                    " (attend runs ASCII literals, classes and quantifiers only)");
  };
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(pattern[i]);
    if (c >= 0x80) throw refuse("has non-ASCII characters");
    if (c == '.') throw refuse("has '.', which would match part of a character");
    if (c == '[' && i + 1 < pattern.size() && pattern[i + 1] == '^') throw refuse("has a negated class");
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (std::string_view("sSwWdDbBpPhHxXuUuRXK").find(e) != std::string_view::npos || (e >= '0' && e <= '9'))
        throw refuse(std::string("has \\") + e + ", whose meaning depends on the regex dialect or on Unicode");
    }
  }
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw refuse(std::string("does not compile: ") + e.what());
  }
}

std::string escape_regex_replacement(std::string_view content) {
  std::string out;
  for (char c : content) {
    if (c == '$') out.push_back('$');
    out.push_back(c);
  }
  return out;
}

}  // namespace attend::runtime::hf
