// The progress line on stderr: lines done (of total when known), sentences/s, tokens/s,
// ETA. Drawn only when stderr is a terminal, at most 10 times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace attend::cli {

class Progress {
 public:
  Progress(bool enabled, std::optional<std::uint64_t> total_lines);
  void update(std::uint64_t lines, std::uint64_t tokens, bool force = false);
  void finish();  // clears the line
  double seconds() const;

 private:
  bool enabled_;
  std::optional<std::uint64_t> total_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

// Whether `fd` is a terminal (the progress line and colours go only there).
bool is_terminal(int fd);

}  // namespace attend::cli
