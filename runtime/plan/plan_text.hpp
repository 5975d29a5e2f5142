// Sizes and counts as `attend plan` prints them, for every kind of plan.
#pragma once

#include <cstdio>
#include <string>

namespace attend::runtime {

inline std::string human_bytes(double b) {
  char s[32];
  if (b >= 1 << 30) std::snprintf(s, sizeof s, "%.2f GiB", b / (1 << 30));
  else if (b >= 1 << 20) std::snprintf(s, sizeof s, "%.2f MiB", b / (1 << 20));
  else if (b >= 1 << 10) std::snprintf(s, sizeof s, "%.1f KiB", b / (1 << 10));
  else std::snprintf(s, sizeof s, "%.0f B", b);
  return s;
}

inline std::string human_count(double v) {
  char s[32];
  if (v >= 1e9) std::snprintf(s, sizeof s, "%.2fG", v / 1e9);
  else if (v >= 1e6) std::snprintf(s, sizeof s, "%.2fM", v / 1e6);
  else if (v >= 1e3) std::snprintf(s, sizeof s, "%.1fk", v / 1e3);
  else std::snprintf(s, sizeof s, "%.0f", v);
  return s;
}

}  // namespace attend::runtime
