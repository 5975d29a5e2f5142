// The GEMM's portable loops around the ISA's micro-kernel (BLIS-style), for f32 and
// bf16 weights (s8: gemm_s8.cpp):
//
//   for each block of NC columns (panels)        — the B block stays in L2
//     for each block of KC of K                  — partial sums accumulate in C
//       for each MR rows of A: pack them         — the A micro-panel stays in L1
//         for each NR-wide panel in the block: micro-kernel(mr × NR × kc)
//           (a tile of few rows takes 2–4 panels per call: kernel_table.hpp)
//
// Packing A is a row copy for f32 and a rounding to bf16 for bf16; nothing else
// differs between the two.
//
// Threads split the output in a grid of row ranges × panel ranges chosen to keep each
// weight panel on one thread (weights are streamed from memory once), falling back to
// splitting rows when there are too few panels. The decoding case (A packed within
// half the L2: 124–248 rows) packs all its rows of A at once and swaps the two inner loops, so
// each weight panel, read from memory once, serves every row tile while it is hot.
#include <algorithm>
#include <cstdint>
#include <string>

#include "attend/ops/gemm.hpp"
#include "attend/ops/cache_sizes.hpp"
#include "check.hpp"
#include "gemm_driver.hpp"
#include "parallel.hpp"

namespace attend::ops {
namespace {

constexpr index_t kBBlockBytes = 1 << 20;   // KC × NC of B, 1 MiB: a share of L2
// Packed A of a thread's rows up to this: run_block_few_rows, whose A stays in L2 while
// the weight panels stream past it — so half the L2, within [128, 512] KiB (Zen 3's
// 512 KiB: 124 rows; 1–2 MiB L2s: 248, beam 4's 128 included). A count of row tiles,
// the old limit (4), sent AVX2's M = 32 to run_block, where each B block's DRAM fetch
// stalled the first tile: 63% of the FMA peak vs 78%.
index_t few_row_a_bytes() {
  return std::clamp<index_t>(static_cast<index_t>(l2_cache_bytes() / 2), index_t{1} << 17, index_t{1} << 19);
}
// Below these, a second thread costs more than it saves. Thin products (decoding) are
// memory-bound: there the weight bytes, not the FLOPs, decide.
constexpr index_t kFlopsPerThread = 1 << 21;
constexpr index_t kWeightBytesPerThread = 1 << 19;

// Copies rows [0, mr) × cols [k0, k0+kc) of A to rows kGemmAStride apart: a plain row
// copy (no transpose), which is what lets the kernel address rows by immediates.
void pack_a_f32(const float* a, index_t lda, int mr, index_t k0, index_t kc, void* dst) {
  for (int r = 0; r < mr; ++r)
    std::copy_n(a + r * lda + k0, kc, static_cast<float*>(dst) + r * detail::kGemmAStride);
}

struct GemmProblem {
  ConstMatrix a;
  PackedWeightView b;
  Matrix c;
  GemmEpilogue ep;
  bool residual_is_c;
  const detail::GemmKernels* kernels;
  detail::Bf16PackA pack_a;  // (same signature for f32)
  index_t k_step;            // k per micro-kernel step: 1 (f32), 2 (bf16 pairs)
  index_t k_bytes;           // bytes of one k of a B panel
  index_t kc;                // K block, a multiple of k_step
  index_t nc_panels;         // panels per B block
  index_t panel_bytes;       // from one B panel to the next
};

void pack_tile(const GemmProblem& g, index_t i0, int mr, index_t k0, index_t kc, float* dst) {
  g.pack_a(g.a.row(i0), g.a.ld, mr, k0, kc, dst);
}

// Panels [p, p + panels) of rows i0 … against A's packed tile `a`, k0 … k0 + kc.
void fill_tile(const GemmProblem& g, detail::GemmTile& t, const float* a, index_t i0, index_t k0, index_t kc, index_t p,
               index_t panels) {
  const index_t NR = g.kernels->nr, n0 = p * NR;
  t.kc = kc;
  t.a = a;
  t.ldc = g.c.ld;
  t.accumulate = k0 > 0 || g.residual_is_c;
  t.last = k0 + kc >= g.b.k;
  t.alpha = g.ep.alpha;
  t.activation = g.ep.activation;
  t.ldr = g.ep.residual.ld;
  t.nr = static_cast<int>(std::min(panels * NR, g.b.n - n0));
  t.panels = static_cast<int>(panels);
  t.panel_stride = g.panel_bytes;
  t.b = g.b.panel(p) + k0 * g.k_bytes;
  t.c = g.c.row(i0) + n0;
  t.bias = g.ep.bias ? g.ep.bias + n0 : nullptr;
  t.residual = g.ep.residual.data && !g.residual_is_c ? g.ep.residual.row(i0) + n0 : nullptr;
  t.prefetch = static_cast<const char*>(t.b);  // own panel: a no-op unless the driver says better
  t.prefetch_step = g.k_step * g.k_bytes;
}

// Tile `tile` of `tiles` prefetches its share of panel `next` (the k0 slab: kc k of
// NR elements, contiguous) while it computes, so that panel's DRAM traffic overlaps the
// compute of all tiles instead of stalling the first one to touch it.
void prefetch_panel_share(const GemmProblem& g, detail::GemmTile& t, index_t k0, index_t kc, index_t next,
                          index_t p_end, index_t tile, index_t tiles) {
  if (tiles < 2 || next >= p_end || kc == 0) return;  // one tile is bandwidth-bound: measured slower
  const index_t bytes = kc * g.k_bytes;
  const index_t steps = (kc + g.k_step - 1) / g.k_step;
  t.prefetch = reinterpret_cast<const char*>(g.b.panel(next) + k0 * g.k_bytes) + tile * bytes / tiles;
  t.prefetch_step = bytes / (tiles * steps);
}

// The calling thread's buffer for A packed whole (run_block_few_rows): allocated on
// the thread's first few-row GEMM, then reused (too large for a worker's stack).
float* few_rows_a_buffer() {
  thread_local AlignedBuffer buffer(static_cast<std::size_t>(few_row_a_bytes()));
  return reinterpret_cast<float*>(buffer.data());
}

bool few_rows(index_t rows) {
  return rows * detail::kGemmAStride * static_cast<index_t>(sizeof(float)) <= few_row_a_bytes();
}

// Rows i0 … i0 + mr − 1 (packed at `a`) × panels [p, p_end), as many panels per call
// as a tile of mr rows takes (kernel_table.hpp: GemmKernels::panels). The kernels sum
// every element alike whatever mr and the panels per call, so how rows and panels are
// cut — by M, the row tiles, the threads — never changes a bit of the result.
// prepare(t) may still change the tile before each call (its prefetch).
template <class Prepare>
void run_tile(const GemmProblem& g, const float* a, index_t i0, int mr, index_t k0, index_t kc, index_t p,
              index_t p_end, const Prepare& prepare) {
  const auto& kk = *g.kernels;
  detail::GemmTile t;
  for (const index_t step = kk.panels[mr - 1]; p < p_end; p += step) {
    const index_t panels = std::min(step, p_end - p);
    fill_tile(g, t, a, i0, k0, kc, p, panels);
    prepare(t);
    kk.kernels[mr - 1][panels - 1](t);
  }
}

// Few rows (decoding): every row tile of A packed at once, then each B panel goes
// through all of them back to back — read from memory once, reused while in L1/L2.
// Panels go by in groups as wide as a thin tile takes them.
void run_block_few_rows(const GemmProblem& g, index_t i_begin, index_t i_end, index_t p_begin, index_t p_end) {
  const auto& kk = *g.kernels;
  const index_t K = g.b.k, rows = i_end - i_begin;
  const index_t tiles = (rows + kk.mr - 1) / kk.mr;
  float* apack = few_rows_a_buffer();  // tile t at its first row × kGemmAStride
  const auto tile_a = [&](index_t tile) { return apack + detail::tile_start(rows, tiles, tile) * detail::kGemmAStride; };
  index_t group = 1;  // tiles differ by at most one row
  for (index_t tile = 0; tile < std::min<index_t>(tiles, 2); ++tile)
    group = std::max<index_t>(group, kk.panels[detail::tile_rows(rows, tiles, tile) - 1]);
  index_t k0 = 0;
  do {
    const index_t kc = std::min(g.kc, K - k0);
    for (index_t tile = 0; tile < tiles; ++tile)
      pack_tile(g, i_begin + detail::tile_start(rows, tiles, tile), detail::tile_rows(rows, tiles, tile), k0, kc,
                tile_a(tile));
    for (index_t p = p_begin; p < p_end; p += group) {
      const index_t p_next = std::min(p + group, p_end);
      for (index_t tile = 0; tile < tiles; ++tile)
        run_tile(g, tile_a(tile), i_begin + detail::tile_start(rows, tiles, tile), detail::tile_rows(rows, tiles, tile),
                 k0, kc, p, p_next,
                 [&](detail::GemmTile& t) { prefetch_panel_share(g, t, k0, kc, p_next, p_end, tile, tiles); });
    }
    k0 += kc;
  } while (k0 < K);
}

void run_block(const GemmProblem& g, index_t i_begin, index_t i_end, index_t p_begin, index_t p_end) {
  const auto& kk = *g.kernels;
  const index_t K = g.b.k;
  alignas(64) float apack[16 * detail::kGemmAStride];
  for (index_t p0 = p_begin; p0 < p_end; p0 += g.nc_panels) {
    const index_t p1 = std::min(p_end, p0 + g.nc_panels);
    index_t k0 = 0;
    do {  // at least once, so K = 0 still applies the epilogue
      const index_t kc = std::min(g.kc, K - k0);
      const index_t rows = i_end - i_begin;
      const index_t tiles = (rows + kk.mr - 1) / kk.mr;
      for (index_t tile = 0, i0 = i_begin; tile < tiles; ++tile) {
        const int mr = detail::tile_rows(rows, tiles, tile);
        pack_tile(g, i0, mr, k0, kc, apack);
        run_tile(g, apack, i0, mr, k0, kc, p0, p1, [](detail::GemmTile&) {});
        i0 += mr;
      }
      k0 += kc;
    } while (k0 < K);
  }
}

// Rows [i_begin, i_end) × panels [p_begin, p_end) with the loop order their shape wants.
void run_range(const GemmProblem& g, index_t i_begin, index_t i_end, index_t p_begin, index_t p_end) {
  (few_rows(i_end - i_begin) ? run_block_few_rows : run_block)(g, i_begin, i_end, p_begin, p_end);
}

// f32 and bf16: K-blocked, partial sums in C.
void gemm_blocked(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& ep, int threads) {
  const index_t M = a.rows, N = b.n, K = b.k;
  const auto& kt = detail::kernels_for(b.isa);
  const bool bf16 = b.type == WeightType::bf16;
  GemmProblem g{a, b, c, ep, ep.residual.data != nullptr && ep.residual.data == c.data,
                &detail::gemm_kernels_of(kt, b.type), bf16 ? kt.bf16_pack_a : &pack_a_f32, bf16 ? 2 : 1, 0, 0, 0,
                static_cast<index_t>(b.panel_bytes())};
  g.k_bytes = g.kernels->nr * static_cast<index_t>(bf16 ? 2 : 4);
  const index_t k_blocks = std::max<index_t>(1, (K + detail::kGemmMaxKc - 1) / detail::kGemmMaxKc);
  g.kc = (K + k_blocks - 1) / k_blocks;  // equal blocks, none tiny,
  g.kc += g.kc % g.k_step;               // each a whole number of kernel steps
  g.nc_panels = std::max<index_t>(1, kBBlockBytes / (std::max<index_t>(g.kc, 1) * g.k_bytes));

  const index_t m_tiles = (M + g.kernels->mr - 1) / g.kernels->mr;
  const index_t panels = b.panels();
  const int nt = detail::gemm_threads(threads, M, N, K, N * K * (bf16 ? 2 : 4));
  if (nt == 1) {
    run_range(g, 0, M, 0, panels);
    return;
  }
  int tm = 1, tn = 1;
  detail::choose_grid(m_tiles, panels, nt, tm, tn);
  detail::parallel_chunks(tm * tn, tm * tn, [&](index_t first, index_t last) {
    for (index_t t = first; t < last; ++t) {
      index_t tb, te, pb, pe;
      detail::split_range(m_tiles, static_cast<int>(t / tn), tm, tb, te);
      detail::split_range(panels, static_cast<int>(t % tn), tn, pb, pe);
      const index_t i0 = tb * g.kernels->mr, i1 = std::min(M, te * g.kernels->mr);
      if (i0 < i1 && pb < pe) run_range(g, i0, i1, pb, pe);
    }
  });
}

// The calling thread's scratch for s8 GEMMs called without any.
std::byte* thread_scratch(std::size_t bytes) {
  thread_local AlignedBuffer buffer;
  if (buffer.bytes() < bytes) buffer = AlignedBuffer(bytes);
  return buffer.data();
}

}  // namespace

namespace detail {

int gemm_threads(int threads, index_t m, index_t n, index_t k, index_t weight_bytes) {
  return std::max(useful_threads(threads, 2 * m * n * std::max<index_t>(k, 1), kFlopsPerThread),
                  useful_threads(threads, weight_bytes, kWeightBytesPerThread));
}

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
  check_threads(op, threads);
  check_matrix(op, "A", a);
  check_matrix(op, "C", c);
  ATTEND_OP_CHECK(b.n >= 0 && b.k >= 0, op, "B has negative shape");
  ATTEND_OP_CHECK(b.data != nullptr || b.n == 0 || b.k == 0, op, "B (packed weight) is empty");
  ATTEND_OP_CHECK(a.cols == b.k, op, "A is [", a.rows, ", ", a.cols, "] but B has K = ", b.k);
  ATTEND_OP_CHECK(c.rows == a.rows && c.cols == b.n, op, "C is [", c.rows, ", ", c.cols, "], expected [",
                  a.rows, ", ", b.n, "]");
  ATTEND_OP_CHECK(b.nr == gemm_panel_width(b.isa, b.type), op, weight_type_name(b.type),
                  " B was packed with panel width ", b.nr, " but ", isa_name(b.isa), " kernels use ",
                  gemm_panel_width(b.isa, b.type));
  ATTEND_OP_CHECK(b.type != WeightType::s8 || b.scales != nullptr || b.n == 0, op, "s8 B has no scales");
  for (size_t i = 0; i < ep.two_term_rows.size(); ++i) {
    const index_t row = ep.two_term_rows[i] - ep.two_term_row_base;
    ATTEND_OP_CHECK(row >= 0 && row < a.rows, op, "two-term row ", ep.two_term_rows[i], " (entry ", i,
                    ") is row ", row, " of A, which has ", a.rows);
    ATTEND_OP_CHECK(i == 0 || ep.two_term_rows[i] > ep.two_term_rows[i - 1], op, "two-term rows are not ascending at entry ", i,
                    " (", ep.two_term_rows[i - 1], ", ", ep.two_term_rows[i], ")");
  }
  if (ep.residual.data) {
    check_matrix(op, "residual", ep.residual);
    check_same_shape(op, "residual", ep.residual, "C", c);
    if (ep.residual.data == c.data) {
      ATTEND_OP_CHECK(ep.residual.ld == c.ld, op, "residual aliases C with a different leading dimension");
      ATTEND_OP_CHECK(ep.activation == Activation::none && ep.alpha == 1.0f, op,
                      "residual may alias C only without activation and with alpha = 1");
    }
  }
}

}  // namespace detail

