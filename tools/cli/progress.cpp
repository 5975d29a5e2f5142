#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace attend::cli {

bool is_terminal(int fd) { return ::isatty(fd) == 1; }

Progress::Progress(bool enabled, std::optional<std::uint64_t> total_lines)
    : enabled_(enabled), total_(total_lines), start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(std::uint64_t lines, std::uint64_t tokens, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;  // the first draw is immediate
  last_draw_ = now;
  const double s = std::max(seconds(), 1e-9);
  char eta[32] = "";
  if (total_ && lines > 0 && *total_ >= lines)
    std::snprintf(eta, sizeof eta, ", ETA %.0fs", (double(*total_ - lines)) * s / double(lines));
  if (total_) {
    std::fprintf(stderr, "\r%llu/%llu lines (%.0f%%), %.1f sent/s, %.0f tok/s%s   ", (unsigned long long)lines,
                 (unsigned long long)*total_, *total_ ? 100.0 * double(lines) / double(*total_) : 100.0, lines / s,
                 tokens / s, eta);
  } else {
    std::fprintf(stderr, "\r%llu lines, %.1f sent/s, %.0f tok/s   ", (unsigned long long)lines, lines / s, tokens / s);
  }
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace attend::cli
