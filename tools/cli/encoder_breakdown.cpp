#include "encoder_breakdown.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "attend/error.hpp"

namespace attend::cli {
namespace {

// The parts, in the order shown. GELU has none: it runs in the FFN-up GEMM's epilogue,
// in the kernel's registers, so its time is inside that GEMM's (see "fused").
const std::vector<std::pair<std::string, std::string>>& part_labels() {
  static const std::vector<std::pair<std::string, std::string>> labels = {
      {"tokenization", "tokenisation"},
      {"embedding", "embedding lookup"},
      {"activation_quantization", "activation quantisation (int8)"},
      {"outlier_rows", "outlier rows (int8)"},
      {"gemm_qkv", "GEMM QKV"},
      {"gemm_attention_output", "GEMM attention output"},
      {"gemm_ffn_up", "GEMM FFN up (+ GELU)"},
      {"gemm_ffn_down", "GEMM FFN down"},
      {"attention", "attention"},
      {"layer_norm", "LayerNorm"},
      {"pooling", "pooling (+ normalize)"},
      {"heads", "heads (pooler, dense, classifier)"},
      {"other", "other (batching, packing, API)"},
  };
  return labels;
}

// The part of a plan step, by its kind and the last component of its name
// ("encoder.layers.3.fc1" → "fc1").
std::string part_of(const EncoderStepProfile& p) {
  const std::string role = p.name.substr(p.name.rfind('.') + 1);
  if (p.kind == "embed") return "embedding";
  if (p.kind == "layer_norm") return "layer_norm";
  if (p.kind == "attention") return "attention";
  if (p.kind == "outlier_rows") return "outlier_rows";
  if (p.kind == "pool" || p.kind == "normalize") return "pooling";
  if (p.kind == "linear" && p.phase == "body") {
    if (role == "qkv_proj") return "gemm_qkv";
    if (role == "out_proj") return "gemm_attention_output";
    if (role == "fc1") return "gemm_ffn_up";
    if (role == "fc2") return "gemm_ffn_down";
  }
  return "heads";  // the heads' first_token, tanh and linear steps
}

}  // namespace

std::optional<ArithmeticPeak> read_machine_limits(const std::string& path, const std::string& isa,
                                                  const std::string& compute_type, std::string& why) {
  std::ifstream in(path);
  if (!in) throw Error("--machine-limits " + path + ": cannot be read");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw Error("--machine-limits " + path + ": not the JSON of bench/machine_limits --json (" + e.what() + ")");
  }
  const auto& attend = j.is_object() ? j.value("attend", nlohmann::json()) : nlohmann::json();
  if (!attend.is_object() || !attend.contains("isa"))
    throw Error("--machine-limits " + path + ": not the JSON of bench/machine_limits --json (no \"attend\" bounds)");
  const std::string measured_isa = attend["isa"].is_string() ? attend["isa"].get<std::string>() : "";
  if (measured_isa != isa) {
    why = "--machine-limits measured attend's kernels at " + measured_isa + ", these run at " + isa +
          " (machine_limits --isa " + isa + ")";
    return std::nullopt;
  }
  const auto& bound = attend.value(compute_type, nlohmann::json());
  if (!bound.is_object() || !bound.contains("gops_per_core") || !bound["gops_per_core"].is_number() ||
      bound["gops_per_core"].get<double>() <= 0) {
    why = "--machine-limits has no " + compute_type + " peak at " + isa;
    return std::nullopt;
  }
  return ArithmeticPeak{path, isa, bound.value("step", std::string()), bound["gops_per_core"].get<double>()};
}

EncoderBreakdown encoder_breakdown(const std::vector<EncoderStepProfile>& profile, double tokenize_seconds,
                                   double model_seconds, int inter_threads) {
  // Step seconds add up over the batches that ran at once: their wall share is 1/inter.
  const double wall = 1.0 / std::max(inter_threads, 1);
  std::map<std::string, BreakdownPart> parts;
  for (const auto& [key, label] : part_labels()) parts[key] = {key, label};
  parts["tokenization"].seconds = tokenize_seconds;
  for (const auto& p : profile) {
    BreakdownPart& part = parts[part_of(p)];
    part.seconds += (p.seconds - p.quantize_seconds) * wall;
    part.multiply_adds += p.multiply_adds;
    parts["activation_quantization"].seconds += p.quantize_seconds * wall;
  }
  EncoderBreakdown b;
  b.total_seconds = tokenize_seconds + model_seconds;
  double shown = 0;
  for (const auto& [key, label] : part_labels()) {
    BreakdownPart& part = parts[key];
    part.seconds = std::max(0.0, part.seconds);  // a clock's rounding never makes a part negative
    if (key == "other") part.seconds = std::max(0.0, b.total_seconds - shown);
    shown += part.seconds;
    b.parts.push_back(part);
  }
  return b;
}

