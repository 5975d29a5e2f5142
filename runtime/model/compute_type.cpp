#include "model/compute_type.hpp"

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

// What the kernels on this ISA are, for the reason: a type without native instructions
// runs on emulating kernels, which the user should know.
std::string kernel_note(ops::WeightType t, ops::Isa isa) {
  std::string note = std::string(" (kernel ") + ops::gemm_kernel_name(isa, t);
  if (t == ops::WeightType::s8 && isa < ops::Isa::avx512_vnni)
    note += isa >= ops::Isa::avx2 ? ", no AVX512_VNNI: vpmaddubsw with 7-bit activations" : ", scalar: slow";
  if (t == ops::WeightType::bf16 && isa < ops::Isa::avx512_bf16) note += ", no AVX512_BF16: widened to fp32, slower than float32";
  return note + ")";
}

ComputeType stored_type(DType stored, ops::Isa isa) {
  switch (stored) {
    case DType::i8: return make(ops::WeightType::s8, "default: the model stores int8 weights");
    case DType::bf16:
      if (isa >= ops::Isa::avx512_bf16) return make(ops::WeightType::bf16, "default: the model stores bfloat16 weights");
      return make(ops::WeightType::f32, std::string("default: the model stores bfloat16 weights, but ") + ops::isa_name(isa) +
                                            " has no AVX512_BF16, where float32 is faster");
    case DType::f16: return make(ops::WeightType::f32, "default: the model stores float16 weights, computed in float32 on CPUs");
    case DType::f32: break;
  }
  return make(ops::WeightType::f32, "default: the model stores float32 weights");
}

}  // namespace

ComputeType resolve_compute_type(const std::string& requested, DType stored, ops::Isa isa) {
  ComputeType c;
  if (requested == "default" || requested.empty()) {
    c = stored_type(stored, isa);
  } else if (requested == "auto") {
    c = isa >= ops::Isa::avx2 ? make(ops::WeightType::s8, "auto: int8 is the fastest this CPU runs")
                              : make(ops::WeightType::f32, "auto: float32 (this CPU has no 8-bit multiply-add)");
  } else if (requested == "float32") {
    c = make(ops::WeightType::f32, "asked for");
  } else if (requested == "int8" || requested == "int8_float32") {
    c = make(ops::WeightType::s8, "asked for");
  } else if (requested == "int8_bfloat16") {
    c = make(ops::WeightType::s8, "asked for int8_bfloat16: int8 GEMMs, float32 between them (attend has no bf16 elementwise ops)");
  } else if (requested == "bfloat16") {
    c = make(ops::WeightType::bf16, "asked for");
  } else if (requested == "float16" || requested == "int8_float16" || requested == "int16") {
    throw OptionError("compute_type", "'" + requested + "'", std::string("not available on CPUs in attend; use one of: ") + kAccepted);
  } else {
    throw OptionError("compute_type", "'" + requested + "'", std::string("unknown; use one of: ") + kAccepted);
  }
  c.reason += kernel_note(c.gemm_weights, isa);
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
