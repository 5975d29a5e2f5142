// How `tokenizers` splits a text at the matches of a pattern (NormalizedString::split):
// the matches and the text between them cover the text, and the behaviour says what
// becomes of each match.
#pragma once

#include <string_view>
#include <vector>

#include "text/hf/pipeline.hpp"
#include "text/hf/utf8.hpp"

namespace attend::runtime::hf {

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

// One stretch of a text: a match of the pattern or the text between two.
struct Match {
  std::size_t begin, end;
  bool is_match;
};

// The parts of a text from its matches (which cover it, in order).
std::vector<Range> split_matches(const std::vector<Match>& matches, SplitBehavior behavior);

// Every character for which `is_delimiter` holds is a match of its own.
template <class Predicate>
std::vector<Match> character_matches(std::string_view text, Predicate&& is_delimiter) {
  std::vector<Match> matches;
  std::size_t last = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t begin = i;
    const char32_t c = next_code_point(text, i);
    if (!is_delimiter(c)) continue;
    if (last < begin) matches.push_back({last, begin, false});
    matches.push_back({begin, i, true});
    last = i;
  }
  if (last < text.size()) matches.push_back({last, text.size(), false});
  return matches;
}

// The non-overlapping occurrences of `needle` (not empty), from the left.
std::vector<Match> string_matches(std::string_view text, std::string_view needle);

// Swaps matches and the text between them (Split's `invert`).
void invert(std::vector<Match>& matches);

}  // namespace attend::runtime::hf
