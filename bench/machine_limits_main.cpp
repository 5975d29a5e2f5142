// machine_limits: one core's rate of each dot-product step on every ISA this CPU runs,
// the memory copy bandwidth, and which of those bound attend's GEMMs at the ISA its
// kernels run (--isa, else $ATTEND_ISA, else the best).
//
//   machine_limits [--isa NAME] [--json] [--quick]
//
// Text: one line per measured rate ("fp32 FMA peak (avx2, vfmadd231ps ymm, 1 core):
// 76.1 GFLOP/s"), then the copy bandwidth, then one "attend at ISA:" line per compute
// type. --json prints the same as one JSON object (bench/vs_ctranslate2.py and
// bench/compare_report.py read it). --quick: rough rates in ~0.1 s (for tests).
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "attend/ops/gemm.hpp"
#include "attend/ops/isa.hpp"
#include "machine_limits.hpp"

namespace {

using attend::bench::KernelPeaks;
using attend::bench::MachineLimits;
using attend::bench::StepRate;
using attend::ops::Isa;
using attend::ops::WeightType;

struct Bound {
  const char* compute_type;
  const StepRate* step;
  WeightType weights;
};

void print_text(const MachineLimits& m, Isa isa, const Bound (&bounds)[3]) {
  for (const StepRate& r : m.rates)
    std::printf("%s peak (%s, %s, 1 core): %.1f %s\n", r.label.c_str(), attend::ops::isa_name(r.isa), r.step.c_str(),
                r.gops_per_core, r.unit());
  std::printf("memory copy (1 thread, read+write): %.1f GB/s\n", m.copy_gbytes_per_s);
  for (const Bound& b : bounds) {
    const char* kernel = attend::ops::gemm_kernel_name(isa, b.weights);
    if (b.step)
      std::printf("attend at %s: %s GEMM bound %.1f %s per core (%s; kernel %s)\n", attend::ops::isa_name(isa),
                  b.compute_type, b.step->gops_per_core, b.step->unit(), b.step->key.c_str(), kernel);
    else
      std::printf("attend at %s: %s GEMM bound not measured (kernel %s)\n", attend::ops::isa_name(isa), b.compute_type,
                  kernel);
  }
}

void print_json(const MachineLimits& m, Isa isa, const Bound (&bounds)[3]) {
  std::printf("{\"rates\": [");
  const char* sep = "";
  for (const StepRate& r : m.rates) {
    std::printf("%s\n  {\"key\": \"%s\", \"type\": \"%s\", \"isa\": \"%s\", \"step\": \"%s\", \"gops_per_core\": %.3f, "
                "\"unit\": \"%s\"}",
                sep, r.key.c_str(), r.type.c_str(), attend::ops::isa_name(r.isa), r.step.c_str(), r.gops_per_core,
                r.unit());
    sep = ",";
  }
  std::printf("],\n \"copy_gbytes_per_s\": %.3f,\n \"attend\": {\"isa\": \"%s\"", m.copy_gbytes_per_s,
              attend::ops::isa_name(isa));
  for (const Bound& b : bounds) {
    std::printf(",\n  \"%s\": {\"kernel\": \"%s\", ", b.compute_type, attend::ops::gemm_kernel_name(isa, b.weights));
    if (b.step)
      std::printf("\"step\": \"%s\", \"gops_per_core\": %.3f}", b.step->key.c_str(), b.step->gops_per_core);
    else
      std::printf("\"step\": null, \"gops_per_core\": null}");
  }
  std::printf("}}\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, quick = false;
  Isa isa;
  try {
    isa = attend::ops::active_isa();  // $ATTEND_ISA, else the best
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--json") == 0) {
        json = true;
      } else if (std::strcmp(argv[i], "--quick") == 0) {
        quick = true;
      } else if (std::strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
        isa = attend::ops::parse_isa(argv[++i]);
        if (!attend::ops::isa_available(isa))
          throw std::runtime_error(std::string("--isa ") + argv[i] + ": this CPU cannot run it (best: " +
                                   attend::ops::isa_name(attend::ops::available_isas().front()) + ")");
      } else {
        std::fprintf(stderr, "usage: machine_limits [--isa avx512_amx|avx512_bf16|avx512_vnni|avx512|avx2|sse2] [--json] [--quick]\n");
        return 2;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "machine_limits: %s\n", e.what());
    return 2;
  }
  const MachineLimits m = attend::bench::measure_machine_limits(quick);
  const KernelPeaks k = attend::bench::kernel_peaks(m, isa);
  const Bound bounds[3] = {{"float32", k.float32, WeightType::f32},
                           {"int8", k.int8, WeightType::s8},
                           {"bfloat16", k.bfloat16, WeightType::bf16}};
  if (json)
    print_json(m, isa, bounds);
  else
    print_text(m, isa, bounds);
  return 0;
}
