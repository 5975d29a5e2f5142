// The per-ISA kernel table: the only code that differs between AVX-512, AVX2 and SSE2.
//
// Drivers (gemm.cpp, attention.cpp, normalization.cpp, …) are portable: they check
// arguments, block loops and split work over threads, then call these kernels on
// pieces that fit in cache. Each kernel owns its edge cases (a partial GEMM tile, a
// head_dim that is not a multiple of the vector width, a short row).
#pragma once

#include <cstdint>

#include "attend/ops/attention.hpp"
#include "attend/ops/isa.hpp"
#include "attend/ops/row_magnitude.hpp"
#include "attend/ops/types.hpp"

namespace attend::ops::detail {

// Largest head dimension the attention kernels accept (their tiles live on the stack).
inline constexpr index_t kMaxHeadDim = 256;
// Keys per tile of the online softmax.
inline constexpr int kAttentionKeyTile = 64;
// The short-key kernel (kernels/attention_short.hpp): sentences of at most this many
// keys, heads of a multiple of 16 dims up to the limit. The attention driver hands work
// out in groups of kAttentionQueryGroup queries.
inline constexpr index_t kShortAttentionMaxKeys = 128;
inline constexpr index_t kShortAttentionMaxHeadDim = 64;
inline constexpr index_t kAttentionQueryGroup = 64;

// Largest K block of the fp32 and bf16 GEMMs, and the row stride of a packed A
// micro-panel (in floats; bf16 rows use the same bytes). The stride is a compile-time
// constant so the micro-kernel addresses A's rows with immediate displacements off one
// pointer; +16 floats keeps the rows off the same L1 sets.
inline constexpr index_t kGemmMaxKc = 512;
inline constexpr index_t kGemmAStride = kGemmMaxKc + 16;
// Most adjacent panels one fp32 or bf16 micro-kernel call computes (GemmKernels::panels).
inline constexpr int kGemmMaxPanels = 4;
// Most rows of a micro-tile (AMX: two 16-row tiles).
inline constexpr int kGemmMaxMr = 32;

// One GEMM micro-tile: C[mr×nr] (+)= A[mr×kc]·B[kc×nr], then the epilogue on the last
// K block. `b` points into a packed panel, `a` into packed A; their layouts are the
// element type's (see gemm_pack.cpp):
//   f32   a: rows [mr][kGemmAStride] floats;      b: [kc][NR] floats
//   bf16  a: rows [mr][kGemmAStride] floats' bytes holding bf16 (or, for widening
//            kernels, floats already rounded to bf16); b: [kc/2][NR][2] bf16 pairs
//   s8    a: [kc/4][mr][4] int8 (activations quantized per row), or the same values
//            as int16 for kernels whose S8ActivationForm is s16, or plain rows of kc
//            int8 for those whose form is `rows` (AMX tiles load rows);
//         b: [kc/4][NR][4] weights q + s8_weight_offset (u8 q + 128, or s8 q). Never
//         K-blocked: kc = K rounded up to 4
struct GemmTile {
  index_t kc = 0;
  int nr = 0;               // columns to store (≤ panels·NR); the last panel is zero-padded to NR
  int panels = 1;           // adjacent panels computed at once (fp32 and bf16 thin tiles)…
  index_t panel_stride = 0; // …each panel_stride bytes after the one before (from b)
  const void* a = nullptr;
  const void* a_abs = nullptr;  // s8 kernels of form s8_with_abs: |a| in a's layout
  const void* b = nullptr;
  float* c = nullptr;
  index_t ldc = 0;
  bool accumulate = false;  // add the partial sum already in C (earlier K blocks)
  bool last = false;        // final K block: apply alpha, bias, activation, residual
  float alpha = 1.0f;
  const float* bias = nullptr;      // at this tile's first column
  Activation activation = Activation::none;
  const float* residual = nullptr;  // at this tile's origin
  index_t ldr = 0;
  // Bytes to pull towards L2 while computing: prefetch + k·prefetch_step for every
  // k-step (the next weight panel, when the driver knows it; else this tile's own). A
  // hint: a kernel may leave it unused where its lines measured slower than none (the
  // AVX2 s8 kernel, gemm_s8_madd16_microkernel.hpp).
  const char* prefetch = nullptr;
  index_t prefetch_step = 0;
  // s8 only: C = row_scale[r]·col_scale[j]·Σ_k a_q·b_q. Kernels whose weights are
  // stored u8 = q + 128 subtract row_offset[r] = 128·Σ_k a_q[r][k] to remove the shift.
  const float* row_scale = nullptr;          // [mr], alpha folded in
  const std::int32_t* row_offset = nullptr;  // [mr]
  const float* col_scale = nullptr;          // [nr], at this tile's first column
  // Rows (bit r) stored as their sums alone — no alpha, bias, activation or residual —
  // for the s8 driver to finish with a second term (GemmEpilogue::two_term_rows).
  std::uint32_t raw_rows = 0;
};
// Indexed by mr − 1: one specialisation per row count, so no row is wasted.
using GemmMicroKernel = void (*)(const GemmTile&);

// How an s8 kernel reads the quantized activations (GemmTile::a): the int8 values; the
// int8 values and their magnitudes (GemmTile::a_abs, for vpmaddubsw's unsigned operand);
// the same values widened to int16 (for vpmaddwd); or the int8 values as plain rows
// ([mr][kc], for AMX's tile loads) instead of in groups of 4 k.
enum class S8ActivationForm { s8, s8_with_abs, s16, rows };

// One GEMM element type's micro-kernels: MR×NR register tile, every row count 1…MR.
//
// Every output element of the fp32 and bf16 kernels is summed in one order — k = 0, 1,
// 2, … into a single accumulator, then the epilogue — whatever the tile's row count,
// so a row's result never depends on the tile it falls in: on how many rows share the
// GEMM, where the row sits among them, or how threads split them (a sentence's result
// is the same bits whatever its batch). A tile of few rows holds too few accumulators
// in one panel to hide the FMA latency (MR·NV < 8); rather than split k over
// interleaved partial sums, which round differently from a tall tile's single sum, it
// widens over panels[mr − 1] adjacent panels. s8 sums are exact int32, in any order.
struct GemmKernels {
  int mr = 0;                       // rows per micro-tile
  int nr = 0;                       // panel width
  const char* name = "";            // e.g. "f32_gemm_14x32_avx512"
  GemmMicroKernel kernels[kGemmMaxMr][kGemmMaxPanels] = {};  // [mr − 1][panels − 1]
  int panels[kGemmMaxMr] = {};      // [mr − 1]: panels per call (1: tall tiles, and s8)
  int s8_weight_offset = 0;         // s8 only: panels hold q + this (128: u8, for vpdpbusd)
  S8ActivationForm s8_a_form = S8ActivationForm::s8;  // s8 only: how the kernels read A
  // s8 only: the kernels take a run of GemmTile::panels panels (panel_stride bytes apart,
  // nr columns in all) in one call, so they can overlap one panel's stores with the
  // next's products (AMX) or skip the driver's work per panel (AVX2); the driver then
  // hands each row tile a block's panels at once.
  bool s8_panel_runs = false;
  // s8 only: whether products of few rows (quantized A within gemm_s8.cpp's
  // kFewRowABytes) run panel-outer — each weight panel through every row tile while it
  // is in L1 — rather than in the block order (row tile outer, a block of panels from
  // L2). Kernels whose in-situ measurements favour the block order at every M say false.
  bool s8_few_row_order = true;
  // s8 only: the kernels' last step alone — mr rows of dequantized sums (nr floats
  // apart) stored through the tile's epilogue (accumulate, bias, activation, residual)
  // exactly as a kernel stores its own. The driver finishes two-term rows with it.
  void (*s8_store_sums)(const float* sums, int mr, const GemmTile& t) = nullptr;
};

// Rows [0, mr) of A (row stride lda) × columns [k0, k0 + kc) packed for a bf16 kernel:
// rounded to bf16 (nearest even), rows kGemmAStride floats apart, an odd kc padded with
// one zero.
using Bf16PackA = void (*)(const float* a, index_t lda, int mr, index_t k0, index_t kc, void* dst);

// Rows [0, mr) of A (row stride lda, k columns) quantized for an s8 kernel, one scale
// per row: q = nearest-even(a·(levels / max|a_row|)) ∈ [−levels, levels], written as
// [kp/4][mr][4] int8 — or as mr rows of kp where the table's s8_a_form is `rows` — (k <
// kp zero-padded). row_scale = alpha·max|a_row| / levels (NaN
// when the row holds a NaN or inf, so the output says so), row_offset = 128·Σ_k q.
// Every ISA's quantizer gives the same q, scales and offsets (levels: kS8ActivationLevels).
using S8QuantizeA = void (*)(const float* a, index_t lda, int mr, index_t k, index_t kp, int levels, float alpha,
                            std::int8_t* dst, float* row_scale, std::int32_t* row_offset);
// The same quantization written as int16 in the same layout, for kernels that read A in
// S8ActivationForm::s16 (no int8 copy then: the driver skips the widening pass).
using S8QuantizeAWide = void (*)(const float* a, index_t lda, int mr, index_t k, index_t kp, int levels, float alpha,
                                 std::int16_t* dst, float* row_scale, std::int32_t* row_offset);

// One query tile of one (batch, head) against all its visible keys.
struct AttentionTile {
  index_t head_dim = 0;
  const float* q = nullptr;  // first query row of the tile
  index_t q_stride = 0;
  int q_rows = 0;            // ≤ attention_query_tile (attention_short_keys: ≤ kAttentionQueryGroup)
  const float* k = nullptr;  // key 0
  const float* v = nullptr;  // value 0
  index_t k_stride = 0, v_stride = 0;
  index_t kv_len = 0;        // keys past this are padding
  // Key j is visible to tile row r iff j ≤ r + causal_shift; non-causal: a huge shift.
  index_t causal_shift = 0;
  float scale = 0.0f;
  float* out = nullptr;
  index_t out_stride = 0;
  // Relative-position terms (attention_tile_positions only): row r of the tile sits at
  // position q_position + r; position_bias is this head's row of positions->bias.
  const RelativePositions* positions = nullptr;
  const float* position_bias = nullptr;
  index_t q_position = 0;
  // The rows the calling thread's next item reads (same strides; null: none), which
  // attention_short_keys prefetches while it computes: a fused QKV projection's output
  // for a batch (MiniLM: 32 × 54 tokens × 1152 floats, 8 MB) is in L3 or memory, and
  // its rows, 4.5 KB apart, defeat the hardware prefetchers.
  const float* next_q = nullptr;
  const float* next_k = nullptr;
  const float* next_v = nullptr;
  int next_q_rows = 0;
  index_t next_kv_len = 0;
};

// One decoding query (row i, head h) against its cached keys.
struct DecodeQuery {
  index_t head_dim = 0;
  const float* q = nullptr;
  const KvCacheView* k = nullptr;
  const KvCacheView* v = nullptr;
  index_t row = 0, head = 0, kv_len = 0;
  float scale = 0.0f;
  float* out = nullptr;
  // Relative-position terms (attention_decode_positions only): the query sits at
  // position q_position; position_bias is this head's row of positions->bias.
  const RelativePositions* positions = nullptr;
  const float* position_bias = nullptr;
  index_t q_position = 0;
};

struct KernelTable {
  Isa isa = Isa::sse2;
  const char* name = "";
  int float_lanes = 4;  // floats per vector register of the fp32 kernels

