// The GEMM micro-kernel: an MR×(NV·lanes) register tile, k-loop of broadcast-FMAs.
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

// Applies the epilogue to one row and stores its first `nr` columns.
template <class A, int NV>
inline void store_row(vfloat<A> (&acc)[NV], const detail::GemmTile& t, int r) {
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
      x = activate<A>(t.activation, x);
      if (res) x += full ? V::load_unaligned(res + col) : load_partial<A>(res + col, n, 0.f);
    }
    if (full) {
      x.store_unaligned(c + col);
    } else {
      store_partial<A>(c + col, x, n);
    }
  }
}

inline constexpr int kPrefetchK = 32;  // k-steps ahead the panel is prefetched

// KU independent accumulator sets over k (KU = 1 for tall tiles).
template <class A, int MR, int NV, int KU>
void gemm_tile(const detail::GemmTile& t) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  constexpr int NR = NV * W;
  V acc[KU][MR][NV];
#pragma GCC unroll 64
  for (int u = 0; u < KU; ++u)
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[u][r][v] = V(0.0f);

  constexpr index_t S = detail::kGemmAStride;
  const float* a = t.a;
  const float* b = t.b;
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
        for (int v = 0; v < NV; ++v) acc[u][r][v] = xsimd::fma(ar, bv[v], acc[u][r][v]);
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
      for (int v = 0; v < NV; ++v) acc[0][r][v] = xsimd::fma(ar, bv[v], acc[0][r][v]);
    }
    ++a;
    b += NR;
  }
#pragma GCC unroll 64
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int u = 1; u < KU; ++u)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[0][r][v] += acc[u][r][v];
    store_row<A, NV>(acc[0][r], t, r);
  }
}

// Accumulator sets needed to keep ~8 independent FMA chains in flight.
template <int MR, int NV>
inline constexpr int kKUnroll = MR * NV >= 8 ? 1 : (MR * NV >= 4 ? 2 : 4);

template <class A, int NV, int... MRs>
constexpr void fill_gemm_kernels(detail::GemmMicroKernel* out,
                                 std::integer_sequence<int, MRs...>) {
  ((out[MRs] = &gemm_tile<A, MRs + 1, NV, kKUnroll<MRs + 1, NV>>), ...);
}

}  // namespace attend::ops::ATTEND_ISA_NS
