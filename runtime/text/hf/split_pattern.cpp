#include "text/hf/split_pattern.hpp"

#include <algorithm>

namespace attend::runtime::hf {

std::vector<Range> split_matches(const std::vector<Match>& matches, SplitBehavior behavior) {
  // (range, keep) pairs as tokenizers builds them, then the kept ones.
  std::vector<std::pair<Match, bool>> parts;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::isolated:
      for (const Match& m : matches) parts.push_back({m, true});
      break;
    case SplitBehavior::removed:
      for (const Match& m : matches) parts.push_back({m, !m.is_match});
      break;
    case SplitBehavior::contiguous:
      for (const Match& m : matches) {
        if (m.is_match == previous_match && !parts.empty())
          parts.back().first.end = m.end;
        else
          parts.push_back({m, true});
        previous_match = m.is_match;
      }
      break;
    case SplitBehavior::merged_with_previous:
      for (const Match& m : matches) {
        if (m.is_match && !previous_match && !parts.empty())
          parts.back().first.end = m.end;
        else
          parts.push_back({m, true});
        previous_match = m.is_match;
      }
      break;
    case SplitBehavior::merged_with_next:
      for (auto m = matches.rbegin(); m != matches.rend(); ++m) {
        if (m->is_match && !previous_match && !parts.empty())
          parts.back().first.begin = m->begin;
        else
          parts.push_back({*m, true});
        previous_match = m->is_match;
      }
      std::reverse(parts.begin(), parts.end());
      break;
  }
  std::vector<Range> ranges;
  for (const auto& [m, keep] : parts)
    if (keep) ranges.push_back({m.begin, m.end - m.begin});
  return ranges;
}

std::vector<Match> string_matches(std::string_view text, std::string_view needle) {
  std::vector<Match> matches;
  std::size_t last = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) {
    if (last < at) matches.push_back({last, at, false});
    matches.push_back({at, at + needle.size(), true});
    last = at + needle.size();
  }
  if (last < text.size()) matches.push_back({last, text.size(), false});
  return matches;
}

void invert(std::vector<Match>& matches) {
  for (Match& m : matches) m.is_match = !m.is_match;
}

}  // namespace attend::runtime::hf
