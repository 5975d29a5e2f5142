// The fp32 GEMM micro-kernel: an MR×(NV·lanes) register tile, k-loop of broadcast-FMAs.
// store_tile, the epilogue, is shared with the bf16 and s8 kernels.
//
// acc[r][v] += A[r][k] · B[k][v·lanes … ]: per k, NV aligned loads of the packed B
// panel and MR broadcasts from A's packed rows (a fixed stride apart, so one pointer
// and immediate offsets address them all) feed MR·NV independent FMAs. With MR·NV ≥ 8
// accumulators the FMA latency is hidden; thin tiles (MR·NV < 8, the GEMV-like decode
// case) take several panels at once instead, so that every output element is still one
// sum in k order (kernel_table.hpp: GemmKernels).
#pragma once

#include <utility>

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
    if (t.last && !(t.raw_rows >> r & 1u)) {
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

// The accumulators of a tile: P panels × MR rows × NV vectors (always inlined: they
// must stay in registers).
template <class A, int P, int MR, int NV>
ATTEND_VECTOR_MATH void zero_tile(vfloat<A> (&acc)[P][MR][NV]) {
#pragma GCC unroll 64
  for (int q = 0; q < P; ++q)
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[q][r][v] = vfloat<A>(0.0f);
}

// Stores a tile of P panels through the epilogue, one panel at a time.
template <class A, int P, int MR, int NV>
ATTEND_VECTOR_MATH void store_panels(vfloat<A> (&acc)[P][MR][NV], const detail::GemmTile& t) {
  constexpr int W = kLanes<A>;
  constexpr int NR = NV * W;
  alignas(64) float sums[MR * NR];
#pragma GCC unroll 4
  for (int q = 0; q < P; ++q) {
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[q][r][v].store_aligned(sums + (r * NV + v) * W);
    if constexpr (P == 1) {
      store_tile<A, NV>(sums, MR, t);
    } else {
      detail::GemmTile panel = t;  // panel q's columns of C, the bias and the residual
      panel.c += q * NR;
      panel.nr = t.nr - q * NR < NR ? static_cast<int>(t.nr - q * NR) : NR;
      if (panel.bias) panel.bias += q * NR;
      if (panel.residual) panel.residual += q * NR;
      store_tile<A, NV>(sums, MR, panel);
    }
  }
}

// Ways a tile of R rows × NV vectors multiplies its accumulators to keep ≥ 8 independent
// FMA chains in flight: fp32 and bf16 take that many panels at once, s8 that many
// accumulator sets over k (its int32 sums are exact, so the split changes no bit).
template <int R, int NV>
inline constexpr int kLatencyWays = R * NV >= 8 ? 1 : (R * NV >= 4 ? 2 : 4);
static_assert(kLatencyWays<1, 1> <= detail::kGemmMaxPanels);

// One k step of an MR × (P·NR) tile: acc[q][r][v] = madd(acc[q][r][v], B's vector v of
// panel q, A's broadcast of row r). Tall tiles (P = 1) load the NV vectors of B, then
// broadcast each row in turn; thin ones keep their few rows' broadcasts in registers
// while the panels' vectors go by. (Always inlined: the accumulators stay in registers.)
template <int P, int MR, int NV, class Acc, class AOf, class BOf, class Madd>
ATTEND_VECTOR_MATH void tile_step(Acc (&acc)[P][MR][NV], const AOf& a_of, const BOf& b_of, const Madd& madd) {
  if constexpr (P == 1) {
    decltype(b_of(0, 0)) bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = b_of(0, v);
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r) {
      const auto av = a_of(r);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[0][r][v] = madd(acc[0][r][v], bv[v], av);
    }
  } else {
    decltype(a_of(0)) av[MR];
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) av[r] = a_of(r);
#pragma GCC unroll 4
    for (int q = 0; q < P; ++q)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        const auto bv = b_of(q, v);
#pragma GCC unroll 4
        for (int r = 0; r < MR; ++r) acc[q][r][v] = madd(acc[q][r][v], bv, av[r]);
      }
  }
}

