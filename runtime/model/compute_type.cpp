#include "model/compute_type.hpp"

#include <cstdio>

#include "attend/error.hpp"
#include "attend/options.hpp"

namespace attend::runtime {
namespace {

constexpr const char* kAccepted = "float32, int8 (int8_float32), bfloat16, int8_bfloat16, default, auto";

ComputeType make(ops::WeightType t, std::string reason) {
  ComputeType c;
  c.gemm_weights = t;
  c.kv_cache = t == ops::WeightType::f32 ? ops::KvType::f32 : ops::KvType::bf16;
  c.embedding_tables = t;  // why: compute_type.hpp
  c.name = t == ops::WeightType::s8 ? "int8" : t == ops::WeightType::bf16 ? "bfloat16" : "float32";
  c.reason = std::move(reason);
  return c;
}

std::string rate(double gflops) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", gflops);
  return text;
}

ComputeType stored_type(DType stored, const CpuGemmSpeed& cpu) {
  switch (stored) {
    case DType::i8: return make(ops::WeightType::s8, "default: the model stores int8 weights");
    case DType::bf16:
      if (cpu.bf16_faster) return make(ops::WeightType::bf16, "default: the model stores bfloat16 weights");
      return make(ops::WeightType::f32, "default: the model stores bfloat16 weights, but " + cpu.bf16_evidence +
                                            ": float32 is faster here");
    case DType::f16: return make(ops::WeightType::f32, "default: the model stores float16 weights, computed in float32 on CPUs");
    case DType::f32: break;
  }
  return make(ops::WeightType::f32, "default: the model stores float32 weights");
}

}  // namespace

CpuGemmSpeed measure_cpu_gemm_speed(ops::Isa isa) {
  CpuGemmSpeed cpu;
  cpu.isa = isa;
  if (isa < ops::Isa::avx512_bf16) {
    cpu.bf16_evidence = std::string(ops::isa_name(isa)) + " has no AVX512_BF16 (bf16 is widened to fp32)";
    return cpu;
  }
  const ops::DotRates r = ops::measured_dot_rates();
  cpu.bf16_faster = r.bf16_dot_gflops >= 0.75 * r.f32_fma_gflops;
  cpu.bf16_evidence = "vdpbf16ps runs " + rate(r.bf16_dot_gflops) + " GFLOP/s per core against the fp32 FMA's " +
                      rate(r.f32_fma_gflops);
  return cpu;
}

void name_kernel(ComputeType& c, ops::Isa isa) {
  std::string note = std::string(" (kernel ") + ops::gemm_kernel_name(isa, c.gemm_weights);
  if (c.gemm_weights == ops::WeightType::s8 && isa < ops::Isa::avx2) note += ", scalar: slow";
  c.reason += note + ")";
}

ComputeType resolve_compute_type(const std::string& requested, DType stored, const CpuGemmSpeed& cpu) {
  ComputeType c;
  if (requested == "default" || requested.empty()) {
    c = stored_type(stored, cpu);
  } else if (requested == "auto") {
    // int8's dot products run at 2× (vpmaddubsw) to 4× (vpdpbusd) the FMA's rate on a
    // quarter of the bytes: the fastest on every CPU with an 8-bit multiply-add.
    c = cpu.isa >= ops::Isa::avx2 ? make(ops::WeightType::s8, "auto: int8 is the fastest this CPU runs")
                              : make(ops::WeightType::f32, "auto: float32 (this CPU has no 8-bit multiply-add)");
  } else if (requested == "float32") {
    c = make(ops::WeightType::f32, "asked for");
  } else if (requested == "int8" || requested == "int8_float32") {
    c = make(ops::WeightType::s8, "asked for");
  } else if (requested == "int8_bfloat16") {
    c = make(ops::WeightType::s8, "asked for int8_bfloat16: int8 GEMMs, float32 between them (attend has no bf16 elementwise ops)");
  } else if (requested == "bfloat16") {
    c = make(ops::WeightType::bf16, cpu.bf16_faster ? "asked for"
                                                    : "asked for, but slower than float32 here: " + cpu.bf16_evidence);
  } else if (requested == "float16" || requested == "int8_float16" || requested == "int16") {
    throw OptionError("compute_type", "'" + requested + "'", std::string("a compute type not available on CPUs in attend; use one of: ") + kAccepted);
  } else {
    throw OptionError("compute_type", "'" + requested + "'", std::string("unknown compute type; use one of: ") + kAccepted);
  }
  return c;
}

void resolve_kv_cache_type(const std::string& requested, ComputeType& c) {
  if (requested == "default" || requested.empty()) return;
  if (requested == "float32") {
    c.kv_cache = ops::KvType::f32;
  } else if (requested == "bfloat16") {
    c.kv_cache = ops::KvType::bf16;
  } else {
    throw OptionError("kv_cache_type", "'" + requested + "'", "unknown; use one of: default, float32, bfloat16");
  }
  c.reason += "; attention caches " + requested + " as asked";
}

}  // namespace attend::runtime