  GemmKernels f32;
  GemmKernels bf16;
  Bf16PackA bf16_pack_a;
  GemmKernels s8;
  S8QuantizeA s8_quantize_a;
  S8QuantizeAWide s8_quantize_a_s16 = nullptr;  // where s8.s8_a_form is s16 and a direct one exists
  // Where the s8 kernels do not suit a product — AMX: K (padded) not a multiple of their
  // 64-byte step, or fewer rows than fill its tiles usefully — the table whose s8 kernels
  // compute it instead: one that reads the same packed panels and gives the same bits.
  const KernelTable* s8_fallback = nullptr;
  index_t s8_min_rows = 0;    // a product of fewer rows goes to s8_fallback
  index_t s8_k_multiple = 4;  // one whose padded K is not a multiple of this, too
  // Called on each thread before its first s8 kernel of a product (AMX: the thread's tile
  // configuration is loaded afresh, whatever ran on the thread before). Null: nothing.
  void (*s8_begin_thread)() = nullptr;

  int attention_query_tile;         // queries per tile (vector lanes × vectors)
  void (*attention_tile)(const AttentionTile&);
  // The same for a tile of at most float_lanes queries (one vector): a sequence's last
  // tile, when that short, computes one vector of queries instead of attention_query_tile
  // / float_lanes. Every query's lane is computed alone, so its bits do not change.
  void (*attention_short_tile)(const AttentionTile&);
  // Up to kAttentionQueryGroup queries against at most kShortAttentionMaxKeys keys,
  // head_dim a multiple of 16 up to kShortAttentionMaxHeadDim, not causal, no
  // relative positions (kv_len: the keys; causal_shift unused).
  void (*attention_short_keys)(const AttentionTile&);
  void (*attention_decode)(const DecodeQuery&);
  // The same with relative-position terms (T5 bias, Shaw keys/values): separate entry
  // points so the plain kernels stay exactly as fast as without them.
  void (*attention_tile_positions)(const AttentionTile&);
  void (*attention_decode_positions)(const DecodeQuery&);

