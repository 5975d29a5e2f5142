// The regular expressions of tokenizer.json ("pattern": {"Regex": ...} in Replace and
// Split), which `tokenizers` runs with Oniguruma. attend runs them with std::regex
// (ECMAScript) on the UTF-8 bytes, which gives the same matches only for patterns made of
// ASCII literals, classes and quantifiers: those cannot match part of a multi-byte
// character and mean the same in both dialects. Any other pattern (., \s, \w, \p{..},
// negated classes, non-ASCII) is refused by name, so a tokenizer never silently differs.
#pragma once

#include <regex>
#include <string>
#include <string_view>

namespace attend::runtime::hf {

// Compiles `pattern`; throws attend::Error if it is outside that subset or does not compile.
std::regex compile_literal_regex(const std::string& pattern);

// `content` as a std::regex_replace format that inserts it literally.
std::string escape_regex_replacement(std::string_view content);

}  // namespace attend::runtime::hf
