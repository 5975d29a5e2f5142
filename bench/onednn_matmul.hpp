// oneDNN's matmul set up the way it runs best: shapes fixed at creation, weights
// reordered once into the layout oneDNN picks (format_tag::any). The yardstick for
// attend's GEMM, in three precisions:
//   f32   fp32 activations and weights.
//   bf16  bf16 activations (converted before timing) and weights, fp32 output.
//   u8s8  u8 activations (quantized before timing), s8 weights quantized per output
//         feature, int32 accumulation, fp32 output scaled per column (output scales).
// attend's bf16 and s8 GEMMs take fp32 activations and convert them inside, in the
// timed call; oneDNN gets its inputs already converted — its best case.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attend::bench {

enum class OnednnPrecision { f32, bf16, u8s8 };

const char* onednn_precision_name(OnednnPrecision precision);

// Whether oneDNN can make this precision's matmul on this CPU, at ONEDNN_MAX_CPU_ISA if
// that is set (oneDNN 2.6 has no bf16 matmul below AVX512_CORE, for example). The
// benchmarks leave out a yardstick this returns false for, saying so, instead of
// aborting on oneDNN's "could not create a primitive descriptor iterator".
bool onednn_has_matmul(OnednnPrecision precision);

// The ISA oneDNN's kernels run at (its best, or ONEDNN_MAX_CPU_ISA's), e.g. "avx2".
std::string onednn_effective_isa();

class OnednnMatmul {
 public:
  // C[M, N] = A[M, K] · Wᵀ with W given as fp32 [N, K] (nn.Linear layout), converted
  // to the precision's weight type.
  OnednnMatmul(std::int64_t M, std::int64_t N, std::int64_t K, const float* w,
               OnednnPrecision precision = OnednnPrecision::f32);
  // A as fp32 [M, K]; converted here, before any timing, for bf16 and u8s8.
  void set_source(const float* a);
  void run(float* c);
  // The f32 path with the source given per call (the original interface).
  void run(const float* a, float* c);

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
  dnnl::memory weights_;
  dnnl::memory::desc a_md_, c_md_;
  OnednnPrecision precision_;
  std::vector<std::uint8_t> source_;  // the converted A
};

}  // namespace attend::bench
