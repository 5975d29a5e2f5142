// Where an encoder's time goes in `attend bench`: the profile of its plan steps
// (attend::Encoder::profile) folded into the parts a user tunes — tokenisation,
// activation quantisation, each GEMM kind, attention, LayerNorm, pooling — with the
// fraction of the machine's peak of the arithmetic that ran (from bench/machine_limits).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "attend/encoder.hpp"

namespace attend::cli {

struct BreakdownPart {
  std::string key, label;  // "gemm_ffn_up", "GEMM FFN up"
  double seconds = 0;      // wall seconds of the measured time
  double multiply_adds = 0;
};

// One core's peak of the arithmetic of attend's GEMMs for a compute type at an ISA, as
// bench/machine_limits measured it.
struct ArithmeticPeak {
  std::string source, isa, step;
  double gops_per_core = 0;
};

// The peak for `compute_type` ("float32", "int8", "bfloat16") at `isa` from the JSON of
// `bench/machine_limits --json` in `path`; nullopt with `why` set where the file does
// not measure it (another ISA, a step it could not time). Throws attend::Error on a
// file that cannot be read or is not machine_limits' JSON.
std::optional<ArithmeticPeak> read_machine_limits(const std::string& path, const std::string& isa,
                                                  const std::string& compute_type, std::string& why);

struct EncoderBreakdown {
  std::vector<BreakdownPart> parts;  // in the order shown; "other": the rest of the measured time
  double total_seconds = 0;          // tokenisation + the model: the measured wall time
};

// Folds `profile` (seconds summed over `inter_threads` batches at once) and the
// tokenisation's wall seconds into parts of `model_seconds + tokenize_seconds`.
EncoderBreakdown encoder_breakdown(const std::vector<EncoderStepProfile>& profile, double tokenize_seconds,
                                   double model_seconds, int inter_threads);

// {"total_seconds", "parts": [{"part", "label", "seconds", "percent", "multiply_adds",
// "peak_percent"}], "fused", "peak"}: peak_percent is the part's arithmetic over its time
// at `threads` × the peak (null without one); the whole run's under "peak".
nlohmann::ordered_json breakdown_json(const EncoderBreakdown& b, const std::optional<ArithmeticPeak>& peak,
                                      const std::string& no_peak_why, int threads);

// The same as text lines, for `attend bench`'s report.
void print_breakdown(const nlohmann::ordered_json& j);

}  // namespace attend::cli
