#include "onednn_yardsticks.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "attend/ops/isa.hpp"

namespace attend::bench {
namespace {

struct OnednnLevel {
  dnnl::cpu_isa isa;
  const char* env_name;  // as ONEDNN_MAX_CPU_ISA spells it
};

// oneDNN's level for the kernels attend runs at `isa`.
OnednnLevel onednn_level_of(ops::Isa isa) {
  switch (isa) {
    case ops::Isa::sse2: return {dnnl::cpu_isa::sse41, "SSE41"};
    case ops::Isa::avx2: return {dnnl::cpu_isa::avx2, "AVX2"};
    case ops::Isa::avx512: return {dnnl::cpu_isa::avx512_core, "AVX512_CORE"};
    case ops::Isa::avx512_vnni: return {dnnl::cpu_isa::avx512_core_vnni, "AVX512_CORE_VNNI"};
    case ops::Isa::avx512_bf16: break;
  }
  return {dnnl::cpu_isa::avx512_core_bf16, "AVX512_CORE_BF16"};
}

// oneDNN's levels are bit sets, each containing the ones below it.
bool within(dnnl::cpu_isa inner, dnnl::cpu_isa outer) {
  return (static_cast<unsigned>(inner) & static_cast<unsigned>(outer)) == static_cast<unsigned>(inner);
}

}  // namespace

Yardsticks describe_isas_and_yardsticks(const char* program) {
  const ops::Isa attend = ops::active_isa();
  const std::string onednn = onednn_effective_isa();
  benchmark::AddCustomContext("attend_isa", ops::isa_name(attend));
  benchmark::AddCustomContext("onednn_isa", onednn);
  const OnednnLevel same = onednn_level_of(attend);
  if (attend != ops::available_isas().front() && !within(dnnl::get_effective_cpu_isa(), same.isa))
    std::fprintf(stderr,
                 "%s: attend's kernels run at %s (ATTEND_ISA) but oneDNN's at %s: add ONEDNN_MAX_CPU_ISA=%s to compare "
                 "like with like\n",
                 program, ops::isa_name(attend), onednn.c_str(), same.env_name);
  Yardsticks y;
  for (OnednnPrecision p : {OnednnPrecision::f32, OnednnPrecision::bf16, OnednnPrecision::u8s8}) {
    y.available[static_cast<int>(p)] = onednn_has_matmul(p);
    if (!y.has(p))
      std::fprintf(stderr, "%s: oneDNN has no %s matmul at %s on this CPU: its %s yardstick runs are skipped\n", program,
                   onednn_precision_name(p), onednn.c_str(), onednn_precision_name(p));
  }
  return y;
}

}  // namespace attend::bench