nlohmann::ordered_json breakdown_json(const EncoderBreakdown& b, const std::optional<ArithmeticPeak>& peak,
                                      const std::string& no_peak_why, int threads) {
  nlohmann::ordered_json j;
  j["total_seconds"] = b.total_seconds;
  auto& parts = j["parts"] = nlohmann::ordered_json::array();
  double multiply_adds = 0;
  for (const BreakdownPart& p : b.parts) {
    multiply_adds += p.multiply_adds;
    nlohmann::ordered_json part = {{"part", p.key},
                                   {"label", p.label},
                                   {"seconds", p.seconds},
                                   {"percent", b.total_seconds > 0 ? 100 * p.seconds / b.total_seconds : 0.0},
                                   {"multiply_adds", p.multiply_adds},
                                   {"peak_percent", nullptr}};
    // Its seconds are wall seconds of all `threads` (batches at once × their intra threads).
    if (peak && p.multiply_adds > 0 && p.seconds > 0)
      part["peak_percent"] = 100 * 2 * p.multiply_adds / p.seconds / (peak->gops_per_core * 1e9 * threads);
    parts.push_back(part);
  }
  j["fused"] = nlohmann::ordered_json::array(
      {{{"part", "gelu"}, {"into", "gemm_ffn_up"}, {"why", "applied in the GEMM kernel's registers as it stores"}}});
  auto& pk = j["peak"];
  pk["multiply_adds"] = multiply_adds;
  pk["threads"] = threads;
  if (peak) {
    pk["source"] = peak->source, pk["isa"] = peak->isa, pk["step"] = peak->step;
    pk["gops_per_core"] = peak->gops_per_core;
    pk["percent"] = b.total_seconds > 0 ? 100 * 2 * multiply_adds / b.total_seconds / (peak->gops_per_core * 1e9 * threads)
                                        : 0.0;
  } else {
    pk["source"] = nullptr, pk["percent"] = nullptr, pk["why_not"] = no_peak_why;
  }
  return j;
}

void print_breakdown(const nlohmann::ordered_json& j) {
  std::printf("\nwhere the time goes (%% of the measured %.1f ms; peak: of the arithmetic's peak over the part's time):\n",
              1e3 * j["total_seconds"].get<double>());
  for (const auto& p : j["parts"]) {
    std::printf("  %5.1f%%  %-34s %10.3f ms", p["percent"].get<double>(), p["label"].get<std::string>().c_str(),
                1e3 * p["seconds"].get<double>());
    if (!p["peak_percent"].is_null()) std::printf("   %5.1f%% of peak", p["peak_percent"].get<double>());
    std::printf("\n");
  }
  for (const auto& f : j["fused"])
    std::printf("  (%s: fused into %s, %s)\n", f["part"].get<std::string>().c_str(), f["into"].get<std::string>().c_str(),
                f["why"].get<std::string>().c_str());
  const auto& pk = j["peak"];
  if (pk["percent"].is_null()) {
    std::printf("arithmetic: %.3g multiply-adds; fraction of peak n/a: %s\n", pk["multiply_adds"].get<double>(),
                pk["why_not"].get<std::string>().c_str());
    return;
  }
  std::printf("arithmetic: %.3g multiply-adds at %.1f%% of the peak end to end (%d thread(s) × %.1f GOP/s, %s at %s, %s)\n",
              pk["multiply_adds"].get<double>(), pk["percent"].get<double>(), pk["threads"].get<int>(),
              pk["gops_per_core"].get<double>(), pk["step"].get<std::string>().c_str(), pk["isa"].get<std::string>().c_str(),
              pk["source"].get<std::string>().c_str());
}

}  // namespace attend::cli
