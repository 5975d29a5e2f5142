// The s8 GEMM's loops: A quantized once, then the BLIS loops without K blocking (the
// int32 sums must see all of K before they can be dequantized).
//
//   quantize A: each row tile (≤ MR rows) to [K/4][mr][4] int8 with its row scales —
//               once per GEMM, tiles split over the threads, then one barrier (none
//               when the threads split the rows: each computes on what it quantized)
//   for each block of NC panels            — the B block stays in L2
//     for each row tile                    — its quantized rows stay in L1
//       for each panel in the block: micro-kernel (mr × NR × K) and the epilogue
//
// Two-term rows (GemmEpilogue::two_term_rows): quantized with their tile's rows, their
// residuals in groups of up to MR rows, each group a tile of its own. A row's tile stores
// its first term without the epilogue; once a block of panels is done, each group of
// the thread's residuals runs on each panel (still in L2) as one tile — ~5 rows of a
// 256-row share: 5× the products per weight load of the one-row kernel per row and
// panel it replaces — and each row's two terms are summed and stored through the
// epilogue (KernelTable's s8_store_sums).
//
// Few rows (decoding, quantized A within kFewRowABytes): NC = 1, so each weight panel,
// read from memory once, serves every row tile while in L1, and the tiles prefetch the
// next panel between them while they compute — the fp32 few-row order, for any number
// of tiles (A is already packed; nothing limits it to a stack buffer). Kernels that
// measured the block order faster for every M opt out (GemmKernels::s8_few_row_order).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>

#include "check.hpp"
#include "gemm_driver.hpp"
#include "parallel.hpp"

namespace attend::ops::detail {
namespace {

constexpr index_t kBBlockBytes = 1 << 19;   // NC panels of B: half of a 1 MiB L2
constexpr index_t kFewRowABytes = 1 << 18;  // quantized A of a thread's rows up to this: NC = 1
// set_s8_loop_order's choice (atomic: a bench sets it from the thread that runs GEMMs
// while pool workers read it).
std::atomic<S8LoopOrder> loop_order{S8LoopOrder::kernels};

// Bounds of the stack tile a group of two-term rows' second terms is stored in.
constexpr index_t kMaxTwoTermGroupRows = 32;
constexpr index_t kMaxS8PanelWidth = 64;

index_t round_up_64(index_t bytes) { return (bytes + 63) / 64 * 64; }

// Where the quantized A, its row scales and row offsets live in the scratch. Besides the
// int8 values, the kernels' form (S8ActivationForm) may want |q| or q widened to int16:
// `extra`, in q's layout (one byte or two per value).
struct QuantizedA {
  std::int8_t* q;             // tile t at its first row × kp
  float* row_scale;           // [M]
  std::int32_t* row_offset;   // [M]
  S8ActivationForm form;
  void* extra;                // |q| (s8_with_abs) or q as int16 (s16); else null

  static bool has_extra(S8ActivationForm form) {
    return form == S8ActivationForm::s8_with_abs || form == S8ActivationForm::s16;
  }
  static index_t extra_bytes(index_t m, index_t kp, S8ActivationForm form) {
    return has_extra(form) ? round_up_64(m * kp * (form == S8ActivationForm::s16 ? 2 : 1)) : 0;
  }
  static index_t scratch_bytes(index_t m, index_t kp, S8ActivationForm form) {
    return round_up_64(m * kp) + 2 * round_up_64(4 * m) + extra_bytes(m, kp, form);
  }
  QuantizedA(std::byte* scratch, index_t m, index_t kp, S8ActivationForm form)
      : q(reinterpret_cast<std::int8_t*>(scratch)),
        row_scale(reinterpret_cast<float*>(scratch + round_up_64(m * kp))),
        row_offset(reinterpret_cast<std::int32_t*>(scratch + round_up_64(m * kp) + round_up_64(4 * m))),
        form(form),
        extra(has_extra(form) ? scratch + round_up_64(m * kp) + 2 * round_up_64(4 * m) : nullptr) {}

