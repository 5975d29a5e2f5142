// GEMM on pre-packed weights: C = act(alpha·A·Bᵀ + bias) + residual.
//
// A is activations [M, K] (row-major, any leading dimension); B is a weight [N, K]
// in nn.Linear layout, packed once (pack_weight) into the micro-kernel's panel layout:
// N is cut into panels NR columns wide (zero-padded), each panel stored k-major, so
// panel p is K×NR contiguous floats. Because a panel holds every k, the K blocking
// (KC) is a run-time choice of the GEMM, not baked into the packing.
//
// The packing records the kernel table (ISA, MR×NR) it was made for, and gemm() runs
// with that table, so weights and kernels cannot mismatch.
#pragma once

#include <span>
#include <utility>

#include "attend/ops/aligned_buffer.hpp"
#include "attend/ops/isa.hpp"
#include "attend/ops/types.hpp"

namespace attend::ops {

// A packed weight that someone else owns (a PackedWeight, or caller scratch).
struct PackedWeightView {
  const float* data = nullptr;
  index_t n = 0;     // output features
  index_t k = 0;     // input features
  int nr = 0;        // panel width
  Isa isa = Isa::sse2;

  index_t panels() const { return (n + nr - 1) / nr; }
  const float* panel(index_t p) const { return data + p * k * nr; }
};

class PackedWeight {
 public:
  PackedWeight() = default;
  PackedWeightView view() const { return view_; }
  index_t n() const { return view_.n; }
  index_t k() const { return view_.k; }
  Isa isa() const { return view_.isa; }
  std::size_t bytes() const { return buffer_.bytes(); }
  bool empty() const { return view_.data == nullptr; }

 private:
  friend PackedWeight pack_weight(ConstMatrix, Isa);
  friend PackedWeight pack_weight_kn(ConstMatrix, Isa);
  PackedWeight(AlignedBuffer buffer, PackedWeightView view) : buffer_(std::move(buffer)), view_(view) {}
  AlignedBuffer buffer_;
  PackedWeightView view_;
};

// Panel width used by `isa`'s GEMM micro-kernel.
int gemm_panel_width(Isa isa);
// Floats needed to hold the packing of an [n, k] weight for `isa`.
index_t packed_weight_floats(index_t n, index_t k, Isa isa);

// Packs w = [N, K] (nn.Linear layout).
PackedWeight pack_weight(ConstMatrix w, Isa isa = active_isa());
// Packs w = [K, N] (the transposed layout: C = A·W).
PackedWeight pack_weight_kn(ConstMatrix w, Isa isa = active_isa());
// Packs into caller memory (at least packed_weight_floats floats, 64-byte aligned).
PackedWeightView pack_weight_into(ConstMatrix w, bool w_is_kn, Isa isa, std::span<float> dst);

struct GemmEpilogue {
  float alpha = 1.0f;                         // scales A·Bᵀ before the bias
  const float* bias = nullptr;                // [N], or none
  Activation activation = Activation::none;   // applied after the bias
  ConstMatrix residual{};                     // [M, N] added last, or none (data == nullptr);
                                              // may be C itself when activation is none
};

// C[M, N] = act(alpha·A·Bᵀ + bias) + residual. `threads` ≥ 1 is an upper bound:
// small problems use fewer. Throws attend::Error on mismatched shapes or null data.
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
