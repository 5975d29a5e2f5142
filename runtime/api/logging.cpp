#include "logging.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace attend {
namespace {

constexpr const char* kNames[] = {"off", "critical", "error", "warning", "info", "debug", "trace"};

// $ATTEND_LOG_LEVEL, read once; warning when unset or not a level's name.
LogLevel level_from_environment() {
  const char* value = std::getenv("ATTEND_LOG_LEVEL");
  if (value != nullptr)
    for (int i = 0; i < 7; ++i)
      if (std::strcmp(value, kNames[i]) == 0) return static_cast<LogLevel>(i);
  return LogLevel::warning;
}

std::atomic<int>& current_level() {
  static std::atomic<int> level{static_cast<int>(level_from_environment())};
  return level;
}

}  // namespace

void set_log_level(LogLevel level) {
  const int value = static_cast<int>(level);
  if (value < 0 || value > 6) throw Error("set_log_level: " + std::to_string(value) + " is not a log level (0 off … 6 trace)");
  current_level().store(value, std::memory_order_relaxed);
}

LogLevel log_level() { return static_cast<LogLevel>(current_level().load(std::memory_order_relaxed)); }

bool log_enabled(LogLevel level) {
  return level != LogLevel::off && static_cast<int>(level) <= current_level().load(std::memory_order_relaxed);
}

void log_line(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  const std::string line = std::string("[attend] [") + kNames[static_cast<int>(level)] + "] " + message + "\n";
  for (std::size_t written = 0; written < line.size();) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + written, line.size() - written);
    if (n <= 0) return;  // a closed or full stderr loses the log, never the work
    written += static_cast<std::size_t>(n);
  }
}

}  // namespace attend
