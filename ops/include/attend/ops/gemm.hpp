// GEMM on pre-packed weights: C = act(alpha·A·Bᵀ + bias) + residual.
//
// A is fp32 activations [M, K] (row-major, any leading dimension); B is a weight [N, K]
// in nn.Linear layout, packed once (at model load) into the micro-kernel's panel layout
// in one of three element types:
//   f32   as given.
//   bf16  rounded to nearest even when packed; the GEMM rounds A to bf16 as it packs
//         it and sums the products in fp32.
//   s8    int8 per output row, CTranslate2's scheme: scale[n] = 127 / max_k |w[n][k]|,
//         q = round(w·scale), w ≈ q / scale. The GEMM quantizes each row of A the same
//         way at run time (to ±127), sums exactly in int32 and dequantizes in the
//         epilogue — on every ISA, so the s8 GEMM's outputs are bit-identical whatever
//         the CPU. CTranslate2's int8 weights pack as they are (pack_weight_s8): no
//         dequantize–requantize round trip.
// N is cut into panels NR columns wide (zero-padded), each panel k-major, so its K×NR
// elements are contiguous. f32 and bf16 panels hold every k, so their K blocking is a
// run-time choice of the GEMM; s8 is never K-blocked (its int32 sums must see all of K).
//
// The packing records the kernel table (ISA, MR×NR) it was made for, and gemm() runs
// with that table, so weights and kernels cannot mismatch. One gemm() serves all types.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "attend/ops/aligned_buffer.hpp"
#include "attend/ops/isa.hpp"
#include "attend/ops/types.hpp"

namespace attend::ops {

// A packed weight that someone else owns (a PackedWeight, or caller scratch).
struct PackedWeightView {
  const void* data = nullptr;  // the panels
  index_t n = 0;               // output features
  index_t k = 0;               // input features
  int nr = 0;                  // panel width
  Isa isa = Isa::sse2;
  WeightType type = WeightType::f32;
  // s8 only: the dequantization factor of each output feature, w[j][k] ≈ q[j][k]·scales[j]
  // (1 / CTranslate2's scale); zero past n, up to panels()·nr.
  const float* scales = nullptr;

  index_t panels() const { return (n + nr - 1) / nr; }
  // k rounded up to the type's k group: 1 (f32), 2 (bf16 pairs), 4 (s8 quads).
  index_t k_padded() const;
  std::size_t panel_bytes() const;
  const std::byte* panel(index_t p) const {
    return static_cast<const std::byte*>(data) + p * static_cast<index_t>(panel_bytes());
  }
};

class PackedWeight {
 public:
  PackedWeight() = default;
  PackedWeightView view() const { return view_; }
  index_t n() const { return view_.n; }
  index_t k() const { return view_.k; }
  Isa isa() const { return view_.isa; }
  WeightType type() const { return view_.type; }
  std::size_t bytes() const { return buffer_.bytes(); }  // all it holds: panels (and scales)
  bool empty() const { return view_.data == nullptr; }

