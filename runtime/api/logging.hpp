// The library's log (attend::set_log_level, attend.hpp): whole lines on standard error.
#pragma once

#include <string>

#include "attend/attend.hpp"

namespace attend {

bool log_enabled(LogLevel level);
// "[attend] [info] message\n" in one write, so lines of threads never interleave;
// nothing below the current level.
void log_line(LogLevel level, const std::string& message);

}  // namespace attend
