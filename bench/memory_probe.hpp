// Peak resident memory of this process (VmHWM), and a way to reset it, so a benchmark
// can measure how much memory one call adds at its peak.
#pragma once

#include <cstddef>

namespace attend::bench {

std::size_t peak_rss_bytes();
void reset_peak_rss();  // writes 5 to /proc/self/clear_refs; no-op where unsupported

}  // namespace attend::bench