  // Row kernels: n elements. Pointers may alias as the public ops allow. `stream`: write
  // y with streaming stores (the caller fences; see streaming.hpp).
  RowMagnitude (*row_magnitude)(const float* x, index_t n);
  void (*layer_norm_row)(const float* x, const float* residual, float* sum_out, float* y,
                         const float* gamma, const float* beta, float eps, index_t n, bool stream);
  void (*rms_norm_row)(const float* x, const float* residual, float* sum_out, float* y,
                       const float* gamma, float eps, index_t n, bool stream);
  void (*activation_row)(Activation a, const float* x, float* y, index_t n, bool stream);
  void (*softmax_row)(const float* x, float* y, index_t n);
  void (*log_softmax_row)(const float* x, float* y, index_t n);
  index_t (*argmax_row)(const float* x, index_t n);  // lowest index of the maximum
  bool (*all_finite_row)(const float* x, index_t n);  // no NaN, no ±∞
  void (*top_k_row)(const float* x, index_t n, index_t k, std::int32_t* indices, float* values);
  // y = x·scale + add (add may be null): an embedding row. The narrow tables' rows are
  // widened first, to exactly the floats an fp32 table of their values holds: bf16 bits
  // shifted up, s8 as fl(q·factor).
  void (*scale_add_row)(const float* x, float scale, const float* add, float* y, index_t n);
  void (*bf16_scale_add_row)(const std::uint16_t* x, float scale, const float* add, float* y, index_t n);
  void (*s8_scale_add_row)(const std::int8_t* q, float factor, float scale, const float* add, float* y, index_t n);
  void (*f32_to_bf16_row)(const float* x, std::uint16_t* y, index_t n);  // nearest even

  // Throughput probes (kernels/rate_probes.hpp): iterations × 24 vector FMAs, or × 24
  // vdpbf16ps (null without AVX512_BF16).
  float (*fma_probe)(std::int64_t iterations);
  float (*bf16_dot_probe)(std::int64_t iterations) = nullptr;
};

// Tables compiled with each ISA's flags (kernels/isa_*.cpp).
const KernelTable& sse2_kernels();
const KernelTable& avx2_kernels();
const KernelTable& avx512_kernels();
const KernelTable& avx512_vnni_kernels();  // avx512's, with the VNNI s8 GEMM
const KernelTable& avx512_bf16_kernels();  // avx512_vnni's, with the BF16 bf16 GEMM
const KernelTable& avx512_amx_kernels();   // avx512_bf16's, with the AMX s8 GEMM

const KernelTable& kernels_for(Isa isa);  // throws if the machine cannot run it
const KernelTable& active_kernels();

}  // namespace attend::ops::detail
