// Checks for integer flags whose messages a person can act on (CLI11's PositiveNumber
// and NonNegativeNumber answer "Value 0 not in range 0.000000 to 1.79769e+308"), each
// showing its range in --help. The engine's limits come from include/attend/limits.h,
// so a flag accepts exactly what the C, C++ and Python APIs accept.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <string>

#include "attend/limits.h"

namespace attend::cli {

// Accepts a whole number in [lowest, highest]; CLI11 prefixes the message with the
// flag's name, and --help shows the range.
inline CLI::Validator in_range(long long lowest, long long highest) {
  const std::string range = "an integer in [" + std::to_string(lowest) + ", " + std::to_string(highest) + "]";
  return CLI::Validator(
      [lowest, highest, range](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size()) return "'" + text + "' is not " + range;
        if (value < lowest || value > highest) return "must be " + range + ", got " + text;
        return {};
      },
      range.substr(3), "in_range");
}

// Accepts a whole number ≥ lowest (no upper bound but the model's, checked once it is
// loaded).
inline CLI::Validator at_least(long long lowest) {
  const std::string bound = "an integer ≥ " + std::to_string(lowest);
  return CLI::Validator(
      [lowest, bound](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size()) return "'" + text + "' is not " + bound;
        if (value < lowest) return "must be " + bound + ", got " + text;
        return {};
      },
      bound.substr(3), "at_least");
}

// Any unsigned 64-bit integer (a seed).
inline CLI::Validator any_uint64() {
  const std::string range = "an integer in [0, 18446744073709551615]";
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size()) return "'" + text + "' is not " + range;
        return {};
      },
      range.substr(3), "any_uint64");
}

// The flags every command that runs a model shares, with the limits of limits.h.
inline CLI::Validator threads_range() { return in_range(0, ATTEND_MAX_THREADS); }
inline CLI::Validator threads_each_range() { return in_range(0, ATTEND_MAX_THREADS_EACH); }
inline CLI::Validator batch_size_range() { return in_range(1, ATTEND_MAX_BATCH_SIZE); }
inline CLI::Validator beam_range() { return in_range(1, ATTEND_MAX_BEAM_SIZE); }
// max_batch_tokens: translators take 0 (no cap), encoders at least 1.
inline CLI::Validator batch_tokens_range(long long lowest) { return in_range(lowest, ATTEND_MAX_BATCH_TOKENS); }

}  // namespace attend::cli
