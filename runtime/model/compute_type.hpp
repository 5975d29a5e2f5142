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
// Everything else (LayerNorm, softmax, attention, embeddings) stays fp32.
#pragma once

#include <string>

#include "attend/ops/gemm.hpp"
#include "formats/tensor_source.hpp"

namespace attend::runtime {

struct ComputeType {
  ops::WeightType gemm_weights = ops::WeightType::f32;
  std::string name = "float32";  // CTranslate2's name of what runs
  std::string reason;            // why this one: asked for, stored so, fastest here
};

// `stored`: the dtype of the model's GEMM weights. Throws attend::Error naming the
// accepted names for an unknown or unsupported one (float16, int16: not on CPU).
ComputeType resolve_compute_type(const std::string& requested, DType stored, ops::Isa isa);

}  // namespace attend::runtime
