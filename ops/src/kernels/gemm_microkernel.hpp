// The fp32 GEMM micro-kernel: an MR×(NV·lanes) register tile, k-loop of broadcast-FMAs.
// store_tile, the epilogue, is shared with the bf16 and s8 kernels.
//
// acc[r][v] += A[r][k] · B[k][v·lanes … ]: per k, NV aligned loads of the packed B
// panel and MR broadcasts from A's packed rows (a fixed stride apart, so one pointer
// and immediate offsets address them all) feed MR·NV independent FMAs. With MR·NV ≥ 8
// accumulators the FMA latency is hidden; thin tiles (MR·NV < 8, the GEMV-like decode
// case) split k over several accumulator sets instead, then add them.
#pragma once

#include "kernel_table.hpp"
#include "kernels/simd.hpp"

namespace attend::ops::ATTEND_ISA_NS {

// Applies the epilogue to one row and stores its first `nr` columns. The activation is
// Act, or t.activation when Runtime.
template <class A, int NV, Activation Act, bool Runtime = false>
ATTEND_VECTOR_MATH void store_row(vfloat<A> (&acc)[NV], const detail::GemmTile& t, int r) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  float* c = t.c + r * t.ldc;
  const float* res = t.residual ? t.residual + r * t.ldr : nullptr;
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    const index_t col = v * W;
    if (col >= t.nr) break;
    const index_t n = t.nr - col;  // columns left in this row
    const bool full = n >= W;
    V x = acc[v];
    if (t.accumulate) x += full ? V::load_unaligned(c + col) : load_partial<A>(c + col, n, 0.f);
    if (t.last) {
      if (t.alpha != 1.0f) x *= V(t.alpha);
      if (t.bias) x += full ? V::load_unaligned(t.bias + col) : load_partial<A>(t.bias + col, n, 0.f);
      x = activate<A>(Runtime ? t.activation : Act, x);
      if (res) x += full ? V::load_unaligned(res + col) : load_partial<A>(res + col, n, 0.f);
    }
    if (full) {
      x.store_unaligned(c + col);
    } else {
      store_partial<A>(c + col, x, n);
    }
  }
}

template <class A, int NV, Activation Act, bool Runtime = false>
void store_tile_as(const float* sums, int mr, const detail::GemmTile& t) {
  constexpr int NR = NV * kLanes<A>;
  for (int r = 0; r < mr; ++r) {
    vfloat<A> x[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) x[v] = vfloat<A>::load_aligned(sums + r * NR + v * kLanes<A>);
    store_row<A, NV, Act, Runtime>(x, t, r);
  }
}

// The epilogue of a whole tile in one call: the kernel stores its sums to `sums` (rows
// NV·lanes floats apart, in L1), and they are read back row by row with the activation
// resolved once. (Calling an epilogue per row, which the activations make too large to
// inline, cost each row a call, a vzeroupper and the tile's accumulators spilled around
// it: ~30% of an s8 tile, whose k loop is 4× shorter than fp32's.)
template <class A, int NV>
void store_tile(const float* sums, int mr, const detail::GemmTile& t) {
  switch (t.last ? t.activation : Activation::none) {
    case Activation::none: return store_tile_as<A, NV, Activation::none>(sums, mr, t);
    case Activation::relu: return store_tile_as<A, NV, Activation::relu>(sums, mr, t);
    case Activation::gelu: return store_tile_as<A, NV, Activation::gelu>(sums, mr, t);
    case Activation::gelu_tanh: return store_tile_as<A, NV, Activation::gelu_tanh>(sums, mr, t);
    case Activation::silu: return store_tile_as<A, NV, Activation::silu>(sums, mr, t);
    case Activation::gelu_sigmoid: return store_tile_as<A, NV, Activation::gelu_sigmoid>(sums, mr, t);
  }
  store_tile_as<A, NV, Activation::none, true>(sums, mr, t);  // an activation added without a case above
}

inline constexpr int kPrefetchK = 32;  // k-steps ahead the panel is prefetched

