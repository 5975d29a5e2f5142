// Scaled dot-product attention, softmax(scale·Q·Kᵀ + mask)·V, fused with online softmax.
//
// The fused kernel never materialises the T×S score matrix: it walks key tiles keeping
// a running max, running sum and a rescaled accumulator per query, so its extra memory
// is a few tiles per thread whatever T and S are. Q/K/V/O are strided views, so the
// output of a fused QKV projection is read in place and heads need no transposes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "attend/ops/types.hpp"

namespace attend::ops {

// A [batch, heads, seq, head_dim] view; the head_dim axis is contiguous.
template <class T>
struct HeadsView {
  T* data = nullptr;
  index_t batch_stride = 0;
  index_t head_stride = 0;
  index_t seq_stride = 0;

  HeadsView() = default;
  HeadsView(T* d, index_t batch, index_t head, index_t seq)
      : data(d), batch_stride(batch), head_stride(head), seq_stride(seq) {}
  template <class U>  // a mutable view converts to a read-only one
  HeadsView(const HeadsView<U>& o)
      : data(o.data), batch_stride(o.batch_stride), head_stride(o.head_stride), seq_stride(o.seq_stride) {}

  T* at(index_t b, index_t h, index_t t) const {
    return data + b * batch_stride + h * head_stride + t * seq_stride;
  }
};

// Relative-position terms of self-attention, taken inside the online softmax (no T×S
// matrix). They depend on the clipped distance between key j and query position i,
//   δ = clamp(j − i, −max_distance, max_distance),  at index δ + max_distance:
//   bias    score(i, j) += bias[h·bias_head_stride + δ + max_distance]   (T5's bucketed
//           bias, expanded per distance by the caller; not scaled)
//   keys    score(i, j) += scale · q_i · keys[δ + max_distance]         (Shaw et al. 2018)
//   values  out_i       += Σ_j p_ij · values[δ + max_distance]
// keys and values are [2·max_distance + 1, head_dim] (row stride head_dim), shared by
// all heads. Any of the three may be null.
struct RelativePositions {
  index_t max_distance = 0;
  const float* bias = nullptr;
  index_t bias_head_stride = 0;
  const float* keys = nullptr;
  const float* values = nullptr;

  bool active() const { return bias != nullptr || keys != nullptr || values != nullptr; }
};
// Largest max_distance with relative keys or values (the kernels keep one score and
// one weight per distance on the stack); a bias has no limit.
inline constexpr index_t kMaxRelativeKeyDistance = 128;

struct AttentionArgs {
  index_t batch = 0, heads = 0, q_len = 0, kv_len = 0, head_dim = 0;
  HeadsView<const float> q, k, v;
  HeadsView<float> out;
  // Valid keys per batch entry (≤ kv_len); keys at or past it are padding. null → kv_len.
  const std::int32_t* kv_lengths = nullptr;
  // Causal: key j is visible to query t iff j ≤ t + (kv_len − q_len) (bottom-right
  // aligned, so T = S is the usual triangle and T < S continues a cached prefix).
  bool causal = false;
  float scale = 0.0f;  // 0 → 1/√head_dim
  // Query t sits at position t + (kv_len − q_len), key j at j (aligned like `causal`).
  RelativePositions positions;
};
// A query row that sees no key at all (length 0) gets an all-zero output.

void attention(const AttentionArgs& args, int threads);

// Extra memory of the fused kernels: a few tiles on each thread's stack, whatever T and
// S are (attention and attention_decode allocate nothing).
std::size_t attention_stack_bytes_per_thread();

// The unfused path: S = scale·Q·Kᵀ (GEMM), mask, row softmax, O = P·V (GEMM), one
// batch × head at a time. It needs q_len × kv_len floats of scratch per thread plus
// GEMM packing space: attention_unfused_scratch_floats tells how many. It exists as
// the yardstick the fused kernel is measured and checked against.
index_t attention_unfused_scratch_floats(const AttentionArgs& args, int threads);
void attention_unfused(const AttentionArgs& args, std::span<float> scratch, int threads);

// Element type of a decoding cache. bf16 halves the bytes the decoding step streams
// (its attention reads every cached key and value once per token, so it runs at the
// memory bandwidth); the kernels widen each element to fp32 exactly and compute in fp32,
// so the only difference from an fp32 cache is the rounding of what was stored
// (convert_to_bf16, attend/ops/bf16.hpp).
enum class KvType : std::uint8_t { f32, bf16 };
const char* kv_type_name(KvType t);  // "f32", "bf16"
inline index_t kv_type_bytes(KvType t) { return t == KvType::bf16 ? 2 : 4; }

// Keys or values of a decoding cache, addressed through a row table so that beam
// search can reorder hypotheses without copying the cache:
//   element (query row i, key position j, head h) is at
//   data + j·position_stride + row·row_stride + h·head_stride + [0, head_dim)
//   (strides in elements of `type`) where row = row_table[i·row_table_ld + j]; with
//   row_table_ld = 0 the row is row_table[i] for every j, and with row_table = null it is i.
struct KvCacheView {
  const void* data = nullptr;
  index_t position_stride = 0;
  index_t row_stride = 0;
  index_t head_stride = 0;
  const std::int32_t* row_table = nullptr;
  index_t row_table_ld = 0;
  KvType type = KvType::f32;

  index_t offset(index_t i, index_t j, index_t h) const {
    const index_t row = row_table == nullptr ? i : row_table_ld == 0 ? row_table[i] : row_table[i * row_table_ld + j];
    return j * position_stride + row * row_stride + h * head_stride;
  }
  // The head vector as E (float for f32, std::uint16_t bits for bf16); E must match type.
  template <class E>
  const E* at(index_t i, index_t j, index_t h) const {
    return static_cast<const E*>(data) + offset(i, j, h);
  }
};

// Where store_kv writes: head h of row r goes to elements
//   data + r·row_stride + h·head_stride + [0, head_dim)   (strides in elements of `type`).
struct KvCacheTarget {
  void* data = nullptr;
  index_t row_stride = 0;
  index_t head_stride = 0;
  KvType type = KvType::f32;
};

// Writes x [rows, heads·head_dim] (head h in columns [h·head_dim, (h+1)·head_dim)) into
// a cache, converted to its type (bf16: nearest even). The strides choose the layout a
// KvCacheView then reads; a runtime keeps one head's positions contiguous (row_stride =
// head_dim), which lets the decoding step stream each head's keys instead of jumping a
// whole position's worth of bytes between them. Throws attend::Error on a bad shape.
void store_kv(ConstMatrix x, index_t head_dim, const KvCacheTarget& y, int threads);

// One query per row and head (the decoding step) against cached keys and values.
// q and out hold a row's heads side by side: head h at [h·head_dim, (h+1)·head_dim).
struct DecodeAttentionArgs {
  index_t rows = 0, heads = 0, head_dim = 0;
  const float* q = nullptr;
  index_t q_row_stride = 0;
  KvCacheView k, v;
  const std::int32_t* kv_lengths = nullptr;  // [rows] keys each row attends (required)
  float* out = nullptr;
  index_t out_row_stride = 0;
  float scale = 0.0f;  // 0 → 1/√head_dim
  // Row i's query sits at position query_positions[i], or (null) kv_lengths[i] − 1 —
  // the newest cached key, the decoding step; key j at j.
  RelativePositions positions;
  const std::int32_t* query_positions = nullptr;
};

void attention_decode(const DecodeAttentionArgs& args, int threads);

}  // namespace attend::ops