  // What the kernels read as GemmTile::a and ::a_abs for rows from i0.
  const void* a(index_t i0, index_t kp) const {
    return form == S8ActivationForm::s16 ? static_cast<const void*>(static_cast<std::int16_t*>(extra) + i0 * kp)
                                         : q + i0 * kp;
  }
  const void* a_abs(index_t i0, index_t kp) const {
    return form == S8ActivationForm::s8_with_abs ? static_cast<std::int8_t*>(extra) + i0 * kp : nullptr;
  }
};

// The two-term rows' residuals, in scratch after the main quantized A: each listed
// row's residual floats, then the residuals quantized in groups — runs of consecutive
// entries, at most group_rows of them, each one tile ([kp/4][n][4]) in its first
// entry's slot (a group of n rows fits in n one-row slots).
struct TwoTermRows {
  std::span<const std::int32_t> rows;
  index_t base = 0;
  std::byte* scratch = nullptr;
  index_t k = 0, kp = 0;
  S8ActivationForm form = S8ActivationForm::s8;
  // Rows per group: the kernels' MR where the thread that quantizes a row's residual
  // also computes it (the groups of a range are then the same for both); else 1.
  index_t group_rows = 1;

  static index_t value_bytes(index_t k) { return round_up_64(4 * k); }
  static index_t bytes_per_row(index_t k, index_t kp, S8ActivationForm form) {
    return QuantizedA::scratch_bytes(1, kp, form) + value_bytes(k);
  }
  index_t count() const { return static_cast<index_t>(rows.size()); }
  index_t row(index_t i) const { return rows[static_cast<size_t>(i)] - base; }
  float* values(index_t i) const { return reinterpret_cast<float*>(scratch + i * value_bytes(k)); }
  index_t values_ld() const { return value_bytes(k) / static_cast<index_t>(sizeof(float)); }
  // Entries [i, i + n) quantized as one tile.
  QuantizedA group(index_t i, index_t n) const {
    return QuantizedA(scratch + count() * value_bytes(k) + i * QuantizedA::scratch_bytes(1, kp, form), n, kp, form);
  }
  // f(i, n) for the groups of entries [lo, hi): [lo, lo + group_rows), and so on.
  template <class F>
  void for_each_group(index_t lo, index_t hi, const F& f) const {
    for (index_t i = lo; i < hi; i += group_rows) f(i, std::min(group_rows, hi - i));
  }
  // The entries [lo, hi) of the list that are rows [r0, r1) of A.
  std::pair<index_t, index_t> within(index_t r0, index_t r1) const {
    auto to_row = [&](std::int32_t v) { return static_cast<index_t>(v) - base; };
    const auto lo = std::partition_point(rows.begin(), rows.end(), [&](std::int32_t v) { return to_row(v) < r0; });
    const auto hi = std::partition_point(lo, rows.end(), [&](std::int32_t v) { return to_row(v) < r1; });
    return {lo - rows.begin(), hi - rows.begin()};
  }
};

struct S8Problem {
  ConstMatrix a;
  PackedWeightView b;
  Matrix c;
  GemmEpilogue ep;
  bool residual_is_c;
  const KernelTable* kt;
  QuantizedA qa;
  index_t kp, m_tiles;
  index_t panel_bytes;
  TwoTermRows two_term;

