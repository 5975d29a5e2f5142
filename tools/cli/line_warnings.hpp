// Warnings about input lines on stderr: the first few listed as they happen (naming the
// line), every kind counted and summed up at the end — a million bad lines still give a
// short, readable stderr, and none passes silently.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace attend::cli {

class LineWarnings {
 public:
  explicit LineWarnings(std::string who) : who_(std::move(who)) {}

  // A warning about input line `line` (1-based; 0: --target-prefix). `kind` names the
  // problem for the summary, as a plural ("lines with invalid UTF-8 (repaired)").
  void add(const std::string& kind, std::uint64_t line, const std::string& what);
  // One line per kind that had warnings not listed above (call once, at the end).
  void summarize(std::FILE* to) const;
  std::uint64_t count(const std::string& kind) const;
  const std::string& who() const { return who_; }

 private:
  struct Kind {
    std::string name;
    std::uint64_t count = 0, listed = 0, first_line = 0;
  };
  std::string who_;
  std::vector<Kind> kinds_;  // in the order they first happened
  std::uint64_t listed_ = 0;
};

// "line 12: " — or "--target-prefix: " for line 0, which applies to every line.
std::string at_line(std::uint64_t number);

}  // namespace attend::cli
