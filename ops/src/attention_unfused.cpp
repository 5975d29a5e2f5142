// Unfused attention: S = scale·Q·Kᵀ, mask, softmax, O = P·V with the ordinary GEMM and
// softmax ops, one (batch, head) at a time. It needs the whole T×S score matrix; it is
// the yardstick for the fused kernel, not a path the runtime takes.
#include <algorithm>
#include <limits>

#include "attend/ops/attention.hpp"
#include "attend/ops/gemm.hpp"
#include "attend/ops/softmax.hpp"
#include "attention_check.hpp"
#include "parallel.hpp"

namespace attend::ops {
namespace {

index_t round_up(index_t v, index_t to) { return (v + to - 1) / to * to; }

index_t per_thread_floats(const AttentionArgs& x) {
  const Isa isa = active_isa();
  const index_t packing = std::max(matmul_scratch_floats(x.kv_len, x.head_dim, isa),   // K as [S, d]
                                   matmul_scratch_floats(x.head_dim, x.kv_len, isa));  // V as [S, d], kn
  return round_up(x.q_len * x.kv_len, 16) + round_up(packing, 16);
}

int unfused_threads(const AttentionArgs& x, int threads) {
  return static_cast<int>(std::clamp<index_t>(x.batch * x.heads, 1, threads));
}

}  // namespace

index_t attention_unfused_scratch_floats(const AttentionArgs& x, int threads) {
  return per_thread_floats(x) * unfused_threads(x, threads);
}

void attention_unfused(const AttentionArgs& x, std::span<float> scratch, int threads) {
  constexpr const char* op = "attention_unfused";
  detail::check_attention(op, x, threads);
  ATTEND_OP_CHECK(!x.positions.active(), op, "relative positions are taken by the fused kernel only (ops::attention)");
  if (x.batch * x.heads * x.q_len == 0) return;
  const index_t per_thread = per_thread_floats(x);
  const int nt = unfused_threads(x, threads);
  ATTEND_OP_CHECK(static_cast<index_t>(scratch.size()) >= per_thread * nt, op, "scratch holds ", scratch.size(),
                  " floats, needs ", per_thread * nt);
  const float scale = detail::attention_scale(x.scale, x.head_dim);
  const index_t T = x.q_len, S = x.kv_len, d = x.head_dim;

  detail::parallel_chunks(nt, x.batch * x.heads, [&](index_t first, index_t last) {
    const index_t slot = nt == 1 ? 0 : detail::thread_index();
    float* scores = scratch.data() + slot * per_thread;
    const std::span<float> packing(scores + round_up(T * S, 16), per_thread - round_up(T * S, 16));
    for (index_t bh = first; bh < last; ++bh) {
      const index_t b = bh / x.heads, h = bh % x.heads;
      const index_t len = x.kv_lengths ? x.kv_lengths[b] : S;
      Matrix s(scores, T, S);
      Matrix o(x.out.at(b, h, 0), T, d, x.out.seq_stride);
      if (S > 0) matmul(ConstMatrix(x.q.at(b, h, 0), T, d, x.q.seq_stride),
                        ConstMatrix(x.k.at(b, h, 0), S, d, x.k.seq_stride), true, s, scale, packing, 1);
      for (index_t t = 0; t < T; ++t) {
        const index_t visible = std::clamp<index_t>(x.causal ? t + S - T + 1 : S, 0, len);
        float* row = s.row(t);
        std::fill(row + visible, row + S, -std::numeric_limits<float>::infinity());
        if (visible > 0) {
          softmax(ConstMatrix(row, 1, S), Matrix(row, 1, S), 1);
        } else {
          std::fill(row, row + S, 0.0f);  // no visible key: zero output, as the fused kernel
        }
      }
      if (S > 0) {
        matmul(s, ConstMatrix(x.v.at(b, h, 0), S, d, x.v.seq_stride), false, o, 1.0f, packing, 1);
      } else {
        for (index_t t = 0; t < T; ++t) std::fill(o.row(t), o.row(t) + d, 0.0f);
      }
    }
  });
}

}  // namespace attend::ops
