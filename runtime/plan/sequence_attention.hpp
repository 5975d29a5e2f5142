// Self-attention over sequences packed one after another in a batch's rows (no padding:
// each sequence's queries see its own keys only), shared by the encoder-only executor
// and the encoder-decoder's encoder phase.
#pragma once

#include <algorithm>
#include <cstdint>

#include "attend/ops/attention.hpp"
#include "attend/ops/parallel_tasks.hpp"

namespace attend::runtime {

// Heads [h0, h0 + count) of the sequence in rows [at, at + n) of a fused QKV matrix (Q,
// K, V side by side, each `width` = heads × head_dim wide), read in place, its output in
// the same rows of `out`: batch 1, no padding.
inline ops::AttentionArgs sequence_heads(const ops::Matrix& qkv, const ops::Matrix& out, std::int64_t at, std::int64_t n,
                                         std::int64_t width, std::int64_t head_dim, std::int64_t h0, std::int64_t count) {
  ops::AttentionArgs a;
  a.batch = 1, a.heads = count, a.q_len = n, a.kv_len = n, a.head_dim = head_dim;
  const float* q = qkv.row(at) + h0 * head_dim;
  a.q = {q, 0, head_dim, qkv.ld};
  a.k = {q + width, 0, head_dim, qkv.ld};
  a.v = {q + 2 * width, 0, head_dim, qkv.ld};
  a.out = {out.row(at) + h0 * head_dim, 0, head_dim, out.ld};
  return a;
}

// Attention of `sequences` sequences of `heads` heads on `threads` threads, where
// args_of(i, h0, count) gives the ops::AttentionArgs of heads [h0, h0 + count) of
// sequence i (batch 1, its own length). One parallel region for them all, each thread a
// share of every sequence's heads (the extra heads of an uneven split rotating from
// sequence to sequence), rather than one region per sequence: a batch holds sequences
// of tens of tokens, each too little work to split well (ops splits a sequence's heads ×
// 32-query tiles, which for 54 tokens gave one thread all the 32-query tiles and the
// other the 22-query ones). A head's result is the same whichever thread computes it.
template <class ArgsOf>
void attention_over_sequences(std::int64_t sequences, std::int64_t heads, int threads, const ArgsOf& args_of) {
  const int nt = static_cast<int>(std::min<std::int64_t>(threads, heads));
  if (nt <= 1) {
    for (std::int64_t i = 0; i < sequences; ++i) ops::attention(args_of(i, 0, heads), 1);
    return;
  }
  ops::parallel_tasks(nt, [&](int t) {
    for (std::int64_t i = 0; i < sequences; ++i) {
      const std::int64_t turn = (t + i) % nt;  // this thread's share, rotated
      const std::int64_t h0 = turn * heads / nt, h1 = (turn + 1) * heads / nt;
      if (h1 > h0) ops::attention(args_of(i, h0, h1 - h0), 1);
    }
  });
}

}  // namespace attend::runtime