 private:
  friend PackedWeight pack_weight(ConstMatrix, Isa);
  friend PackedWeight pack_weight(ConstMatrix, WeightType, Isa);
  friend PackedWeight pack_weight_kn(ConstMatrix, Isa);
  friend PackedWeight pack_weight_s8(MatrixView<const std::int8_t>, const float*, Isa);
  PackedWeight(AlignedBuffer buffer, PackedWeightView view) : buffer_(std::move(buffer)), view_(view) {}
  AlignedBuffer buffer_;
  PackedWeightView view_;
};

// Panel width of `isa`'s GEMM micro-kernel for `type`, and its name (its contract:
// e.g. "qd8_f32_qc8w_gemm_15x32_avx512vnni": int8 activations quantized dynamically,
// fp32 output, int8 weights quantized per channel, a 14×32 tile, VNNI).
int gemm_panel_width(Isa isa, WeightType type = WeightType::f32);
const char* gemm_kernel_name(Isa isa, WeightType type);
// Bytes a PackedWeight of an [n, k] weight holds (panels, and s8's scales).
std::size_t packed_weight_bytes(index_t n, index_t k, WeightType type, Isa isa);
// Floats needed to hold the f32 packing of an [n, k] weight for `isa`.
index_t packed_weight_floats(index_t n, index_t k, Isa isa);
// Largest K an s8 weight may have: int32 sums of K products of ≤ 128·127 stay exact.
inline constexpr index_t kMaxS8K = index_t{1} << 17;
// s8 GEMMs quantize each row of A to [−127, 127], on every ISA.
inline constexpr int kS8ActivationLevels = 127;

// Packs w = [N, K] (nn.Linear layout) as f32.
PackedWeight pack_weight(ConstMatrix w, Isa isa = active_isa());
// Packs w = [N, K] as `type`: f32 as is, bf16 rounded to nearest even, s8 quantized per
// output row (see above; throws attend::Error on a non-finite weight or K > kMaxS8K).
PackedWeight pack_weight(ConstMatrix w, WeightType type, Isa isa = active_isa());
// Packs w = [K, N] (the transposed layout: C = A·W) as f32.
PackedWeight pack_weight_kn(ConstMatrix w, Isa isa = active_isa());
// Packs CTranslate2's int8 weights as they are: q = [N, K], ct2_scales[N] with
// w ≈ q / scale (each > 0; +inf marks an all-zero row). A q of −128, which
// CTranslate2's quantizer never writes, is read as −127 (the kernels negate weights).
// Throws attend::Error naming the first bad scale.
PackedWeight pack_weight_s8(MatrixView<const std::int8_t> q, const float* ct2_scales, Isa isa = active_isa());
// CTranslate2's int8 quantization of w = [N, K], for writing quantized models:
// ct2_scales[j] = 127 / max_k |w[j][k]| (1 for an all-zero row), q[j][k] =
// round(w[j][k]·ct2_scales[j]), so w ≈ q / scale. q is [N, K] packed. The same numbers
// pack_weight(w, s8) packs. Throws attend::Error on a non-finite weight.
void quantize_weight_s8(ConstMatrix w, std::int8_t* q, float* ct2_scales);
// w rounded to bf16 (nearest even) as raw bits, [N, K] packed: the bf16 weight
// pack_weight(w, bf16) packs.
void round_weight_bf16(ConstMatrix w, std::uint16_t* bits);

// Packs f32 into caller memory (at least packed_weight_floats floats, 64-byte aligned).
PackedWeightView pack_weight_into(ConstMatrix w, bool w_is_kn, Isa isa, std::span<float> dst);

// The weight [n, k] as the GEMM multiplies it: f32 as packed, bf16 widened, s8 as
// q·scales[j]. For tests and inspection.
void unpack_weight(const PackedWeightView& b, Matrix w);

// Where a profiled GEMM reports the part of its time a profile shows apart (attend
// bench's breakdown): an s8 GEMM's quantizing of A — each quantizing thread's seconds
// divided by the threads quantizing at once (their mean: a share of the call's wall
// time). The epilogue (bias, activation, residual) runs in the kernels' registers, so it
// has no time of its own to report.
struct GemmProfile {
  std::atomic<double> quantize_seconds{0};
};

struct GemmEpilogue {
  float alpha = 1.0f;                         // scales A·Bᵀ before the bias
  const float* bias = nullptr;                // [N], or none
  Activation activation = Activation::none;   // applied after the bias
  ConstMatrix residual{};                     // [M, N] added last, or none (data == nullptr);
                                              // may be C itself when activation is none
  GemmProfile* profile = nullptr;             // profiled: its parts' seconds are added there
  // s8 only (other types ignore it): the rows of A, each two_term_rows[i] −
  // two_term_row_base in [0, M), ascending, whose quantization residual (a − q(a)·level,
  // under half a level) gets a second int8 term with a scale of its own: such a row's A
  // is carried to ~15 bits while every other row stays one int8 pass. For rows one value
  // dominates (runtime/plan/outlier_rows.hpp). The residuals of a thread's rows are
  // computed as tiles of their own, up to the kernels' MR rows each, on the weight panels
  // its row tiles have just read.
  std::span<const std::int32_t> two_term_rows{};
  index_t two_term_row_base = 0;
};

// C[M, N] = act(alpha·A·Bᵀ + bias) + residual, for B of any type. `threads` ≥ 1 is an
// upper bound: small problems use fewer. Throws attend::Error on mismatched shapes or
// null data. Thread-safe for distinct C: weights are only read.
// A row of C is the same bits whatever other rows A holds, where the row sits, and
// however many threads run: every element is one sum over k in order (s8: exact), then
// the epilogue — what makes a sentence's result independent of its batch. Across ISAs:
// fp32 is the same bits on AVX2 and AVX-512 (fused multiply-adds), not on SSE2; bf16 on
// every ISA but AVX512_BF16 (whose vdpbf16ps rounds its own way); s8 on every ISA.
//
// An s8 GEMM quantizes A once into scratch: gemm_scratch_bytes(M, b, two-term rows)
// bytes (0 for f32 and bf16), 64-byte aligned, given by the caller (e.g. a slice of its
// arena), or — without the argument — a thread_local buffer of the calling thread, grown
// when a larger M·K comes and then reused.
std::size_t gemm_scratch_bytes(index_t m, const PackedWeightView& b, index_t two_term_rows = 0);
void gemm(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& epilogue,
          int threads, std::span<std::byte> scratch);
void gemm(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& epilogue,
          int threads);
inline void gemm(ConstMatrix a, const PackedWeight& b, Matrix c, const GemmEpilogue& epilogue,
                 int threads) {
  gemm(a, b.view(), c, epilogue, threads);
}

// Products of two activation matrices, neither packed in advance:
//   b_transposed = true:  C = alpha·A·Bᵀ, B is [N, K]
//   b_transposed = false: C = alpha·A·B,  B is [K, N]
// B is packed into `scratch` (matmul_scratch_floats floats, 64-byte aligned) on each call.
index_t matmul_scratch_floats(index_t n, index_t k, Isa isa = active_isa());
void matmul(ConstMatrix a, ConstMatrix b, bool b_transposed, Matrix c, float alpha,
            std::span<float> scratch, int threads);

}  // namespace attend::ops
