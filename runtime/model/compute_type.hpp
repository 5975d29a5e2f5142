// The arithmetic a model's GEMMs run in, chosen at load from what the user asked (with
// CTranslate2's names), what the model stores, and what this CPU runs natively.
//
//   float32         fp32 weights and activations.
//   int8            int8 weights (symmetric per output row, CTranslate2's scheme) and
//                   activations quantized per row at run time, int32 sums; fp32 between
//                   the GEMMs. Aliases: int8_float32; int8_bfloat16 (attend keeps fp32
//                   between the GEMMs, so it runs as int8 and says so).
//   bfloat16        bf16 weights, activations rounded to bf16, fp32 sums.
//   default         the type the model stores: int8 stays int8, bfloat16 runs bf16
//                   where the CPU has AVX512_BF16, float16/float32 run float32.
//   auto            the fastest this CPU runs: int8 from AVX2 up, else float32.
// Everything else (LayerNorm, softmax, attention, embeddings) computes in fp32. int8 and
// bfloat16 also keep the decoder's attention caches (self K/V, cross K/V) in bf16: the
// decoding step streams them once per token at the memory bandwidth, and bf16 halves
// those bytes; the attention widens them back to fp32 exactly. And they keep the token
// embedding tables in their GEMM weights' type (int8 per row, bf16): after the GEMM
// weights these are the largest tensors (a fifth of Transformer-base's fp32 bytes with
// one shared table), a token reads one row, widened as it is gathered, and CTranslate2
// does the same (its int8 models store and gather int8 embeddings), so int8 agrees with it.
#pragma once

#include <string>

#include "attend/ops/attention.hpp"
#include "attend/ops/gemm.hpp"
#include "formats/tensor_source.hpp"

namespace attend::runtime {

struct ComputeType {
  ops::WeightType gemm_weights = ops::WeightType::f32;
  ops::KvType kv_cache = ops::KvType::f32;  // the decoder's attention caches
  ops::WeightType embedding_tables = ops::WeightType::f32;  // the token embeddings (positions stay fp32)
  std::string name = "float32";  // CTranslate2's name of what runs
  std::string reason;            // why this one: asked for, stored so, fastest here
};

// The decoder's attention caches, asked for by name: "default" (bf16 when the GEMMs run
// int8 or bfloat16, else f32), "float32", "bfloat16". Throws attend::Error naming the
// accepted names. Overrides c.kv_cache and says so in c.reason.
void resolve_kv_cache_type(const std::string& requested, ComputeType& c);

// What the chooser knows of the CPU (docs/model-format.md#compute-types has the rule).
struct CpuGemmSpeed {
  ops::Isa isa = ops::Isa::sse2;  // the kernels that will run
  // Native bf16 dot products (AVX512_BF16) at ≥ 3/4 of the fp32 FMA's FLOP rate: then
  // bf16 weights (half the bytes) compute faster than fp32; below, slower.
  bool bf16_faster = false;
  std::string bf16_evidence;      // the measured rates, for the reasons
};
// For `isa` on this CPU, from ops::measured_dot_rates().
CpuGemmSpeed measure_cpu_gemm_speed(ops::Isa isa);

// `stored`: the dtype of the model's GEMM weights. Throws attend::Error naming the
// accepted names for an unknown or unsupported one (float16, int16: not on CPU). A pure
// function of its arguments, so any CPU can be described to it.
ComputeType resolve_compute_type(const std::string& requested, DType stored, const CpuGemmSpeed& cpu);

// Appends the GEMM kernel that runs on `isa` (this CPU's) to c.reason, with a note
// where it emulates the type.
void name_kernel(ComputeType& c, ops::Isa isa);

}  // namespace attend::runtime
