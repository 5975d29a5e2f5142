// Checks for integer flags whose messages a person can act on. CLI11's PositiveNumber
// and NonNegativeNumber answer "Value 0 not in range 0.000000 to 1.79769e+308".
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

namespace attend::cli {

// Accepts a whole number ≥ lowest; CLI11 prefixes the message with the flag's name.
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

}  // namespace attend::cli