// The accumulators of a tile: KU sets of MR×NV vectors (always inlined: they must stay
// in registers).
template <class A, int KU, int MR, int NV>
ATTEND_VECTOR_MATH void zero_tile(vfloat<A> (&acc)[KU][MR][NV]) {
#pragma GCC unroll 64
  for (int u = 0; u < KU; ++u)
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[u][r][v] = vfloat<A>(0.0f);
}

// Adds the KU sets and stores the tile through the epilogue.
template <class A, int KU, int MR, int NV>
ATTEND_VECTOR_MATH void reduce_and_store_tile(vfloat<A> (&acc)[KU][MR][NV], const detail::GemmTile& t) {
  constexpr int W = kLanes<A>;
  alignas(64) float sums[MR * NV * W];
#pragma GCC unroll 64
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
#pragma GCC unroll 8
      for (int u = 1; u < KU; ++u) acc[0][r][v] += acc[u][r][v];
      acc[0][r][v].store_aligned(sums + (r * NV + v) * W);
    }
  store_tile<A, NV>(sums, MR, t);
}

// KU independent accumulator sets over k (KU = 1 for tall tiles).
template <class A, int MR, int NV, int KU>
void gemm_tile(const detail::GemmTile& t) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  constexpr int NR = NV * W;
  V acc[KU][MR][NV];
  zero_tile<A>(acc);

  constexpr index_t S = detail::kGemmAStride;
  const float* a = static_cast<const float*>(t.a);
  const float* b = static_cast<const float*>(t.b);
  index_t k = 0;
  for (; k + KU <= t.kc; k += KU) {
#pragma GCC unroll 8
    for (int u = 0; u < KU; ++u) {
      V bv[NV];
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) bv[v] = V::load_aligned(b + u * NR + v * W);
      // Weights of thin products stream from DRAM once per decoder step: fetch the panel
      // 32 k-steps (4 KiB) ahead so the hardware prefetcher's shorter reach is not the
      // limit (+15–25% on cold weights, measured; no change when B is in L2).
#pragma GCC unroll 8
      for (int l = 0; l < NR / 16; ++l) __builtin_prefetch(b + (u + kPrefetchK) * NR + l * 16, 0, 3);
      // The next panel, spread over this panel's whole compute time (run_block_few_rows).
      __builtin_prefetch(t.prefetch + (k + u) * t.prefetch_step, 0, 2);
#pragma GCC unroll 64
      for (int r = 0; r < MR; ++r) {
        const V ar(a[r * S + u]);
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[u][r][v] = multiply_add<A>(ar, bv[v], acc[u][r][v]);
      }
    }
    a += KU;
    b += KU * NR;
  }
  for (; k < t.kc; ++k) {  // k remainder when KU > 1
    V bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = V::load_aligned(b + v * W);
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r) {
      const V ar(a[r * S]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[0][r][v] = multiply_add<A>(ar, bv[v], acc[0][r][v]);
    }
    ++a;
    b += NR;
  }
  reduce_and_store_tile<A>(acc, t);
}

// Accumulator sets needed to keep ~8 independent FMA chains in flight.
template <int MR, int NV>
inline constexpr int kKUnroll = MR * NV >= 8 ? 1 : (MR * NV >= 4 ? 2 : 4);

// A table entry: kernels[mr − 1] = kernel_for.operator()<mr>() for mr = 1 … MR.
template <int MR, class KernelFor>
detail::GemmKernels make_gemm_kernels(int nr, const char* name, const KernelFor& kernel_for) {
  static_assert(MR <= 16, "GemmKernels holds 16 row counts");
  detail::GemmKernels k;
  k.mr = MR;
  k.nr = nr;
  k.name = name;
  [&]<int... R>(std::integer_sequence<int, R...>) {
    ((k.kernels[R] = kernel_for.template operator()<R + 1>()), ...);
  }(std::make_integer_sequence<int, MR>{});
  return k;
}

template <class A, int MR, int NV>
detail::GemmKernels f32_gemm_kernels(const char* name) {
  return make_gemm_kernels<MR>(NV * kLanes<A>, name, []<int R>() { return &gemm_tile<A, R, NV, kKUnroll<R, NV>>; });
}

}  // namespace attend::ops::ATTEND_ISA_NS