std::size_t gemm_scratch_bytes(index_t m, const PackedWeightView& b, index_t two_term_rows) {
  return b.type == WeightType::s8 ? detail::gemm_s8_scratch_bytes(m, b, two_term_rows) : 0;
}

void gemm(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& ep, int threads,
          std::span<std::byte> scratch) {
  detail::check_gemm(a, b, c, ep, threads);
  if (a.rows == 0 || b.n == 0) return;
  if (b.type != WeightType::s8) {
    gemm_blocked(a, b, c, ep, threads);
    return;
  }
  const auto two_term = static_cast<index_t>(ep.two_term_rows.size());
  const std::size_t need = detail::gemm_s8_scratch_bytes(a.rows, b, two_term);
  ATTEND_OP_CHECK(scratch.size() >= need, "gemm", "scratch holds ", scratch.size(), " bytes, an s8 GEMM of ",
                  a.rows, " rows", two_term ? " (" + std::to_string(two_term) + " of two terms)" : std::string(),
                  " and K = ", b.k, " needs ", need);
  ATTEND_OP_CHECK(reinterpret_cast<std::uintptr_t>(scratch.data()) % 64 == 0, "gemm",
                  "scratch must be 64-byte aligned");
  detail::gemm_s8(a, b, c, ep, threads, scratch.data());
}

void gemm(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& ep, int threads) {
  std::span<std::byte> scratch;
  if (b.type == WeightType::s8) {
    detail::check_gemm(a, b, c, ep, threads);  // before sizing anything from the shapes
    const std::size_t need = detail::gemm_s8_scratch_bytes(a.rows, b, static_cast<index_t>(ep.two_term_rows.size()));
    scratch = {thread_scratch(need), need};
  }
  gemm(a, b, c, ep, threads, scratch);
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