  const std::byte* panel(index_t p) const { return static_cast<const std::byte*>(b.data) + p * panel_bytes; }
};

// `rows` rows of `a` (row stride lda, K = g.b.k) quantized into qa's rows from i0 (one
// tile: [kp/4][rows][4]) in the form the kernels read.
void quantize_rows(const S8Problem& g, const float* a, index_t lda, int rows, const QuantizedA& qa, index_t i0) {
  if (qa.form == S8ActivationForm::s16 && g.kt->s8_quantize_a_s16 != nullptr) {  // straight to int16
    g.kt->s8_quantize_a_s16(a, lda, rows, g.b.k, g.kp, kS8ActivationLevels, g.ep.alpha,
                            static_cast<std::int16_t*>(qa.extra) + i0 * g.kp, qa.row_scale + i0, qa.row_offset + i0);
    return;
  }
  g.kt->s8_quantize_a(a, lda, rows, g.b.k, g.kp, kS8ActivationLevels, g.ep.alpha, qa.q + i0 * g.kp,
                      qa.row_scale + i0, qa.row_offset + i0);
  // The kernels' second form of the same values (loops the compiler vectorises).
  const std::int8_t* q = qa.q + i0 * g.kp;
  const index_t n = rows * g.kp;
  if (qa.form == S8ActivationForm::s8_with_abs) {  // |q| ≤ 127: no overflow
    std::int8_t* abs = static_cast<std::int8_t*>(qa.extra) + i0 * g.kp;
    for (index_t i = 0; i < n; ++i) abs[i] = static_cast<std::int8_t>(q[i] < 0 ? -q[i] : q[i]);
  } else if (qa.form == S8ActivationForm::s16) {
    std::int16_t* wide = static_cast<std::int16_t*>(qa.extra) + i0 * g.kp;
    for (index_t i = 0; i < n; ++i) wide[i] = q[i];
  }
}

// r = a − q(a)·level for a row of k values, q as every ISA's quantizer rounds it:
// nearest-even(a · (levels / max|a|)), level = max|a| / levels. |a · inv| ≤ 127, so
// adding and taking away 1.5·2²³ rounds to the nearest integer, ties to even (this file
// is built for the baseline ISA, without fused multiply-adds: the same bits everywhere).
// A row without a finite, nonzero maximum has no residual (its first term says NaN).
void quantization_residual(const float* a, index_t k, float* r) {
  float max = 0.0f;
  for (index_t i = 0; i < k; ++i) max = std::max(max, std::fabs(a[i]));
  if (!(max > 0.0f && max <= std::numeric_limits<float>::max())) {
    std::fill_n(r, k, 0.0f);
    return;
  }
  constexpr float kRound = 12582912.0f;  // 1.5·2²³
  const float inv = static_cast<float>(kS8ActivationLevels) / max;
  const float level = max / static_cast<float>(kS8ActivationLevels);
  for (index_t i = 0; i < k; ++i) {
    const float q = (a[i] * inv + kRound) - kRound;
    r[i] = a[i] - q * level;
  }
}

// The residuals of the two-term rows among A's rows [r0, r1), quantized in groups.
void quantize_two_term_rows(const S8Problem& g, index_t r0, index_t r1) {
  const auto [lo, hi] = g.two_term.within(r0, r1);
  for (index_t i = lo; i < hi; ++i) quantization_residual(g.a.row(g.two_term.row(i)), g.b.k, g.two_term.values(i));
  g.two_term.for_each_group(lo, hi, [&](index_t i, index_t n) {
    quantize_rows(g, g.two_term.values(i), g.two_term.values_ld(), static_cast<int>(n), g.two_term.group(i, n), 0);
  });
}

void quantize_tiles(const S8Problem& g, index_t t_begin, index_t t_end) {
  const index_t M = g.a.rows;
  for (index_t t = t_begin; t < t_end; ++t)
    quantize_rows(g, g.a.row(tile_start(M, g.m_tiles, t)), g.a.ld, tile_rows(M, g.m_tiles, t), g.qa,
                  tile_start(M, g.m_tiles, t));
  if (!g.two_term.rows.empty())
    quantize_two_term_rows(g, tile_start(M, g.m_tiles, t_begin), tile_start(M, g.m_tiles, t_end));
}

// quantize_tiles, its seconds added to a profiled call's GemmProfile as a share of the
// call's wall time: divided by the `sharers` threads that quantize at the same time.
void quantize_tiles_profiled(const S8Problem& g, index_t t_begin, index_t t_end, index_t sharers) {
  if (g.ep.profile == nullptr) return quantize_tiles(g, t_begin, t_end);
  const auto t0 = std::chrono::steady_clock::now();
  quantize_tiles(g, t_begin, t_end);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  g.ep.profile->quantize_seconds.fetch_add(seconds / static_cast<double>(std::max<index_t>(sharers, 1)),
                                           std::memory_order_relaxed);
}

// The fields every tile of the problem shares.
GemmTile tile_template(const S8Problem& g) {
  GemmTile t;
  t.kc = g.kp;
  t.ldc = g.c.ld;
  t.accumulate = g.residual_is_c;
  t.last = true;
  t.alpha = 1.0f;  // folded into row_scale
  t.activation = g.ep.activation;
  t.ldr = g.ep.residual.ld;
  t.prefetch_step = 4 * g.kt->s8.nr;
  return t;
}

// Whether a thread's `rows` rows run in the few-row order.
bool few_row_order(const S8Problem& g, index_t rows) {
  switch (loop_order.load(std::memory_order_relaxed)) {
    case S8LoopOrder::block: return false;
    case S8LoopOrder::few_rows: return rows * g.kp <= kFewRowABytes;
    case S8LoopOrder::kernels: break;
  }
  return g.kt->s8.s8_few_row_order && rows * g.kp <= kFewRowABytes;
}

// Rows from i0 × panel p.
void fill_tile(const S8Problem& g, GemmTile& t, index_t i0, index_t p) {
  const index_t NR = g.kt->s8.nr, n0 = p * NR;
  t.a = g.qa.a(i0, g.kp);
  t.a_abs = g.qa.a_abs(i0, g.kp);
  t.b = g.panel(p);
  t.nr = static_cast<int>(std::min(NR, g.b.n - n0));
  t.c = g.c.row(i0) + n0;
  t.bias = g.ep.bias ? g.ep.bias + n0 : nullptr;
  t.residual = g.ep.residual.data && !g.residual_is_c ? g.ep.residual.row(i0) + n0 : nullptr;
  t.row_scale = g.qa.row_scale + i0;
  t.row_offset = g.qa.row_offset + i0;
  t.col_scale = g.b.scales + n0;
  t.prefetch = static_cast<const char*>(t.b);  // own panel: a no-op unless the driver says better
  t.prefetch_step = 4 * NR;
}

// Tile `tile` of `tiles` takes a share of panel `next` to prefetch while it computes.
// Shares are at least a cache line per k group, so with many tiles only the first few
// prefetch (the rest would fetch the same lines again).
void prefetch_next_panel(const S8Problem& g, GemmTile& t, index_t next, index_t tile, index_t tiles) {
  const index_t bytes = g.panel_bytes, groups = g.kp / 4;
  if (tiles < 2 || groups == 0) return;  // one tile is bandwidth-bound: the fp32 path measured it slower
  const index_t sharers = std::clamp<index_t>(bytes / (64 * groups), 1, tiles);
  if (tile >= sharers) return;
  t.prefetch = reinterpret_cast<const char*>(g.panel(next)) + tile * bytes / sharers;
  t.prefetch_step = bytes / (sharers * groups);
}

// The second terms of the two-term rows in row tiles [t_begin, t_end) on panels
// [p0, p1), whose tiles have stored those rows' first terms raw: on each panel, each
// group of residuals as one tile (its dequantized sums raw into a stack tile), then each
// row's second term + first term through the epilogue — alpha is in the row scales, the
// bias, the activation, a residual matrix (one that is C itself was there before the
// first term). The same float operations, in the same order, as a kernel that had
// added the first term as a partial sum: a row's bits do not depend on its group.
void second_terms(const S8Problem& g, index_t t_begin, index_t t_end, index_t p0, index_t p1) {
  const index_t M = g.a.rows, NR = g.kt->s8.nr;
  const auto [lo, hi] = g.two_term.within(tile_start(M, g.m_tiles, t_begin), tile_start(M, g.m_tiles, t_end));
  if (lo == hi) return;
  alignas(64) float sums[kMaxTwoTermGroupRows * kMaxS8PanelWidth];
  GemmTile group = tile_template(g), row = tile_template(g);
  for (index_t p = p0; p < p1; ++p) {
    g.two_term.for_each_group(lo, hi, [&](index_t i, index_t n) {
      const QuantizedA q = g.two_term.group(i, n);
      fill_tile(g, group, 0, p);  // the panel's columns, then this group's rows
      group.a = q.a(0, g.kp);
      group.a_abs = q.a_abs(0, g.kp);
      group.row_scale = q.row_scale;
      group.row_offset = q.row_offset;
      group.c = sums;
      group.ldc = NR;
      group.accumulate = false;
      group.raw_rows = n == 32 ? ~0u : (1u << n) - 1;
      g.kt->s8.kernels[n - 1][0](group);
      for (index_t j = 0; j < n; ++j) {
        fill_tile(g, row, g.two_term.row(i + j), p);
        row.accumulate = true;  // onto the first term
        g.kt->s8.s8_store_sums(sums + j * NR, 1, row);
      }
    });
  }
}

// Bit r set for each two-term row r rows into the tile from i0 (entries [lo, hi)).
std::uint32_t two_term_mask(const S8Problem& g, index_t i0, index_t lo, index_t hi) {
  std::uint32_t mask = 0;
  for (index_t i = lo; i < hi; ++i) mask |= 1u << (g.two_term.row(i) - i0);
  return mask;
}

// Row tiles [t_begin, t_end) × panels [p_begin, p_end).
void run_range(const S8Problem& g, index_t t_begin, index_t t_end, index_t p_begin, index_t p_end) {
  const index_t M = g.a.rows;
  const index_t rows = tile_start(M, g.m_tiles, t_end) - tile_start(M, g.m_tiles, t_begin);
  const bool runs = g.kt->s8.s8_panel_runs && loop_order.load(std::memory_order_relaxed) == S8LoopOrder::kernels;
  // (Kernels that take runs of panels keep to the block order: a run per row tile.)
  const bool few_rows = !runs && few_row_order(g, rows);
  const index_t nc = few_rows ? 1 : std::max<index_t>(1, kBBlockBytes / std::max<index_t>(g.panel_bytes, 1));
  const auto& kernels = g.kt->s8.kernels;
  if (g.kt->s8_begin_thread != nullptr) g.kt->s8_begin_thread();
  GemmTile t = tile_template(g);
  for (index_t p0 = p_begin; p0 < p_end; p0 += nc) {
    const index_t p1 = std::min(p_end, p0 + nc);
    for (index_t tile = t_begin; tile < t_end; ++tile) {
      const index_t i0 = tile_start(M, g.m_tiles, tile);
      const int mr = tile_rows(M, g.m_tiles, tile);
      const auto [two_lo, two_hi] = g.two_term.within(i0, i0 + mr);
      const std::uint32_t raw_rows = two_term_mask(g, i0, two_lo, two_hi);
      if (runs) {  // the block's panels in one call
        fill_tile(g, t, i0, p0);
        t.raw_rows = raw_rows;
        t.panels = static_cast<int>(p1 - p0);
        t.panel_stride = g.panel_bytes;
        t.prefetch = reinterpret_cast<const char*>(g.panel(p0));  // after the run: its first, for the next tile
        t.prefetch_step = 64;
        t.nr = static_cast<int>(std::min(g.b.n - p0 * g.kt->s8.nr, (p1 - p0) * g.kt->s8.nr));
        kernels[mr - 1][0](t);
        continue;
      }
      for (index_t p = p0; p < p1; ++p) {
        fill_tile(g, t, i0, p);
        t.raw_rows = raw_rows;
        if (few_rows && p + 1 < p_end) {
          prefetch_next_panel(g, t, p + 1, tile - t_begin, t_end - t_begin);
        } else if (!few_rows) {
          // The next call's panel (the block's next, or its first again for the next
          // tile) is in L2: bring its start to L1, one line per k group, so that the
          // next call's first groups — before its own look-ahead reaches them — hit L1.
          const index_t next = p + 1 < p1 ? p + 1 : p0;
          t.prefetch = reinterpret_cast<const char*>(g.panel(next));
          t.prefetch_step = 64;
        }
        kernels[mr - 1][0](t);
      }
    }
    if (!g.two_term.rows.empty()) second_terms(g, t_begin, t_end, p0, p1);
  }
}

// Grid cell `cell` of tm × tn: its tile range × panel range.
void run_cell(const S8Problem& g, int cell, int tm, int tn) {
  index_t tb, te, pb, pe;
  split_range(g.m_tiles, cell / tn, tm, tb, te);
  split_range(g.b.panels(), cell % tn, tn, pb, pe);
  if (tb < te && pb < pe) run_range(g, tb, te, pb, pe);
}

// Row tiles of at most mr rows for M rows, a multiple of `threads` when the threads split
// the rows: each thread then gets the same rows to one (a 256-row chunk in 19 tiles split
// 10/9 made one thread do 5% more than the other, and the other wait for it). A row's
// results do not depend on its tile: the sums are exact integers.
index_t row_tiles(index_t M, index_t mr, int threads) {
  const index_t tiles = (M + mr - 1) / mr;
  return (tiles + threads - 1) / threads * threads;
}

// The table whose s8 kernels compute an M-row product with b: b's own, or its fallback
// where those kernels do not suit the shape (kernel_table.hpp: s8_fallback) — the same
// packed panels, the same bits.
const KernelTable& s8_table(index_t m, const PackedWeightView& b) {
  const KernelTable& kt = kernels_for(b.isa);
  if (kt.s8_fallback != nullptr && (m < kt.s8_min_rows || b.k_padded() % kt.s8_k_multiple != 0))
    return *kt.s8_fallback;
  return kt;
}

}  // namespace

void set_s8_loop_order(S8LoopOrder order) { loop_order.store(order, std::memory_order_relaxed); }

std::size_t gemm_s8_scratch_bytes(index_t m, const PackedWeightView& b, index_t two_term_rows) {
  const S8ActivationForm form = s8_table(m, b).s8.s8_a_form;
  return static_cast<std::size_t>(QuantizedA::scratch_bytes(m, b.k_padded(), form) +
                                  two_term_rows * TwoTermRows::bytes_per_row(b.k, b.k_padded(), form));
}

void gemm_s8(ConstMatrix a, const PackedWeightView& b, Matrix c, const GemmEpilogue& ep, int threads,
             std::byte* scratch) {
  const KernelTable& kt = s8_table(a.rows, b);
  const index_t M = a.rows, kp = b.k_padded();
  const int nt = gemm_threads(threads, M, b.n, b.k, b.n * b.k);
  const bool split_rows = nt > 1 && M > b.n && (M + kt.s8.mr - 1) / kt.s8.mr >= nt;
  ATTEND_OP_CHECK(ep.two_term_rows.empty() || (kt.s8.mr <= kMaxTwoTermGroupRows && kt.s8.nr <= kMaxS8PanelWidth),
                  "gemm", "internal: two-term rows need s8 tiles of at most ", kMaxTwoTermGroupRows, " × ",
                  kMaxS8PanelWidth, " (", kt.s8.name, ": ", kt.s8.mr, " × ", kt.s8.nr, ")");
  const index_t m_tiles = row_tiles(M, kt.s8.mr, split_rows ? nt : 1);
  // More rows than columns (the encoder): split the rows — each thread then computes on
  // the rows it quantized, so no quantized A crosses cores and no barrier is needed,
  // and the smaller B is shared read-only. Otherwise (decoding) split the panels, so
  // each weight panel is streamed from memory by one thread only.
  int tm = 1, tn = 1;
  if (split_rows) {
    tm = nt;
  } else if (nt > 1) {
    choose_grid(m_tiles, b.panels(), nt, tm, tn);
  }
  const bool one_region = nt == 1 || (tn == 1 && tm == nt);  // each thread computes what it quantized
  const S8ActivationForm form = kt.s8.s8_a_form;
  const TwoTermRows two_term{ep.two_term_rows, ep.two_term_row_base, scratch + QuantizedA::scratch_bytes(M, kp, form),
                             b.k, kp, form, one_region ? kt.s8.mr : 1};
  const S8Problem g{a,   b, c, ep, ep.residual.data != nullptr && ep.residual.data == c.data, &kt,
                    QuantizedA(scratch, M, kp, form), kp, m_tiles, static_cast<index_t>(b.panel_bytes()), two_term};
  if (nt == 1) {
    quantize_tiles_profiled(g, 0, g.m_tiles, 1);
    run_range(g, 0, g.m_tiles, 0, b.panels());
    return;
  }
  if (one_region) {
    // One region: thread t quantizes the rows it then computes, no barrier.
    parallel_chunks(nt, nt, [&](index_t first, index_t last) {
      for (index_t t = first; t < last; ++t) {
        index_t qb, qe;
        split_range(g.m_tiles, static_cast<int>(t), nt, qb, qe);
        quantize_tiles_profiled(g, qb, qe, nt);
        run_cell(g, static_cast<int>(t), tm, tn);
      }
    });
    return;
  }
  // Two regions (the end of the first is the barrier): every panel needs all of A.
  parallel_chunks(nt, g.m_tiles, [&](index_t first, index_t last) {
    quantize_tiles_profiled(g, first, last, std::min<index_t>(nt, g.m_tiles));
  });
  parallel_chunks(nt, tm * tn, [&](index_t first, index_t last) {
    for (index_t cell = first; cell < last; ++cell) run_cell(g, static_cast<int>(cell), tm, tn);
  });
}

}  // namespace attend::ops::detail
