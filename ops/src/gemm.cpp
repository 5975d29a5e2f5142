// The GEMM's portable loops around the ISA's micro-kernel (BLIS-style):
//
//   for each block of NC columns (panels)        — the B block stays in L2
//     for each block of KC of K                  — partial sums accumulate in C
//       for each MR rows of A: copy them out     — the A micro-panel stays in L1
//         for each NR-wide panel in the block: micro-kernel(mr × NR × kc)
//
// Threads split the output in a grid of row ranges × panel ranges chosen to keep each
// weight panel on one thread (weights are streamed from memory once), falling back to
// splitting rows when there are too few panels. The decoding case (up to 4 row tiles,
// M ≤ 56 on AVX-512) packs all its rows of A at once and swaps the two inner loops, so
// each weight panel, read from memory once, serves every row tile while it is hot.
#include <algorithm>

#include "attend/ops/gemm.hpp"
#include "check.hpp"
#include "kernel_table.hpp"
#include "parallel.hpp"

namespace attend::ops {
namespace {

constexpr index_t kBBlockFloats = 1 << 18;   // KC × NC of B, 1 MiB: a share of L2
constexpr index_t kFewRowTiles = 4;          // up to this many row tiles: run_block_few_rows
// Below these, a second thread costs more than it saves. Thin products (decoding) are
// memory-bound: there the weight bytes, not the FLOPs, decide.
constexpr index_t kFlopsPerThread = 1 << 21;
constexpr index_t kWeightBytesPerThread = 1 << 19;

// Copies rows [i0, i0+mr) × cols [k0, k0+kc) of A to rows kGemmAStride apart: a plain
// row copy (no transpose), which is what lets the kernel address rows by immediates.
void pack_a(ConstMatrix a, index_t i0, int mr, index_t k0, index_t kc, float* dst) {
  for (int r = 0; r < mr; ++r) std::copy_n(a.row(i0 + r) + k0, kc, dst + r * detail::kGemmAStride);
}

struct GemmProblem {
  ConstMatrix a;
  PackedWeightView b;
  Matrix c;
  GemmEpilogue ep;
  bool residual_is_c;
  const detail::KernelTable* kt;
  index_t kc;         // K block
  index_t nc_panels;  // panels per B block
};

// Height of each of `tiles` near-equal row tiles covering `rows` (32 rows: 11, 11, 10 —
// every tile streams the same B panels, so a short tile wastes that traffic).
int tile_rows(index_t rows, index_t tiles, index_t tile) {
  return static_cast<int>(rows / tiles + (tile < rows % tiles ? 1 : 0));
}

void fill_tile(const GemmProblem& g, detail::GemmTile& t, const float* a, index_t i0, index_t k0, index_t kc, index_t p) {
  const index_t NR = g.kt->gemm_nr, n0 = p * NR;
  t.kc = kc;
  t.a = a;
  t.ldc = g.c.ld;
  t.accumulate = k0 > 0 || g.residual_is_c;
  t.last = k0 + kc >= g.b.k;
  t.alpha = g.ep.alpha;
  t.activation = g.ep.activation;
  t.ldr = g.ep.residual.ld;
  t.nr = static_cast<int>(std::min(NR, g.b.n - n0));
  t.b = g.b.panel(p) + k0 * NR;
  t.c = g.c.row(i0) + n0;
  t.bias = g.ep.bias ? g.ep.bias + n0 : nullptr;
  t.residual = g.ep.residual.data && !g.residual_is_c ? g.ep.residual.row(i0) + n0 : nullptr;
  t.prefetch = reinterpret_cast<const char*>(t.b);  // own panel: a no-op unless the driver says better
  t.prefetch_step = NR * static_cast<index_t>(sizeof(float));
}

// Tile `tile` of `tiles` prefetches its share of panel `next` (the k0 slab: kc k-steps
// of NR floats, contiguous) while it computes, so that panel's DRAM traffic overlaps the
// compute of all tiles instead of stalling the first one to touch it.
void prefetch_panel_share(const GemmProblem& g, detail::GemmTile& t, index_t k0, index_t kc, index_t next,
                          index_t p_end, index_t tile, index_t tiles) {
  if (tiles < 2 || next >= p_end) return;  // one tile is bandwidth-bound: measured slower
  const index_t NR = g.kt->gemm_nr;
  const index_t bytes = kc * NR * static_cast<index_t>(sizeof(float));
  t.prefetch = reinterpret_cast<const char*>(g.b.panel(next) + k0 * NR) + tile * bytes / tiles;
  t.prefetch_step = bytes / (tiles * kc);
}

// Few rows (decoding): every row tile of A packed at once, then each B panel goes
// through all of them back to back — read from memory once, reused while in L1/L2.
void run_block_few_rows(const GemmProblem& g, index_t i_begin, index_t i_end, index_t p_begin, index_t p_end) {
  const auto& kt = *g.kt;
  const index_t K = g.b.k, rows = i_end - i_begin;
  const index_t tiles = (rows + kt.gemm_mr - 1) / kt.gemm_mr;
  alignas(64) float apack[kFewRowTiles][16 * detail::kGemmAStride];
  index_t k0 = 0;
  do {
    const index_t kc = std::min(g.kc, K - k0);
    for (index_t tile = 0, i0 = i_begin; tile < tiles; i0 += tile_rows(rows, tiles, tile++))
      pack_a(g.a, i0, tile_rows(rows, tiles, tile), k0, kc, apack[tile]);
    detail::GemmTile t;
    for (index_t p = p_begin; p < p_end; ++p)
      for (index_t tile = 0, i0 = i_begin; tile < tiles; i0 += tile_rows(rows, tiles, tile++)) {
        fill_tile(g, t, apack[tile], i0, k0, kc, p);
        prefetch_panel_share(g, t, k0, kc, p + 1, p_end, tile, tiles);
        kt.gemm_kernels[tile_rows(rows, tiles, tile) - 1](t);
      }
    k0 += kc;
  } while (k0 < K);
}

void run_block(const GemmProblem& g, index_t i_begin, index_t i_end, index_t p_begin, index_t p_end) {
  const auto& kt = *g.kt;
  const index_t K = g.b.k;
  alignas(64) float apack[16 * detail::kGemmAStride];
  for (index_t p0 = p_begin; p0 < p_end; p0 += g.nc_panels) {
    const index_t p1 = std::min(p_end, p0 + g.nc_panels);
    index_t k0 = 0;
    do {  // at least once, so K = 0 still applies the epilogue
      const index_t kc = std::min(g.kc, K - k0);
      const index_t rows = i_end - i_begin;
      const index_t tiles = (rows + kt.gemm_mr - 1) / kt.gemm_mr;
      for (index_t tile = 0, i0 = i_begin; tile < tiles; ++tile) {
        const int mr = tile_rows(rows, tiles, tile);
        pack_a(g.a, i0, mr, k0, kc, apack);
        detail::GemmTile t;
        for (index_t p = p0; p < p1; ++p) {
          fill_tile(g, t, apack, i0, k0, kc, p);
          kt.gemm_kernels[mr - 1](t);
        }
        i0 += mr;
      }
      k0 += kc;
    } while (k0 < K);
  }
}

// Rows [i_begin, i_end) × panels [p_begin, p_end) with the loop order their shape wants.
void run_range(const GemmProblem& g, index_t i_begin, index_t i_end, index_t p_begin, index_t p_end) {
  const index_t tiles = (i_end - i_begin + g.kt->gemm_mr - 1) / g.kt->gemm_mr;
  (tiles <= kFewRowTiles ? run_block_few_rows : run_block)(g, i_begin, i_end, p_begin, p_end);
}

// Splits `threads` into tm row groups × tn panel groups, preferring panel splits (each
// weight panel then lives on one thread) while every thread keeps ≥ 2 panels.
void choose_grid(index_t m_tiles, index_t panels, int threads, int& tm, int& tn) {
  for (tn = threads; tn > 1; --tn) {
    if (threads % tn != 0) continue;
    tm = threads / tn;
    if (panels >= 2 * tn && m_tiles >= tm) return;
  }
  tn = 1;
  tm = static_cast<int>(std::min<index_t>(threads, m_tiles));
}

void check_gemm(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& ep, int threads) {
  constexpr const char* op = "gemm";
  detail::check_threads(op, threads);
  detail::check_matrix(op, "A", a);
  detail::check_matrix(op, "C", c);
  ATTEND_OP_CHECK(b.n >= 0 && b.k >= 0, op, "B has negative shape");
  ATTEND_OP_CHECK(b.data != nullptr || b.n == 0 || b.k == 0, op, "B (packed weight) is empty");
  ATTEND_OP_CHECK(a.cols == b.k, op, "A is [", a.rows, ", ", a.cols, "] but B has K = ", b.k);
  ATTEND_OP_CHECK(c.rows == a.rows && c.cols == b.n, op, "C is [", c.rows, ", ", c.cols, "], expected [",
                  a.rows, ", ", b.n, "]");
  ATTEND_OP_CHECK(b.nr == gemm_panel_width(b.isa), op, "B was packed with panel width ", b.nr, " but ",
                  isa_name(b.isa), " kernels use ", gemm_panel_width(b.isa));
  if (ep.residual.data) {
    detail::check_matrix(op, "residual", ep.residual);
    detail::check_same_shape(op, "residual", ep.residual, "C", c);
    if (ep.residual.data == c.data) {
      ATTEND_OP_CHECK(ep.residual.ld == c.ld, op, "residual aliases C with a different leading dimension");
      ATTEND_OP_CHECK(ep.activation == Activation::none && ep.alpha == 1.0f, op,
                      "residual may alias C only without activation and with alpha = 1");
    }
  }
}

}  // namespace

void gemm(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& ep, int threads) {
  check_gemm(a, b, c, ep, threads);
  const index_t M = a.rows, N = b.n, K = b.k;
  if (M == 0 || N == 0) return;

  GemmProblem g{a, b, c, ep, ep.residual.data != nullptr && ep.residual.data == c.data,
                &detail::kernels_for(b.isa), 0, 0};
  const index_t k_blocks = std::max<index_t>(1, (K + detail::kGemmMaxKc - 1) / detail::kGemmMaxKc);
  g.kc = (K + k_blocks - 1) / k_blocks;  // equal blocks, none tiny
  g.nc_panels = std::max<index_t>(1, kBBlockFloats / (std::max<index_t>(g.kc, 1) * g.kt->gemm_nr));

  const index_t m_tiles = (M + g.kt->gemm_mr - 1) / g.kt->gemm_mr;
  const index_t panels = b.panels();
  const int nt = std::max(detail::useful_threads(threads, 2 * M * N * std::max<index_t>(K, 1), kFlopsPerThread),
                          detail::useful_threads(threads, 4 * N * K, kWeightBytesPerThread));
  if (nt == 1) {
    run_range(g, 0, M, 0, panels);
    return;
  }
  int tm = 1, tn = 1;
  choose_grid(m_tiles, panels, nt, tm, tn);
  detail::parallel_chunks(tm * tn, tm * tn, [&](index_t first, index_t last) {
    for (index_t t = first; t < last; ++t) {
      index_t tb, te, pb, pe;
      detail::split_range(m_tiles, static_cast<int>(t / tn), tm, tb, te);
      detail::split_range(panels, static_cast<int>(t % tn), tn, pb, pe);
      const index_t i0 = tb * g.kt->gemm_mr, i1 = std::min(M, te * g.kt->gemm_mr);
      if (i0 < i1 && pb < pe) run_range(g, i0, i1, pb, pe);
    }
  });
}

index_t matmul_scratch_floats(index_t n, index_t k, Isa isa) { return packed_weight_floats(n, k, isa); }

void matmul(ConstMatrix a, ConstMatrix b, bool b_transposed, Matrix c, float alpha, std::span<float> scratch,
            int threads) {
  const PackedWeightView packed = pack_weight_into(b, !b_transposed, active_isa(), scratch);
  GemmEpilogue ep;
  ep.alpha = alpha;
  gemm(a, packed, c, ep, threads);
}

}  // namespace attend::ops
