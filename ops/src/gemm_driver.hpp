// What the GEMM drivers (gemm.cpp: f32 and bf16; gemm_s8.cpp) share: row tiling, the
// thread grid, the thread count, argument checks.
#pragma once

#include <algorithm>

#include "attend/ops/gemm.hpp"
#include "kernel_table.hpp"

namespace attend::ops::detail {

// Height of tile `tile` of `tiles` near-equal row tiles covering `rows` (32 rows: 11,
// 11, 10 — every tile streams the same B panels, so a short tile wastes that traffic).
inline int tile_rows(index_t rows, index_t tiles, index_t tile) {
  return static_cast<int>(rows / tiles + (tile < rows % tiles ? 1 : 0));
}
// First row of that tile.
inline index_t tile_start(index_t rows, index_t tiles, index_t tile) {
  return tile * (rows / tiles) + std::min(tile, rows % tiles);
}

// The kernels of b's element type in its table.
inline const GemmKernels& gemm_kernels_of(const KernelTable& kt, WeightType type) {
  switch (type) {
    case WeightType::bf16: return kt.bf16;
    case WeightType::s8: return kt.s8;
    case WeightType::f32: break;
  }
  return kt.f32;
}

// Threads worth using for an M×N×K product reading `weight_bytes` of B: below a grain
// of FLOPs (or, for thin products, which are memory-bound, of weight bytes) a second
// thread costs more than it saves.
int gemm_threads(int threads, index_t m, index_t n, index_t k, index_t weight_bytes);

// Splits `threads` into tm row groups × tn panel groups, preferring panel splits (each
// weight panel then lives on one thread) while every thread keeps ≥ 2 panels.
void choose_grid(index_t m_tiles, index_t panels, int threads, int& tm, int& tn);

// Throws attend::Error naming the bad argument.
void check_gemm(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& ep, int threads);

// The s8 driver's loop order (gemm_s8.cpp): what the kernels ask for
// (GemmKernels::s8_few_row_order, s8_panel_runs), or forced — the block order with a
// kernel call per panel (never runs of panels), or the few-row order for products of
// few rows — for bench/s8_loop_orders, which alternates them in one process.
// Process-wide; set it only while no GEMM runs.
enum class S8LoopOrder { kernels, block, few_rows };
void set_s8_loop_order(S8LoopOrder order);

// The s8 driver (gemm_s8.cpp); `scratch` holds gemm_scratch_bytes(M, b).
void gemm_s8(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& ep, int threads,
             std::byte* scratch);
std::size_t gemm_s8_scratch_bytes(index_t m, const PackedWeightView& b, index_t two_term_rows);

}  // namespace attend::ops::detail
