// The model a command runs: a directory (--model) or a built-in preset with random
// weights (--preset, --seed), with the kernels' ISA (--isa) and the GEMMs' arithmetic
// (--compute-type).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "attend/attend.hpp"

namespace attend::cli {

struct ModelChoice {
  std::string directory;
  std::string preset;
  std::string isa;
  std::string compute_type = "default";
  std::string decoding_rules = "auto";
  std::string kv_cache_type = "default";
  std::uint64_t seed = 1;

  // `default_preset` empty: one of --model/--preset is required.
  void add_flags(CLI::App& app, const std::string& default_preset);
  attend::Model load() const;
  std::string describe() const;  // "models/en-de" or "preset base (seed 1)"

 private:
  std::string default_preset_;
};

}  // namespace attend::cli