// An MR × (P·NR) tile: P adjacent panels, each output vector one accumulator that runs
// over k in order (GemmKernels: the same sum whatever MR and P).
template <class A, int MR, int NV, int P>
void gemm_tile(const detail::GemmTile& t) {
  using V = vfloat<A>;
  constexpr int W = kLanes<A>;
  constexpr int NR = NV * W;
  V acc[P][MR][NV];
  zero_tile<A>(acc);

  constexpr index_t S = detail::kGemmAStride;
  const float* a = static_cast<const float*>(t.a);
  const float* b[P];
#pragma GCC unroll 4
  for (int q = 0; q < P; ++q) b[q] = reinterpret_cast<const float*>(static_cast<const char*>(t.b) + q * t.panel_stride);
  const char* const next_panel = t.prefetch;  // (read once: GCC reloads t's fields in the loop)
  const index_t next_step = t.prefetch_step;
  for (index_t k = 0; k < t.kc; ++k) {
    // Weights of thin products stream from DRAM once per decoder step: fetch each panel
    // 32 k-steps (4 KiB) ahead so the hardware prefetcher's shorter reach is not the
    // limit (+15–25% on cold weights, measured; no change when B is in L2).
#pragma GCC unroll 4
    for (int q = 0; q < P; ++q)
#pragma GCC unroll 8
      for (int l = 0; l < NR / 16; ++l) __builtin_prefetch(b[q] + (k + kPrefetchK) * NR + l * 16, 0, 3);
    // The next panel, spread over this panel's whole compute time (run_block_few_rows).
    __builtin_prefetch(next_panel + k * next_step, 0, 2);
    tile_step<P, MR, NV>(
        acc, [&](int r) __attribute__((always_inline)) { return V(a[r * S + k]); },
        [&](int q, int v) __attribute__((always_inline)) { return V::load_aligned(b[q] + k * NR + v * W); },
        [](const V& c, const V& x, const V& y) __attribute__((always_inline)) { return multiply_add<A>(y, x, c); });
  }
  store_panels<A>(acc, t);
}

// A table's entry with its shape and no kernels yet.
template <int MR>
detail::GemmKernels empty_gemm_kernels(int nr, const char* name) {
  static_assert(MR <= detail::kGemmMaxMr, "GemmKernels holds kGemmMaxMr row counts");
  detail::GemmKernels k;
  k.mr = MR;
  k.nr = nr;
  k.name = name;
  return k;
}

// A table entry of one panel per call: kernels[mr − 1][0] = kernel_for.operator()<mr>()
// for mr = 1 … MR (s8).
template <int MR, class KernelFor>
detail::GemmKernels make_gemm_kernels(int nr, const char* name, const KernelFor& kernel_for) {
  detail::GemmKernels k = empty_gemm_kernels<MR>(nr, name);
  [&]<int... R>(std::integer_sequence<int, R...>) {
    ((k.kernels[R][0] = kernel_for.template operator()<R + 1>(), k.panels[R] = 1), ...);
  }(std::make_integer_sequence<int, MR>{});
  return k;
}

// Row count R's entries of a table of panel-widening kernels (fp32, bf16):
// kernels[R − 1][p − 1] = kernel_for.operator()<R, p>() for p = 1 … kLatencyWays<R, NV>.
template <int R, int NV, class KernelFor>
void add_panel_kernels(detail::GemmKernels& k, const KernelFor& kernel_for) {
  constexpr int P = kLatencyWays<R, NV>;
  k.panels[R - 1] = P;
  [&]<int... Q>(std::integer_sequence<int, Q...>) {
    ((k.kernels[R - 1][Q] = kernel_for.template operator()<R, Q + 1>()), ...);
  }(std::make_integer_sequence<int, P>{});
}

template <int MR, int NV, class KernelFor>
detail::GemmKernels make_panel_gemm_kernels(const char* name, int nr, const KernelFor& kernel_for) {
  detail::GemmKernels k = empty_gemm_kernels<MR>(nr, name);
  [&]<int... R>(std::integer_sequence<int, R...>) {
    (add_panel_kernels<R + 1, NV>(k, kernel_for), ...);
  }(std::make_integer_sequence<int, MR>{});
  return k;
}

template <class A, int MR, int NV>
detail::GemmKernels f32_gemm_kernels(const char* name) {
  return make_panel_gemm_kernels<MR, NV>(name, NV * kLanes<A>, []<int R, int P>() { return &gemm_tile<A, R, NV, P>; });
}

}  // namespace attend::ops::ATTEND_ISA_NS
